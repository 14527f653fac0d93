import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ImageInfo } from './images.ts';
import { readIfPresent, writeDurably } from './uploads.ts';

export interface StoredEmojiImage {
  fileName: string;
  stillFileName: string | null;
}

/**
 * Custom emoji images on disk, beside the uploads: `<dataDir>/emoji/<realm id>/<file>` and the stills of
 * animated ones in `still/` below it. The realm records which emoji uses which file (realm/emoji/); files are
 * never removed once recorded, since a deactivated emoji is still shown where it was used.
 */
export class EmojiImageStore {
  constructor(private readonly dataDir: string) {}

  /**
   * Writes the image (and its still) durably under new unguessable names, before the realm records them:
   * a recorded emoji always has its image, and a crash in between leaves only unrecorded files.
   */
  async save(realmId: number, image: ImageInfo, data: Buffer): Promise<StoredEmojiImage> {
    const fileName = `${randomBytes(9).toString('base64url')}.${image.extension}`;
    await writeDurably(this.fileOf(realmId, fileName, false), data);
    if (!image.still) return { fileName, stillFileName: null };
    await writeDurably(this.fileOf(realmId, fileName, true), image.still);
    return { fileName, stillFileName: fileName };
  }

  /** The bytes, or null when there is no such file. */
  async read(realmId: number, fileName: string, still: boolean): Promise<Buffer | null> {
    if (!FILE_NAME.test(fileName)) return null;
    return readIfPresent(this.fileOf(realmId, fileName, still));
  }

  /** Writes an image under a name chosen elsewhere (import-realm), durably; refused if it exists. */
  async put(realmId: number, fileName: string, still: boolean, data: Buffer): Promise<void> {
    await writeDurably(this.fileOf(realmId, fileName, still), data);
  }

  /** Removes every image of an organization: those a failed import-realm wrote under its new id. */
  async removeRealm(realmId: number): Promise<void> {
    await rm(join(this.dataDir, 'emoji', String(realmId)), { recursive: true, force: true });
  }

  /** Takes back files the realm refused to record. */
  async remove(realmId: number, stored: StoredEmojiImage): Promise<void> {
    await rm(this.fileOf(realmId, stored.fileName, false), { force: true });
    if (stored.stillFileName) await rm(this.fileOf(realmId, stored.stillFileName, true), { force: true });
  }

  private fileOf(realmId: number, fileName: string, still: boolean): string {
    if (!FILE_NAME.test(fileName)) throw new Error(`bad emoji file name ${fileName}`);
    return join(this.dataDir, 'emoji', String(realmId), ...(still ? ['still'] : []), fileName);
  }
}

/** The names save() gives: nothing that could leave the realm's folder. */
const FILE_NAME = /^[\w-]+\.(png|gif|jpg|webp|avif)$/;
