import type { UserProfile } from '../state.ts';

/**
 * Where avatars are served. Both kinds are relative to the realm's URL, as the original gives locally stored
 * avatars; clients resolve them against the realm. This server reaches no avatar service on the internet:
 * a user who uploaded nothing gets a picture the server draws itself (src/avatars.ts).
 */
export const UPLOADED_AVATAR_PREFIX = '/user_avatars/';
export const DEFAULT_AVATAR_PREFIX = '/user_avatars/default/';

/** The avatar's source as the API names it: `U` uploaded by the user, `G` the server's default. */
export type AvatarSource = 'U' | 'G';

export const avatarSource = (user: UserProfile): AvatarSource => (user.avatarPathId ? 'U' : 'G');

/**
 * Up to two letters standing for the name: the first letter or digit of its first and last words
 * ("Ada Lovelace" -> "AL", "cher" -> "C"); `?` for a name with none.
 */
export function initials(fullName: string): string {
  const firstLetter = (word: string) => /[\p{L}\p{N}]/u.exec(word)?.[0] ?? '';
  // A letter whose capital is two letters (ß -> SS) stays as it is: initials are one letter a word.
  const capital = (letter: string) => (Array.from(letter.toUpperCase()).length === 1 ? letter.toUpperCase() : letter);
  const words = fullName.trim().split(/\s+/).filter((word) => firstLetter(word) !== '');
  const letters = words.length > 1 ? [words[0]!, words.at(-1)!] : words;
  return letters.map((word) => capital(firstLetter(word))).join('') || '?';
}

/**
 * The default picture's path: the user's id (which picks the colour) and the initials it shows. Its bytes
 * are a function of the path alone, so the server needs no lookup to draw it and it can be cached for good;
 * a renamed user's initials change the path (realm/events.ts announces it).
 */
export function defaultAvatarPath(user: Pick<UserProfile, 'userId' | 'fullName'>): string {
  return `${DEFAULT_AVATAR_PREFIX}${user.userId}/${encodeURIComponent(initials(user.fullName))}.svg`;
}

/**
 * The organization's icon: nobody uploads one here, so it is a default picture of the realm's initials, drawn
 * by the same route (its colour picked by the realm's id).
 */
export function realmIconPath(realm: { realmId: number; name: string }): string {
  return `${DEFAULT_AVATAR_PREFIX}${realm.realmId}/${encodeURIComponent(initials(realm.name))}.svg`;
}

/** The icon's URL as registration and /server_settings send it (one version: it never changes). */
export const realmIconUrl = (realm: { realmId: number; name: string }) => `${realmIconPath(realm)}?version=1`;

/** Is this `avatar_url` the server's default picture (not an uploaded image)? */
export const isDefaultAvatarUrl = (url: unknown) => typeof url === 'string' && url.startsWith(DEFAULT_AVATAR_PREFIX);

/** The avatar's URL with its version (for cache-busting, as the original's URLs end). */
export function fullAvatarUrl(user: UserProfile): string {
  const path = user.avatarPathId ? `${UPLOADED_AVATAR_PREFIX}${user.avatarPathId}` : defaultAvatarPath(user);
  return `${path}?version=${user.avatarVersion}`;
}

/**
 * The `avatar_url` of the API. With `client_extavatar` the client computes the URL of a user without an
 * uploaded avatar itself (from the email, which every user here may see), so the server sends null for them.
 */
export function avatarUrl(user: UserProfile, clientExtavatar: boolean): string | null {
  if (clientExtavatar && !user.avatarPathId) return null;
  return fullAvatarUrl(user);
}

/**
 * The medium-size avatar. The server keeps one image per avatar (it has no image library to resize with)
 * and draws its default as scalable SVG, so the medium URL is the same picture; clients scale it.
 */
export const mediumAvatarUrl = fullAvatarUrl;

/** The avatar fields of a `realm_user` update and of registration's own-account fields. */
export function avatarFields(user: UserProfile) {
  return {
    avatar_url: fullAvatarUrl(user),
    avatar_source: avatarSource(user),
    avatar_url_medium: mediumAvatarUrl(user),
    avatar_version: user.avatarVersion,
  };
}
