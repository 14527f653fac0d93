import { LIMITS } from '../../register/realm-limits.ts';
import { badRequest, ChatError, ErrorCode } from '../../errors.ts';
import type { Clock } from '../decide.ts';
import { canRead } from '../messages/access.ts';
import type { StoredMessage } from '../messages/state.ts';
import type { RealmState, UserProfile } from '../state.ts';
import type { AttachmentChange } from './changes.ts';
import type { AttachmentCommand, UploadQuota } from './commands.ts';
import { referencedPathIds, type Attachment } from './state.ts';

export const MAX_UPLOAD_BYTES = LIMITS.max_file_upload_size_mib * 1024 * 1024;

export function decideAttachment(state: RealmState, command: AttachmentCommand, clock: Clock): AttachmentChange[] {
  const caller = command.caller.kind === 'user' ? state.users.get(command.caller.userId) : undefined;
  if (!caller || !caller.isActive) throw badRequest('Files are uploaded by users');
  switch (command.type) {
    case 'attachment.upload': {
      if (command.size > MAX_UPLOAD_BYTES) throw tooLarge();
      checkUploadQuota(state, caller.userId, command.size, command.quota);
      if (state.attachments.byPathId.has(command.pathId)) throw badRequest('Upload path already in use');
      const attachment: Attachment = {
        id: state.attachments.nextId,
        pathId: command.pathId,
        name: command.name,
        size: command.size,
        createTime: clock.now(),
        ownerId: caller.userId,
        messageIds: [],
      };
      return [{ type: 'attachment.uploaded', attachment }];
    }
    case 'attachment.delete': {
      const attachment = state.attachments.byId.get(command.attachmentId);
      // Another user's file answers like a missing one.
      if (!attachment || attachment.ownerId !== caller.userId) throw badRequest('Invalid attachment');
      return [{ type: 'attachment.deleted', attachmentId: attachment.id, ownerId: attachment.ownerId }];
    }
  }
}

/**
 * Refuses a file that would take the user's or the organization's files past their quota, or the user's
 * files past their number (tiny or empty files, which take next to no bytes, each take a record in the
 * realm's state and snapshot and a directory on disk). The uploads
 * route asks first with the size the request declares, before its body is read; the realm decides with the
 * file's real size, one upload after another, so concurrent uploads cannot pass the quota together.
 */
export function checkUploadQuota(state: RealmState, userId: number, size: number, quota: UploadQuota): void {
  const { bytes, bytesByOwner, filesByOwner } = state.attachments;
  // The original's error and code (zerver/lib/upload: check_upload_within_quota).
  if (quota.realmBytes !== null && bytes + size > quota.realmBytes) {
    throw new ChatError(ErrorCode.REALM_UPLOAD_QUOTA, "Upload would exceed your organization's upload quota.");
  }
  if (quota.userBytes !== null && (bytesByOwner.get(userId) ?? 0) + size > quota.userBytes) {
    throw new ChatError(ErrorCode.REALM_UPLOAD_QUOTA, `Upload would exceed your upload quota (${mebibytes(quota.userBytes)} MiB); delete files you no longer need.`);
  }
  if (quota.userFiles !== null && (filesByOwner.get(userId) ?? 0) >= quota.userFiles) {
    throw new ChatError(ErrorCode.REALM_UPLOAD_QUOTA, `Upload would exceed your limit of ${quota.userFiles} files; delete files you no longer need.`);
  }
}

const mebibytes = (bytes: number) => Math.floor(bytes / (1024 * 1024));

export const tooLarge = () => badRequest(`File is larger than this server's configured maximum upload size (${LIMITS.max_file_upload_size_mib} MiB).`);

/** The messages that still link the file (deleted ones are skipped: see Attachment.messageIds). */
export function linkedMessages(state: RealmState, attachment: Attachment): StoredMessage[] {
  const out: StoredMessage[] = [];
  for (const id of attachment.messageIds) {
    const message = state.messages.byId.get(id);
    if (message?.attachmentIds?.includes(attachment.id)) out.push(message);
  }
  return out;
}

/** The uploader, and whoever can read a message that links the file. */
export function canReadAttachment(state: RealmState, userId: number, attachment: Attachment): boolean {
  if (attachment.ownerId === userId) return true;
  return linkedMessages(state, attachment).some((message) => canRead(state, userId, message));
}

/**
 * The attachments a message with this content links: files it references that the sender may share, their
 * own or one they can already read (resharing, as the original allows). Sorted ids; computed when deciding,
 * stored in the change, so replay never re-evaluates access.
 */
export function linkedAttachmentIds(state: RealmState, sender: UserProfile, content: string): number[] {
  const out: number[] = [];
  for (const pathId of referencedPathIds(content)) {
    const id = state.attachments.byPathId.get(pathId);
    const attachment = id === undefined ? undefined : state.attachments.byId.get(id);
    if (attachment && canReadAttachment(state, sender.userId, attachment)) out.push(attachment.id);
  }
  return out.sort((a, b) => a - b);
}

/**
 * `detached_uploads` of an edit: the editor's files that the message linked before and not after, and
 * that no other message still links.
 */
export function detachedAttachmentIds(state: RealmState, editorId: number, message: StoredMessage, after: readonly number[]): number[] {
  const out: number[] = [];
  for (const id of message.attachmentIds ?? []) {
    if (after.includes(id)) continue;
    const attachment = state.attachments.byId.get(id);
    if (!attachment || attachment.ownerId !== editorId) continue;
    if (linkedMessages(state, attachment).every((other) => other.id === message.id)) out.push(id);
  }
  return out;
}
