import { badRequest } from '../../errors.ts';
import type { RealmState } from '../state.ts';
import { canRead } from './access.ts';

/** What read receipts need of a user beyond the realm: its own choices, kept by its user actor. */
export interface ReceiptPrivacy {
  /** the user's `send_read_receipts` setting */
  sendsReadReceipts(userId: number): boolean;
  hasMuted(userId: number, otherId: number): boolean;
}

/**
 * GET /messages/{id}/read_receipts: the active users who hold the message and have read it, in id order. Never
 * its sender, nor a user who keeps its reading private, nor one who muted the viewer or whom the viewer muted.
 */
export function readReceipts(state: RealmState, viewerId: number, messageId: number, privacy: ReceiptPrivacy): number[] {
  const message = state.messages.byId.get(messageId);
  if (!message || !canRead(state, viewerId, message)) throw badRequest('Invalid message(s)');
  if (!state.settings.enable_read_receipts) throw badRequest('Read receipts are disabled in this organization.');
  const unread = state.messages.flags.unread;
  return message.userIds.filter((userId) =>
    userId !== message.senderId
    && state.users.get(userId)?.isActive === true
    && !unread.get(userId)?.has(messageId)
    && privacy.sendsReadReceipts(userId)
    && !privacy.hasMuted(userId, viewerId)
    && !privacy.hasMuted(viewerId, userId));
}
