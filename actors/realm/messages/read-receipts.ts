import { setImmediate as nextTurn } from 'node:timers/promises';
import { badRequest } from '../../errors.ts';
import type { RealmState } from '../state.ts';
import type { StoredMessage } from './state.ts';
import { canRead } from './access.ts';

/** What read receipts need of a user beyond the realm: its own choices, kept by its user actor. */
export interface ReceiptPrivacy {
  /** the user's `send_read_receipts` setting */
  sendsReadReceipts(userId: number): boolean;
  hasMuted(userId: number, otherId: number): boolean;
}

/**
 * Holders looked up per turn of the event loop before an answer (prepareReadReceipts). A holder whose unread
 * set has not read the part that holds the message reads it from the data directory, and its user actor may
 * be read too: a message of a channel of 10,000 held the event loop 626 ms at its first read receipts
 * (2026-11-29), about 60 us a holder, and each part of the history a message lies in costs that again.
 */
const HOLDERS_PER_TURN = 250;

/**
 * GET /messages/{id}/read_receipts: the active users who hold the message and have read it, in id order. Never
 * its sender, nor a user who keeps its reading private, nor one who muted the viewer or whom the viewer muted.
 */
export function readReceipts(state: RealmState, viewerId: number, messageId: number, privacy: ReceiptPrivacy): number[] {
  const message = state.messages.byId.get(messageId);
  if (!message || !canRead(state, viewerId, message)) throw badRequest('Invalid message(s)');
  if (!state.settings.enable_read_receipts) throw badRequest('Read receipts are disabled in this organization.');
  return message.userIds.filter(readerOf(state, viewerId, message, privacy));
}

/**
 * Resolves once readReceipts answers without reading from the data directory: it looks up each holder as
 * readReceipts does, HOLDERS_PER_TURN a turn. Null when the message has few enough holders to look up at once
 * (or when readReceipts refuses the request).
 */
export function prepareReadReceipts(state: RealmState, viewerId: number, messageId: number, privacy: ReceiptPrivacy): Promise<void> | null {
  const message = state.messages.byId.get(messageId);
  if (!message || message.userIds.length <= HOLDERS_PER_TURN || !canRead(state, viewerId, message) || !state.settings.enable_read_receipts) return null;
  return lookUpHolders(state, viewerId, message, privacy);
}

async function lookUpHolders(state: RealmState, viewerId: number, message: StoredMessage, privacy: ReceiptPrivacy): Promise<void> {
  for (let start = 0; start < message.userIds.length; start += HOLDERS_PER_TURN) {
    if (start > 0) await nextTurn();
    const isReader = readerOf(state, viewerId, message, privacy);
    for (const userId of message.userIds.slice(start, start + HOLDERS_PER_TURN)) isReader(userId);
  }
}

/** Whether a holder of the message is listed in its read receipts. */
function readerOf(state: RealmState, viewerId: number, message: StoredMessage, privacy: ReceiptPrivacy): (userId: number) => boolean {
  const unread = state.messages.flags.unread;
  return (userId) =>
    userId !== message.senderId
    && state.users.get(userId)?.isActive === true
    && !unread.get(userId)?.has(message.id)
    && privacy.sendsReadReceipts(userId)
    && !privacy.hasMuted(userId, viewerId)
    && !privacy.hasMuted(viewerId, userId);
}
