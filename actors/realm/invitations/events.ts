import type { Delivery } from '../../events.ts';
import type { WireEventOf } from '../../wire/events.ts';
import type { RealmState } from '../state.ts';
import type { InvitationChange } from './changes.ts';
import { invitationWatchers } from './views.ts';

/**
 * Every change to the invitations is one `invites_changed` event (it carries nothing: clients fetch
 * GET /invites again), to the administrators and the invitations' makers.
 */
export function invitationEvents(state: RealmState, change: InvitationChange): Delivery[] {
  // GET /invites listed none of them but those to an address that has since got an account, which could only
  // fail; the invitations made in the same command tell the administrators to fetch the list again anyway.
  if (change.type === 'invitations.forgotten') return [];
  const store = state.invitations;
  const makers =
    change.type === 'invitations.created'
      ? change.invitations.map((invitation) => invitation.invitedBy)
      : [(change.type === 'invitation.revoked' && change.multiuse ? store.links : store.emails).get(change.id)?.invitedBy ?? 0];
  const userIds = [...new Set(makers.flatMap((maker) => invitationWatchers(state, maker)))];
  return userIds.length ? [{ realmId: state.realmId, audience: { kind: 'users', userIds }, event: { type: 'invites_changed' } satisfies WireEventOf<'invites_changed'> }] : [];
}
