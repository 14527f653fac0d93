import type { Attachment } from './state.ts';

export type AttachmentChange =
  | { type: 'attachment.uploaded'; attachment: Attachment }
  | { type: 'attachment.deleted'; attachmentId: number; ownerId: number };
