/** A new avatar: an uploaded image's path id, or null for the default; `version` is the next avatar version. */
export type AvatarChange = { type: 'user.avatar_changed'; userId: number; pathId: string | null; version: number };
