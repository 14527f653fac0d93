import type { WireEventOf } from '../wire/events.ts';
import { allowed, systemGroupId } from './permissions.ts';
import { Role, type RealmState, type UserProfile } from './state.ts';
import type { ApiEvent, Delivery } from '../events.ts';
import { defaultAvatarPath } from './avatars/urls.ts';
import { personView } from './views.ts';
import { addressesFor, EmailVisibility, findUserByAddress, mayReadDeliveryEmail, visibilityOf } from './email-visibility.ts';

/**
 * Which users a user may know about. `can_access_all_users_group` is `role:everyone` or `role:members`
 * (settings/decide.ts), so only guests can be limited; a limited guest accesses itself, every bot, the
 * users who share one of its channels, and those it has direct messages with, as in the original.
 */
export function canAccessAllUsers(state: RealmState, userId: number): boolean {
  const user = state.users.get(userId);
  if (!user || user.role !== Role.guest) return true;
  return allowed(state, 'can_access_all_users_group', userId);
}

/** Whether guests are limited: new people are then announced to guests apart (realm/events.ts). */
export function accessIsLimited(state: RealmState): boolean {
  return state.permissions.can_access_all_users_group !== systemGroupId(state, 'role:everyone');
}

/** The people (not bots: those are always accessible) a limited user can access. */
export function accessiblePeople(state: RealmState, userId: number): Set<number> {
  const out = new Set<number>([userId]);
  for (const channelId of state.subscribedBy.get(userId) ?? []) {
    for (const subscriber of state.subscriptions.get(channelId)?.keys() ?? []) out.add(subscriber);
  }
  for (const key of state.messages.conversationsOf.get(userId) ?? []) {
    for (const participant of key.split(',')) out.add(Number(participant));
  }
  return out;
}

/**
 * The people a viewer may access when it is limited, or null when it may access everyone: the filter for
 * lists of users (bots are always accessible and not in the set).
 */
export function accessFilter(state: RealmState, viewerId: number): Set<number> | null {
  return canAccessAllUsers(state, viewerId) ? null : accessiblePeople(state, viewerId);
}

/** Whether a list filtered by `accessFilter` shows `user` as the placeholder (`unknownUserView`). */
export const hiddenBy = (accessible: Set<number> | null, user: UserProfile): boolean => accessible !== null && !user.isBot && !accessible.has(user.userId);

/** The active users who may access `target`, or null when that is every one of them. */
export function usersWhoMayAccess(state: RealmState, target: UserProfile): number[] | null {
  if (target.isBot || !accessIsLimited(state)) return null;
  const out: number[] = [];
  for (const other of state.users.values()) {
    if (other.isActive && (canAccessAllUsers(state, other.userId) || sharesWith(state, other.userId, target.userId))) out.push(other.userId);
  }
  return out;
}

/** Whether `viewerId` may access `target` (the check for one user; `accessiblePeople` for many). */
export function canAccessUser(state: RealmState, viewerId: number, target: UserProfile): boolean {
  return target.isBot || canAccessAllUsers(state, viewerId) || sharesWith(state, viewerId, target.userId);
}

/** Whether `personId` is among `userId`'s `accessiblePeople`, without building the set (one index lookup per channel). */
function sharesWith(state: RealmState, userId: number, personId: number): boolean {
  if (userId === personId) return true;
  for (const channelId of state.subscribedBy.get(userId) ?? []) if (state.subscriptions.get(channelId)?.has(personId)) return true;
  for (const key of state.messages.conversationsOf.get(userId) ?? []) {
    if (key.split(',').some((participant) => Number(participant) === personId)) return true;
  }
  return false;
}

/** The name the original gives a user one may not access. */
const INACCESSIBLE_USER_NAME = 'Unknown user';

/**
 * `realm_user` remove: what a limited guest gets when it loses access to a person, after leaving channels
 * (`removed`: who left which channel) it shared with them only, as in the original. Both sides are looked
 * at: the guests who left, and the limited guests still in a channel that people left. Only pairs with a
 * limited guest are checked, so that a large channel's unsubscriptions cost one lookup per member.
 */
