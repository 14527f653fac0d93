import { LIMITS } from '../actors/register/realm-limits.ts';

/** The original's avatar size limit, which registration reports as `max_avatar_file_size_mib`. */
export const MAX_AVATAR_BYTES = LIMITS.max_avatar_file_size_mib * 1024 * 1024;

/** The image formats an avatar may be, by their leading bytes; SVG is not one (it can carry script). */
const FORMATS = [
  { extension: 'png', type: 'image/png', magic: (b: Buffer) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) },
  { extension: 'jpg', type: 'image/jpeg', magic: (b: Buffer) => b.length > 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { extension: 'gif', type: 'image/gif', magic: (b: Buffer) => /^GIF8[79]a$/.test(b.subarray(0, 6).toString('latin1')) },
  { extension: 'webp', type: 'image/webp', magic: (b: Buffer) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP' },
] as const;

export type AvatarFormat = (typeof FORMATS)[number];

/** The format of an uploaded image, or null when the bytes are not one the server takes as an avatar. */
export function avatarFormat(bytes: Buffer): AvatarFormat | null {
  return FORMATS.find((format) => format.magic(bytes)) ?? null;
}

/** The content type of a stored avatar, by the extension its file was saved with. */
export function avatarContentType(fileName: string): string | null {
  const extension = /\.([a-z]+)$/.exec(fileName)?.[1];
  return FORMATS.find((format) => format.extension === extension)?.type ?? null;
}

// Colours light text reads well on; a user keeps one for good (picked by id, not by name).
const COLOURS = ['#1e88e5', '#43a047', '#e53935', '#8e24aa', '#fb8c00', '#00897b', '#3949ab', '#d81b60', '#6d4c41', '#546e7a', '#7cb342', '#5e35b1'];

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeXml = (text: string) => text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);

/**
 * The default avatar: the initials on a square of the user's colour. Deterministic: the same id and initials
 * give the same bytes, so the picture can be cached for good under a path naming both.
 */
export function defaultAvatarSvg(userId: number, initials: string): string {
  // Knuth's multiplicative hash spreads consecutive ids over the palette.
  const colour = COLOURS[(Math.imul(userId, 2654435761) >>> 0) % COLOURS.length]!;
  const size = Array.from(initials).length > 1 ? 40 : 48;
  return (
    '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100" viewBox="0 0 100 100">' +
    `<rect width="100" height="100" fill="${colour}"/>` +
    `<text x="50" y="50" dy="0.35em" text-anchor="middle" font-family="Helvetica, Arial, sans-serif" font-size="${size}" font-weight="600" fill="#ffffff">${escapeXml(initials)}</text>` +
    '</svg>'
  );
}

/** Initials as a default avatar's path may carry them: one or two letters or digits, or `?`. */
export const isValidInitials = (text: string) => text === '?' || /^[\p{L}\p{N}]{1,2}$/u.test(text);
