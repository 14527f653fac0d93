import { findUserByEmail, Role, type RealmState, type UserProfile } from './state.ts';

/** The values of the user setting `email_address_visibility`, as the original numbers them. */
export const EmailVisibility = {
  everyone: 1,
  members: 2,
  admins: 3,
  nobody: 4,
  moderators: 5,
} as const;
export type EmailVisibility = (typeof EmailVisibility)[keyof typeof EmailVisibility];

/** A user's setting; bots always show their address, as in the original. */
export function visibilityOf(user: UserProfile): number {
  return user.isBot ? EmailVisibility.everyone : (user.emailAddressVisibility ?? EmailVisibility.everyone);
}

/**
 * The API address of a user, the same for every viewer (the original's "display email"): the real address
 * when its owner lets everyone see it, else the stand-in `user{id}@{realm host}`, which works wherever the
 * API takes an address but delivers nothing.
 */
export function displayEmail(state: RealmState, user: UserProfile): string {
  return visibilityOf(user) === EmailVisibility.everyone ? user.email : standInEmail(state, user.userId);
}

export const standInEmail = (state: RealmState, userId: number) => `user${userId}@${state.emailDomain}`;

/** Whether `viewer` may read `target`'s real address: always its own; otherwise as the target's setting says. */
export function mayReadDeliveryEmail(viewer: UserProfile | undefined, target: UserProfile): boolean {
  if (viewer?.userId === target.userId) return true;
  const visibility = visibilityOf(target);
  if (visibility === EmailVisibility.everyone) return true;
  if (!viewer) return false;
  return visibilityAllows(visibility, viewer.role);
}

/** Whether a viewer of `role` may read the address of a user whose setting is `visibility` (not the user itself). */
export function visibilityAllows(visibility: number, role: Role): boolean {
  switch (visibility) {
    case EmailVisibility.everyone:
      return true;
    case EmailVisibility.members:
      return role <= Role.member;
    case EmailVisibility.moderators:
      return role <= Role.moderator;
    case EmailVisibility.admins:
      return role <= Role.administrator;
    default:
      return false;
  }
}

/** The two addresses of a user object as `viewerId` sees it: `delivery_email` is null where it may not read it. */
export function addressesFor(state: RealmState, viewerId: number, target: UserProfile): { email: string; delivery_email: string | null } {
  const viewer = viewerId === target.userId ? target : state.users.get(viewerId);
  return { email: displayEmail(state, target), delivery_email: mayReadDeliveryEmail(viewer, target) ? target.email : null };
}

const STAND_IN = /^user(\d+)@(.+)$/i;

/**
 * The user an address names for `viewerId`: the stand-in `user{id}@{realm host}` names any user, the real
 * address only a user whose address the viewer may read, so that a lookup is no oracle of who has an account.
 */
export function findUserByAddress(state: RealmState, viewerId: number, address: string): UserProfile | undefined {
  const standIn = STAND_IN.exec(address);
  if (standIn && standIn[2]!.toLowerCase() === state.emailDomain.toLowerCase()) {
    const user = state.users.get(Number(standIn[1]));
    if (user) return user;
  }
  const user = findUserByEmail(state, address);
  if (!user) return undefined;
  const viewer = viewerId === user.userId ? user : state.users.get(viewerId);
  return mayReadDeliveryEmail(viewer, user) ? user : undefined;
}
