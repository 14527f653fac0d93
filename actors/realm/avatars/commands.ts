import type { Caller } from '../commands.ts';

/**
 * A user's own avatar: `pathId` names the image the front end already stored (src/uploads.ts, the avatar
 * folder); null goes back to the default.
 */
export type AvatarCommand = { type: 'avatar.set'; caller: Caller; userId: number; pathId: string | null };
