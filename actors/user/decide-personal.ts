import { badRequest } from '../errors.ts';
import type { Clock } from '../realm/decide.ts';
import type { RealmState } from '../realm/state.ts';
import { findAccessibleUser } from '../realm/user-access.ts';
import type { UserChange } from './changes.ts';
import type { RealmFacts, StatusInput } from './commands.ts';
import { administeredUser } from '../realm/administer.ts';
import { settingValue } from './settings.ts';
import type { UserState, UserStatus } from './state.ts';
import { requireRoom } from './limits.ts';
import type { ReactionType } from '../realm/messages/state.ts';

/** Only an active user can be muted; a deactivated one can still be unmuted. A limited guest names only users it may access. */
function requireMutable(state: UserState, realm: RealmState, userId: number, allowDeactivated: boolean): void {
  const user = findAccessibleUser(realm, state.userId, userId);
  if (!user || (!user.isActive && !allowDeactivated)) throw badRequest('No such user');
}

// ---- push device tokens ----------------------------------------------------------------------------------

// The original's bound on a device token's length.
const MAX_TOKEN_LENGTH = 4096;

function checkToken(token: string, apns: boolean): void {
  if (token === '' || token.length > MAX_TOKEN_LENGTH) throw badRequest('Empty or invalid length token');
  // APNs device tokens are hex-encoded bytes, which the original decodes before storing; FCM registration
  // tokens are opaque text (letters, digits, ':', '-', '_').
  if (apns && !/^(?:[0-9a-fA-F]{2})+$/.test(token)) throw badRequest('Invalid push device token');
}

export function decideAddToken(state: UserState, token: string, appid: string | null, clock: Clock, maxTokens: number): UserChange[] {
  checkToken(token, appid !== null);
  // Registering a known token again changes nothing (the original keeps the first app ID).
  if (state.pushTokens.has(token)) return [];
  requireRoom('push device tokens', state.pushTokens.size, 1, maxTokens);
  return [{ type: 'push_token.added', token: { token, appid, dateCreated: Math.floor(clock.now() / 1000) } }];
}

export function decideRemoveToken(state: UserState, token: string): UserChange[] {
  checkToken(token, false);
  if (!state.pushTokens.has(token)) throw badRequest('Token does not exist');
  return [{ type: 'push_token.removed', token }];
}

// ---- alert words -----------------------------------------------------------------------------------------

const MAX_ALERT_WORD_LENGTH = 100;
const fold = (word: string) => word.toLowerCase();

/** Adds words (trimmed, blank ones dropped), ignoring any already present without regard to case. */
export function decideAddAlertWords(state: UserState, words: string[], maxWords: number): UserChange[] {
  words.forEach((word, index) => {
    if (word.length > MAX_ALERT_WORD_LENGTH) {
      throw badRequest(`alert_words[${index}] is too long (limit: ${MAX_ALERT_WORD_LENGTH} characters)`);
    }
  });
  const existing = new Set(state.alertWords.map(fold));
  // Keyed by the folded word: a later spelling of the same word wins, at the first one's place.
  const added = new Map<string, string>();
  for (const word of words.map((w) => w.trim())) {
    if (word !== '' && !existing.has(fold(word))) added.set(fold(word), word);
  }
  if (added.size === 0) return [];
  requireRoom('alert words', state.alertWords.length, added.size, maxWords);
  return [{ type: 'alert_words.changed', words: [...state.alertWords, ...added.values()] }];
}

/** Removes words without regard to case; words that are not there are ignored. */
export function decideRemoveAlertWords(state: UserState, words: string[]): UserChange[] {
  const removed = new Set(words.map(fold));
  const kept = state.alertWords.filter((word) => !removed.has(fold(word)));
  return kept.length < state.alertWords.length ? [{ type: 'alert_words.changed', words: kept }] : [];
}

// ---- status ----------------------------------------------------------------------------------------------

