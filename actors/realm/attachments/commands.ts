import type { Caller } from '../commands.ts';

/** How many bytes of files a user, and the whole organization, may keep, and how many files a user (the server's configuration). */
export interface UploadQuota {
  /** null: no limit */
  userBytes: number | null;
  /** null: no limit */
  userFiles: number | null;
  /** null: no limit; `realm_upload_quota_mib` */
  realmBytes: number | null;
}

export type AttachmentCommand =
  /** the front end stored the file already (src/uploads.ts); the realm records it, within the quota */
  | { type: 'attachment.upload'; caller: Caller; pathId: string; name: string; size: number; quota: UploadQuota }
  | { type: 'attachment.delete'; caller: Caller; attachmentId: number };
