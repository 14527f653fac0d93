import type { ApiEvent, Delivery } from '../events.ts';
import type { RealmState, UserProfile } from '../realm/state.ts';
import { usersWhoMayAccess } from '../realm/user-access.ts';
import type { PresenceEntry } from './store.ts';
import { legacyEventPresence, modernPresence } from './views.ts';
import { displayEmail } from '../realm/email-visibility.ts';

/**
 * Above this many active users a realm gets no `presence` events; its clients learn presence by polling
 * POST /users/me/presence. Each event goes to everyone and users come online at a rate that grows with the
 * realm too, so the work is quadratic, and in a big realm few people watch the user list (the original's
 * USER_LIMIT_FOR_SENDING_PRESENCE_UPDATE_EVENTS).
 */
export const PRESENCE_EVENT_USER_LIMIT = 100;

/** Counts active users only up to the limit, so a big realm costs a bounded scan. */
function tooManyForEvents(realm: RealmState): boolean {
  if (realm.users.size <= PRESENCE_EVENT_USER_LIMIT) return false;
  let active = 0;
  for (const user of realm.users.values()) if (user.isActive && ++active > PRESENCE_EVENT_USER_LIMIT) return true;
  return false;
}

/**
 * The `presence` event announcing that a user came online, to the whole realm. It carries the fields of
 * every shape (legacy with email, slim without, and the modern `presences` map); the queue registry gives
 * each queue its shape (queue/capabilities.ts).
 */
export function presenceDeliveries(realm: RealmState, user: UserProfile, entry: PresenceEntry, now: number): Delivery[] {
  if (tooManyForEvents(realm)) return [];
  const event: ApiEvent = {
    type: 'presence',
    user_id: user.userId,
    email: displayEmail(realm, user),
    server_timestamp: now,
    presence: legacyEventPresence(entry, user),
    presences: { [String(user.userId)]: modernPresence(entry, user) },
  };
  // A guest limited by can_access_all_users_group hears only of the users it may access.
  const limitedTo = usersWhoMayAccess(realm, user);
  return [{ realmId: realm.realmId, audience: limitedTo ? { kind: 'users', userIds: limitedTo } : { kind: 'realm' }, event }];
}
