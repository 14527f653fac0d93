import { badRequest, notAdmin } from '../errors.ts';
import type { Caller } from './commands.ts';
import { isAdmin, type RealmState, type UserProfile } from './state.ts';

/**
 * The user the caller acts on as its administrator (the original's `access_user_by_id(for_admin=True)`):
 * an organization administrator administers everyone, a bot's owner that bot. Deactivated users are out of
 * reach, as they are for the user actors that hold what is changed.
 */
export function administeredUser(state: RealmState, caller: UserProfile, targetId: number): UserProfile {
  const target = state.users.get(targetId);
  if (!target || !target.isActive) throw badRequest('No such user');
  const owns = target.isBot && target.bot?.ownerId === caller.userId;
  if (!owns && !isAdmin(caller)) throw badRequest('Insufficient permission');
  return target;
}

/** The caller, if it is an administrator (null: the operator, who may do anything); refuses anyone else. */
export function requireAdmin(state: RealmState, caller: Caller): UserProfile | null {
  if (caller.kind === 'operator') return null;
  const user = state.users.get(caller.userId);
  if (!user || !isAdmin(user)) throw notAdmin();
  return user;
}
