import type { Delivery } from '../../events.ts';
import type { WireEventOf } from '../../wire/events.ts';
import { humanAdministrators, type RealmState } from '../state.ts';
import { exportsView } from './views.ts';

/** The whole list after each change, to the organization's administrators, as the original sends it. */
export function realmExportEvents(state: RealmState): Delivery[] {
  const userIds = humanAdministrators(state);
  if (userIds.length === 0) return [];
  return [{ realmId: state.realmId, audience: { kind: 'users', userIds }, event: { type: 'realm_export', exports: exportsView(state) } satisfies WireEventOf<'realm_export'> }];
}
