import type { Caller } from '../commands.ts';

export type AttachmentCommand =
  /** the front end stored the file already (src/uploads.ts); the realm records it */
  | { type: 'attachment.upload'; caller: Caller; pathId: string; name: string; size: number }
  | { type: 'attachment.delete'; caller: Caller; attachmentId: number };
