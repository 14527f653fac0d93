import { groupView } from '../../realm/groups/views.ts';
import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';

/**
 * fetch type `realm_user_groups`: every group; deactivated ones only for clients that declare
 * `include_deactivated_groups`, as their events are shaped (queue/capabilities.ts).
 */
export const userGroupsState: Builder = ({ realm }, { capabilities }) => {
  const withDeactivated = capabilities?.include_deactivated_groups === true;
  return {
    realm_user_groups: [...realm.groups.values()].filter((group) => withDeactivated || !group.deactivated).map((group) => groupView(realm, group)),
  } satisfies WireRegisterKeys<'realm_user_groups'>;
};