export function accessLostDeliveries(state: RealmState, removed: readonly { userId: number; channelId: number }[]): Delivery[] {
  if (!accessIsLimited(state)) return [];
  const limitedMemo = new Map<number, boolean>();
  const limited = (userId: number) => {
    let known = limitedMemo.get(userId);
    if (known === undefined) limitedMemo.set(userId, (known = !canAccessAllUsers(state, userId)));
    return known;
  };
  const lost = new Map<number, Set<number>>();
  const check = (viewerId: number, personId: number) => {
    const person = state.users.get(personId);
    if (viewerId === personId || !person || person.isBot || sharesWith(state, viewerId, personId)) return;
    let people = lost.get(viewerId);
    if (!people) lost.set(viewerId, (people = new Set()));
    people.add(personId);
  };
  const leaversByChannel = new Map<number, number[]>();
  for (const { userId, channelId } of removed) {
    let leavers = leaversByChannel.get(channelId);
    if (!leavers) leaversByChannel.set(channelId, (leavers = []));
    leavers.push(userId);
  }
  for (const [channelId, leavers] of leaversByChannel) {
    const remaining = [...(state.subscriptions.get(channelId)?.keys() ?? [])];
    for (const leaver of leavers) {
      if (limited(leaver)) for (const other of [...remaining, ...leavers]) check(leaver, other);
    }
    for (const member of remaining) {
      if (limited(member)) for (const leaver of leavers) check(member, leaver);
    }
  }
  return [...lost].flatMap(([viewerId, people]) =>
    [...people].map((personId): Delivery => ({
      realmId: state.realmId,
      audience: { kind: 'users', userIds: [viewerId] },
      event: { type: 'realm_user', op: 'remove', person: { user_id: personId, full_name: INACCESSIBLE_USER_NAME } } satisfies WireEventOf<'realm_user', 'remove'>,
    })));
}

/**
 * The user an id or an email names, if the viewer may access them. To a limited guest a user it may not
 * access is not there at all, whatever the path that names it (a lookup, an avatar, a narrow, a typing
 * notification): no answer tells whether an address has an account. An address is the stand-in or a real
 * address the viewer may read (email-visibility.ts).
 */
export function findAccessibleUser(state: RealmState, viewerId: number, idOrEmail: string | number): UserProfile | undefined {
  const text = String(idOrEmail).trim();
  const user = /^\d+$/.test(text) ? state.users.get(Number(text)) : findUserByAddress(state, viewerId, text);
  return user && canAccessUser(state, viewerId, user) ? user : undefined;
}

/**
 * The placeholder a client without `user_list_incomplete` gets for a user it may not access: the usual
 * user object whose only real content is the id. Its address is in the reserved `.invalid` domain, so that
 * it is never taken for a real one.
 */
export function unknownUserView(userId: number) {
  const email = `user${userId}@unknown.invalid`;
  return {
    user_id: userId,
    email,
    delivery_email: null,
    full_name: INACCESSIBLE_USER_NAME,
    date_joined: new Date(0).toISOString(),
    is_active: true,
    is_owner: false,
    is_admin: false,
    is_guest: false,
    is_bot: false,
    role: Role.member,
    timezone: '',
    avatar_url: `${defaultAvatarPath({ userId, fullName: INACCESSIBLE_USER_NAME })}?version=1`,
    avatar_version: 1,
    profile_data: {},
  };
}

/** Marks a placeholder `realm_user` add event (queue/capabilities.ts drops it for `user_list_incomplete`). */
export const INACCESSIBLE_USER = 'inaccessible_user' as const;

/**
 * A new user announced (`realm_user` add): to everyone, unless guests are limited and the user is a person;
 * then those guests get the placeholder instead, and those whose client declared `user_list_incomplete`
 * nothing. A new person shares no channel with a guest yet, so every limited guest is among them, as in
 * the original. Its real address goes only to those its setting lets read it; the others get null.
 */
export function userAddedDeliveries(state: RealmState, user: UserProfile): Delivery[] {
  const addresses = addressesFor(state, user.userId, user);
  const event: WireEventOf<'realm_user', 'add'> = { type: 'realm_user', op: 'add', person: personView(user, addresses, false) };
  const limitedAccess = !user.isBot && accessIsLimited(state);
  if (!limitedAccess && visibilityOf(user) === EmailVisibility.everyone) return [{ realmId: state.realmId, audience: { kind: 'realm' }, event }];
  const limited: number[] = [];
  const readers: number[] = [];
  const others: number[] = [];
  for (const other of state.users.values()) {
    if (!other.isActive) continue;
    if (limitedAccess && other.userId !== user.userId && !canAccessAllUsers(state, other.userId)) limited.push(other.userId);
    else (mayReadDeliveryEmail(other, user) ? readers : others).push(other.userId);
  }
  const withoutAddress: ApiEvent = { ...event, person: { ...event.person, delivery_email: null } };
  const placeholder: ApiEvent = { type: 'realm_user', op: 'add', person: unknownUserView(user.userId), [INACCESSIBLE_USER]: true };
  const out: Delivery[] = [{ realmId: state.realmId, audience: { kind: 'users', userIds: readers }, event }];
  if (others.length) out.push({ realmId: state.realmId, audience: { kind: 'users', userIds: others }, event: withoutAddress });
  if (limited.length) out.push({ realmId: state.realmId, audience: { kind: 'users', userIds: limited }, event: placeholder });
  return out;
}
