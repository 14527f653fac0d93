import type { ApiEvent, Delivery } from '../events.ts';
import type { PartialWithout, WireEventOf } from '../wire/events.ts';
import type { RealmChange } from './changes.ts';
import { displayEmail, EmailVisibility, mayReadDeliveryEmail, visibilityAllows } from './email-visibility.ts';
import type { RealmState } from './state.ts';
import { usersWhoMayAccess } from './user-access.ts';

type AddressChange = Extract<RealmChange, { type: 'user.email_changed' | 'user.email_visibility_changed' }>;

type Person = PartialWithout<WireEventOf<'realm_user', 'update'>['person'], 'user_id'>;

const update = (userId: number, person: Person): ApiEvent => ({ type: 'realm_user', op: 'update', person: { user_id: userId, ...person } });

/**
 * What a user's address change announces, as the original does. A new real address goes to those who may
 * read it (the user included), and the API address to everyone when it is that real address. A new
 * `email_address_visibility` gives the real address to those who gain the right to read it and null to those
 * who lose it (not to the user, who keeps it); when the API address switches between the real one and the
 * stand-in, everyone learns the new one.
 */
export function addressEvents(state: RealmState, change: AddressChange): Delivery[] {
  const user = state.users.get(change.userId);
  if (!user) return [];
  const to = (userIds: number[], event: ApiEvent): Delivery[] => (userIds.length ? [{ realmId: state.realmId, audience: { kind: 'users', userIds }, event }] : []);
  // A guest limited by can_access_all_users_group hears nothing of a user it may not access (user-access.ts).
  const accessing = usersWhoMayAccess(state, user);
  const mayAccess = accessing && new Set(accessing);
  const newEmailEvent = update(user.userId, { new_email: displayEmail(state, user) });
  const newEmail: Delivery[] = accessing ? to(accessing, newEmailEvent) : [{ realmId: state.realmId, audience: { kind: 'realm' }, event: newEmailEvent }];
  const candidates = [...state.users.values()].filter((other) => other.isActive && (!mayAccess || mayAccess.has(other.userId)));
  if (change.type === 'user.email_changed') {
    const readers = candidates.filter((other) => mayReadDeliveryEmail(other, user)).map((other) => other.userId);
    return [...to(readers, update(user.userId, { delivery_email: user.email })), ...(displayEmail(state, user) === user.email ? newEmail : [])];
  }
  if (!user.isActive) return [];
  const gained: number[] = [];
  const lost: number[] = [];
  for (const other of candidates) {
    if (other.userId === user.userId) continue;
    const before = visibilityAllows(change.previous, other.role);
    const after = visibilityAllows(change.visibility, other.role);
    if (after && !before) gained.push(other.userId);
    else if (before && !after) lost.push(other.userId);
  }
  const apiAddressChanged = change.previous === EmailVisibility.everyone || change.visibility === EmailVisibility.everyone;
  return [
    ...to(gained, update(user.userId, { delivery_email: user.email })),
    ...to(lost, update(user.userId, { delivery_email: null })),
    ...(apiAddressChanged ? newEmail : []),
  ];
}
