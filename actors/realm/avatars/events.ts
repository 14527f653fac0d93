import type { Delivery } from '../../events.ts';
import type { WireEventOf } from '../../wire/events.ts';
import { botAccountEvent } from '../bots/events.ts';
import type { RealmState, UserProfile } from '../state.ts';
import { avatarFields, fullAvatarUrl } from './urls.ts';

/**
 * A user's avatar changed (or, for a default avatar, the initials it shows): a `realm_user` update with every
 * avatar field, to everyone in the realm (all of whom may see every user here), and a bot's administrators get
 * its new URL as a `realm_bot` update.
 */
export function avatarEvents(state: RealmState, user: UserProfile): Delivery[] {
  return [
    { realmId: state.realmId, audience: { kind: 'realm' }, event: { type: 'realm_user', op: 'update', person: { user_id: user.userId, ...avatarFields(user) } } satisfies WireEventOf<'realm_user', 'update'> },
    ...botAccountEvent(state, user.userId, 'update', { avatar_url: fullAvatarUrl(user) }),
  ];
}
