import { badRequest } from '../errors.ts';

/**
 * Characters no name may hold (users, bots, channels, groups). The original refuses control characters,
 * surrogates and non-characters; these also refuse the invisible ones that make one name pass for another:
 * bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069: "Ann\u202Egnp.exe" shows reversed),
 * the zero-width space, word joiner and invisible operators, and the byte-order mark. Joiners (U+200C,
 * U+200D) and the directional marks (U+200E, U+200F) stay: emoji sequences and right-to-left scripts need them.
 */
const DISALLOWED_IN_NAMES = /[\p{Cc}\p{Cs}\p{Noncharacter_Code_Point}\u200B\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/u;

/** The position of the first character a name may not hold, or -1. */
export function disallowedNameCharacter(name: string): number {
  return name.search(DISALLOWED_IN_NAMES);
}

/** The original's limit on a display name, which people and bots share. */
export const MAX_FULL_NAME_LENGTH = 100;

/** What is wrong with a display name (of a person or a bot, after trimming), or null. */
export function fullNameProblem(trimmed: string): string | null {
  if (!trimmed) return 'Name too short!';
  if (trimmed.length > MAX_FULL_NAME_LENGTH) return 'Name too long!';
  if (disallowedNameCharacter(trimmed) >= 0) return 'Invalid characters in name!';
  return null;
}

/** A display name trimmed, or refused as the original refuses it. */
export function checkFullName(name: string): string {
  const trimmed = name.trim();
  const problem = fullNameProblem(trimmed);
  if (problem) throw badRequest(problem);
  return trimmed;
}