const MAX_STATUS_TEXT_LENGTH = 60;
// The extra emoji's type by its neutral name, as reactions spell it (shared/spec/interface.md).
const REACTION_TYPES: readonly string[] = ['unicode_emoji', 'realm_emoji', 'svc_extra_emoji'] satisfies ReactionType[];
const isReactionType = (type: string): type is ReactionType => REACTION_TYPES.includes(type);

/**
 * Changes only what was sent. `away` is the legacy spelling of `presence_enabled` (away = !presence_enabled),
 * so it changes that setting too.
 */
export function decideStatus(state: UserState, input: StatusInput, by?: { userId: number } & RealmFacts): UserChange[] {
  if (by) administeredUser(by.realm, by.realm.users.get(by.userId)!, state.userId);
  const statusText = input.statusText?.trim();
  if (input.away === undefined && statusText === undefined && input.emojiName === undefined) {
    throw badRequest('Client did not pass any new values.');
  }
  if (statusText !== undefined && statusText.length > MAX_STATUS_TEXT_LENGTH) {
    throw badRequest(`status_text is too long (limit: ${MAX_STATUS_TEXT_LENGTH} characters)`);
  }
  if (input.emojiName === undefined && (input.emojiCode !== undefined || input.reactionType !== undefined)) {
    throw badRequest('Client must pass emoji_name if they pass either emoji_code or reaction_type.');
  }
  const status: Partial<UserStatus> = {};
  if (statusText !== undefined) status.statusText = statusText;
  if (input.emojiName !== undefined) Object.assign(status, checkEmoji(input.emojiName, input.emojiCode, input.reactionType));
  const changes: UserChange[] = [];
  if (input.away !== undefined && settingValue(state.settings, 'presence_enabled') === input.away) {
    changes.push({ type: 'setting.changed', name: 'presence_enabled', value: !input.away });
  }
  changes.push({ type: 'status.changed', ...(input.away !== undefined && { away: input.away }), status });
  return changes;
}

/**
 * The emoji of a status. This server has no emoji name table and no custom emoji yet, so a Unicode emoji is
 * checked by the form of its name and code, and a name alone resolves only for the one extra emoji.
 */
function checkEmoji(name: string, code: string | undefined, type: string | undefined): Pick<UserStatus, 'emojiName' | 'emojiCode' | 'reactionType'> {
  if (name === '') return { emojiName: '', emojiCode: '', reactionType: '' };
  if (code === undefined || type === undefined) {
    if (name !== 'zulip') throw badRequest(`Emoji '${name}' does not exist`);
    return { emojiName: name, emojiCode: 'zulip', reactionType: 'svc_extra_emoji' };
  }
  if (!isReactionType(type)) throw badRequest('Invalid emoji type.');
  if (type === 'realm_emoji') throw badRequest('Invalid custom emoji.');
  if (type === 'svc_extra_emoji') {
    if (name !== 'zulip' || code !== 'zulip') throw badRequest('Invalid emoji name.');
  } else {
    if (!/^[0-9a-f]{1,6}(?:-[0-9a-f]{1,6})*$/.test(code)) throw badRequest('Invalid emoji code.');
    if (!/^[0-9a-z_+-]+$/.test(name)) throw badRequest('Invalid emoji name.');
  }
  return { emojiName: name, emojiCode: code, reactionType: type };
}

// ---- muted users -----------------------------------------------------------------------------------------

export function decideMute(state: UserState, realm: RealmState, mutedUserId: number, clock: Clock): UserChange[] {
  // Muting oneself is refused before the lookup, as in the original.
  if (mutedUserId === state.userId) throw badRequest('Cannot mute self');
  requireMutable(state, realm, mutedUserId, false);
  if (state.mutedUsers.has(mutedUserId)) throw badRequest('User already muted');
  return [{ type: 'user.muted', mutedUserId, at: Math.floor(clock.now() / 1000) }];
}

export function decideUnmute(state: UserState, realm: RealmState, mutedUserId: number): UserChange[] {
  requireMutable(state, realm, mutedUserId, true);
  if (!state.mutedUsers.has(mutedUserId)) throw badRequest('User is not muted');
  return [{ type: 'user.unmuted', mutedUserId }];
}
