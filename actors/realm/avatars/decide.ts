import { badRequest, notAdmin } from '../../errors.ts';
import { isAdmin, type RealmState, type UserProfile } from '../state.ts';
import type { AvatarChange } from './changes.ts';
import type { AvatarCommand } from './commands.ts';

export const avatarChangesDisabled = () => badRequest('Avatar changes are disabled in this organization.');

/** The realm may forbid avatar changes (`avatar_changes_disabled`); its administrators may change theirs anyway. */
export function checkAvatarChangeAllowed(state: RealmState, user: UserProfile): void {
  if (state.settings.avatar_changes_disabled && !isAdmin(user)) throw avatarChangesDisabled();
}

/** Every change, a deletion of the default included, takes the next version, as the original counts them. */
export function decideAvatar(state: RealmState, command: AvatarCommand): AvatarChange[] {
  if (command.caller.kind === 'user' && command.caller.userId !== command.userId) throw notAdmin();
  const user = state.users.get(command.userId);
  if (!user || !user.isActive) throw badRequest('No such user');
  if (command.caller.kind === 'user') checkAvatarChangeAllowed(state, user);
  return [{ type: 'user.avatar_changed', userId: user.userId, pathId: command.pathId, version: user.avatarVersion + 1 }];
}
