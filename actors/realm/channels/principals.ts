import { badRequest } from '../../errors.ts';
import { findUserByAddress } from '../email-visibility.ts';
import { findUserByEmail, type RealmState, type UserProfile } from '../state.ts';
import { channelKey } from './state.ts';

/** A user named by a subscription request (`principals`): an id (preferred) or an address the caller may read. */
export type Principal = number | string;

/** The active user a principal names, as `viewerId` sees addresses (email-visibility.ts); the operator reads all. */
export function findPrincipal(state: RealmState, principal: Principal, viewerId: number | null): UserProfile | undefined {
  if (typeof principal === 'number') return activeOnly(state.users.get(principal));
  if (viewerId === null) return activeOnly(findUserByEmail(state, principal));
  return activeOnly(findUserByAddress(state, viewerId, principal));
}

const activeOnly = (user: UserProfile | undefined) => (user?.isActive ? user : undefined);

/** The principals' user ids; an unknown or deactivated one refuses the request. */
export function resolvePrincipals(state: RealmState, principals: readonly Principal[], viewerId: number | null): number[] {
  return principals.map((principal) => {
    const user = findPrincipal(state, principal, viewerId);
    if (!user) throw badRequest(`No such user: ${principal}`);
    return user.userId;
  });
}

/** The channels' ids by name; an unknown name refuses the request. */
export function channelIdsByName(state: RealmState, names: readonly string[]): number[] {
  return names.map((name) => {
    const id = state.channelIdByName.get(channelKey(name));
    if (id === undefined) throw badRequest(`Invalid channel name '${name}'`);
    return id;
  });
}
