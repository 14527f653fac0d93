/** A file a user uploaded; the bytes live in the data directory (src/uploads.ts), the facts here. */
export interface Attachment {
  id: number;
  /** `<realm id>/<random>/<file name>`: the file's URL is `/user_uploads/<pathId>` */
  pathId: string;
  name: string;
  /** bytes */
  size: number;
  /** UNIX milliseconds (the API's `create_time` is in milliseconds) */
  createTime: number;
  ownerId: number;
  /**
   * Messages whose content linked the file, sorted. Deleted messages are not removed here: readers skip ids
   * no longer in the message store (see `linkedMessages`), so a deletion needs no bookkeeping.
   */
  messageIds: number[];
}

export interface AttachmentStore {
  byId: Map<number, Attachment>;
  /** index: path id -> attachment id (rebuilt on load) */
  byPathId: Map<string, number>;
  nextId: number;
  /** bytes of all the files (rebuilt on load): the realm's upload quota */
  bytes: number;
  /** bytes of each user's files (rebuilt on load): `upload_space_used` and the user's upload quota */
  bytesByOwner: Map<number, number>;
  /** how many files each user has (rebuilt on load): the user's limit on files, which empty ones count toward too */
  filesByOwner: Map<number, number>;
}

export interface AttachmentStoreRecord {
  attachments: Attachment[];
  nextId: number;
}

export function emptyAttachmentStore(): AttachmentStore {
  return { byId: new Map(), byPathId: new Map(), nextId: 1, bytes: 0, bytesByOwner: new Map(), filesByOwner: new Map() };
}

export function attachmentStoreToRecord(store: AttachmentStore): AttachmentStoreRecord {
  return { attachments: [...store.byId.values()], nextId: store.nextId };
}

export function attachmentStoreFromRecord(record: AttachmentStoreRecord | undefined): AttachmentStore {
  const store = emptyAttachmentStore();
  // Snapshots written before uploads existed have none.
  if (!record) return store;
  store.nextId = record.nextId;
  for (const attachment of record.attachments) addAttachment(store, { ...attachment, messageIds: [...attachment.messageIds] });
  return store;
}

export function addAttachment(store: AttachmentStore, attachment: Attachment): void {
  store.byId.set(attachment.id, attachment);
  store.byPathId.set(attachment.pathId, attachment.id);
  store.nextId = Math.max(store.nextId, attachment.id + 1);
  store.bytes += attachment.size;
  store.bytesByOwner.set(attachment.ownerId, (store.bytesByOwner.get(attachment.ownerId) ?? 0) + attachment.size);
  store.filesByOwner.set(attachment.ownerId, (store.filesByOwner.get(attachment.ownerId) ?? 0) + 1);
}

export function removeAttachment(store: AttachmentStore, attachmentId: number): void {
  const attachment = store.byId.get(attachmentId);
  if (!attachment) return;
  store.byId.delete(attachment.id);
  store.byPathId.delete(attachment.pathId);
  store.bytes -= attachment.size;
  const left = (store.bytesByOwner.get(attachment.ownerId) ?? 0) - attachment.size;
  if (left > 0) store.bytesByOwner.set(attachment.ownerId, left);
  else store.bytesByOwner.delete(attachment.ownerId);
  const files = (store.filesByOwner.get(attachment.ownerId) ?? 0) - 1;
  if (files > 0) store.filesByOwner.set(attachment.ownerId, files);
  else store.filesByOwner.delete(attachment.ownerId);
}

/** `/user_uploads/<realm>/<random>/<name>` in Markdown or HTML: the path ids a message's content references. */
const UPLOAD_LINK = /\/user_uploads\/(\d+\/[^\s"'<>()[\]]+)/g;

export function referencedPathIds(content: string): string[] {
  // Most messages link no upload: one search instead of a regular expression's match iterator and a set.
  if (!content.includes('/user_uploads/')) return [];
  const out = new Set<string>();
  for (const match of content.matchAll(UPLOAD_LINK)) {
    let path = match[1]!;
    try {
      path = decodeURIComponent(path);
    } catch {
      // not percent-encoded text: taken as written
    }
    out.add(path);
  }
  return [...out];
}

const IMAGE_NAME = /\.(png|jpe?g|gif|webp|bmp|svg|avif|tiff?)$/i;
export const isImageName = (name: string) => IMAGE_NAME.test(name);
