import { timingSafeEqual } from 'node:crypto';
import { badRequest, ChatError, ErrorCode } from '../errors.ts';
import { randomString } from '../ids.ts';
import { emailChangeAllowed, type Clock } from '../realm/decide.ts';
import { addressNotAllowed } from '../realm/domains/decide.ts';
import { findUserByEmail, type RealmState } from '../realm/state.ts';
import type { UserChange } from './changes.ts';
import type { PendingEmailChange, UserState } from './state.ts';

// The original's confirmation keys are 24 random characters; ours carry the same randomness after a prefix.
const RANDOM_LENGTH = 24;
// The original's confirmation links are valid for a day.
const VALID_SECONDS = 24 * 60 * 60;

/**
 * A confirmation key names its user: one digit giving the length of the user ID in base 36, that ID, then the
 * random part. Following the link then finds the pending change with one lookup, with no index over every
 * user's actor; user IDs are not secret (every client sees them), the random part is the credential.
 */
export function newConfirmationKey(userId: number): string {
  const id = userId.toString(36);
  return `${id.length}${id}${randomString(RANDOM_LENGTH)}`;
}

/** The user a confirmation key names, or null for a key this server cannot have issued. */
export function confirmationKeyOwner(key: string): number | null {
  const length = Number(key[0]);
  if (!Number.isInteger(length) || length < 1 || key.length !== 1 + length + RANDOM_LENGTH) return null;
  const id = key.slice(1, 1 + length);
  if (!/^[0-9a-z]+$/.test(id) || !/^[A-Za-z0-9]+$/.test(key.slice(1 + length))) return null;
  return parseInt(id, 36);
}

/** The pending change the key confirms, if it is the user's current one and has not expired. */
export function pendingChangeFor(state: UserState, key: string, now: number): PendingEmailChange | null {
  const pending = state.pendingEmailChange;
  if (!pending || !sameKey(pending.token, key)) return null;
  return Math.floor(now / 1000) - pending.requestedAt < VALID_SECONDS ? pending : null;
}

export const unknownConfirmation = () => new ChatError(ErrorCode.BAD_REQUEST, 'Invalid or expired confirmation link', 404);

/**
 * Records a pending email change with the key its confirmation link carries; a newer request replaces an
 * older one (whose link stops working). The route has checked the address (well-formed, not in use); the
 * mail goes out once this is durable.
 */
/**
 * A change of address asked for by the user (PATCH /settings `email`): none when it is the current one;
 * refused, in the original's order, when the realm turned changes off for the user, when its domain
 * restrictions leave the address out (as at sign-up), or when another account holds it. (Following the link
 * checks the address again: it may have been taken since.)
 */
export function decideEmailChange(state: UserState, realm: RealmState, newEmail: string, clock: Clock): UserChange[] {
  const user = realm.users.get(state.userId);
  if (!user || user.email === newEmail) return [];
  if (!emailChangeAllowed(realm, user)) throw badRequest('Email address changes are disabled in this organization.');
  const refused = addressNotAllowed(realm, newEmail);
  if (refused) throw badRequest(refused === 'plus' ? 'Email addresses containing + are not allowed.' : 'Outside your domain.');
  const holder = findUserByEmail(realm, newEmail);
  if (holder && holder.userId !== user.userId) throw badRequest(`Email '${newEmail}' already in use`);
  return [{
    type: 'email.change_requested',
    pending: { newEmail, token: newConfirmationKey(state.userId), requestedAt: Math.floor(clock.now() / 1000) },
  }];
}

/** The link was followed and the realm changed the address: the pending change is done, its link used up. */
export function decideConfirmEmailChange(state: UserState, key: string, clock: Clock): UserChange[] {
  if (!pendingChangeFor(state, key, clock.now())) throw unknownConfirmation();
  return [{ type: 'email.change_confirmed' }];
}

function sameKey(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
