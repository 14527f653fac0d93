import type { RealmRecord } from '../actors/realm/state.ts';
import { EmojiImageStore } from './emoji-images.ts';
import type { FileKind } from './realm-export-file.ts';
import { UploadStore } from './uploads.ts';

/**
 * An organization's files beside LMDB as export-realm and import-realm see them: uploaded files, named by
 * path id, and custom emoji images, named within the organization's emoji folder ('x.png', 'still/x.png').
 */
export class RealmFiles {
  private readonly uploads: UploadStore;
  private readonly emoji: EmojiImageStore;

  constructor(dataDir: string) {
    this.uploads = new UploadStore(dataDir);
    this.emoji = new EmojiImageStore(dataDir);
  }

  /** The files the records name, split into those on disk and those already missing. */
  async list(record: RealmRecord): Promise<{ uploads: string[]; emojiImages: string[]; missing: string[] }> {
    const found = { uploads: [] as string[], emojiImages: [] as string[], missing: [] as string[] };
    for (const { pathId } of record.attachments?.attachments ?? []) {
      (await this.uploads.exists(pathId) ? found.uploads : found.missing).push(pathId);
    }
    for (const path of emojiPaths(record)) {
      if (await this.read(record.realmId, 'emoji', path)) found.emojiImages.push(path);
      else found.missing.push(`emoji ${path}`);
    }
    return found;
  }

  read(realmId: number, kind: FileKind, path: string): Promise<Buffer | null> {
    if (kind === 'upload') return this.uploads.read(path);
    const [fileName, still] = emojiFile(path);
    return this.emoji.read(realmId, fileName, still);
  }

  /** Writes a file durably; refused if it exists. */
  write(realmId: number, kind: FileKind, path: string, data: Buffer): Promise<void> {
    if (kind === 'upload') return this.uploads.put(path, data);
    const [fileName, still] = emojiFile(path);
    return this.emoji.put(realmId, fileName, still, data);
  }

  /** Removes every file of an organization (a failed import's: its id is new, so nothing else is there). */
  async removeRealm(realmId: number): Promise<void> {
    await this.uploads.removeRealm(realmId);
    await this.emoji.removeRealm(realmId);
  }
}

/** The emoji images a realm record names. */
export function emojiPaths(record: RealmRecord): string[] {
  return (record.emoji?.emoji ?? []).flatMap((emoji) => [emoji.fileName, ...(emoji.stillFileName ? [`still/${emoji.stillFileName}`] : [])]);
}

function emojiFile(path: string): [fileName: string, still: boolean] {
  return path.startsWith('still/') ? [path.slice('still/'.length), true] : [path, false];
}
