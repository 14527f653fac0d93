import { insertSorted } from '../messages/state.ts';
import type { RealmState } from '../state.ts';
import type { AttachmentChange } from './changes.ts';
import { addAttachment, removeAttachment } from './state.ts';

export function applyAttachmentChange(state: RealmState, change: AttachmentChange): void {
  const store = state.attachments;
  switch (change.type) {
    case 'attachment.uploaded':
      addAttachment(store, { ...change.attachment, messageIds: [...change.attachment.messageIds] });
      return;
    case 'attachment.deleted':
      removeAttachment(store, change.attachmentId);
      return;
  }
}

/**
 * Points the message at the attachments it links now (decided with the send or edit) and keeps each
 * attachment's list of linking messages in step. Returns the attachments whose links changed.
 */
export function relinkMessage(state: RealmState, messageId: number, before: readonly number[], after: readonly number[]): number[] {
  const message = state.messages.byId.get(messageId);
  if (!message) return [];
  if (after.length) message.attachmentIds = [...after];
  else delete message.attachmentIds;
  const changed: number[] = [];
  for (const id of before) {
    if (after.includes(id)) continue;
    const attachment = state.attachments.byId.get(id);
    if (!attachment) continue;
    attachment.messageIds = attachment.messageIds.filter((other) => other !== messageId);
    changed.push(id);
  }
  for (const id of after) {
    if (before.includes(id)) continue;
    const attachment = state.attachments.byId.get(id);
    if (!attachment) continue;
    insertSorted(attachment.messageIds, messageId);
    changed.push(id);
  }
  return changed;
}
