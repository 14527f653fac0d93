import type { RealmState } from '../state.ts';
import type { AvatarChange } from './changes.ts';

export function applyAvatarChange(state: RealmState, change: AvatarChange): void {
  const user = state.users.get(change.userId);
  if (!user) return;
  user.avatarVersion = change.version;
  if (change.pathId === null) delete user.avatarPathId;
  else user.avatarPathId = change.pathId;
}
