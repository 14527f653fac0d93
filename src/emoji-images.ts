import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ImageInfo } from './images.ts';
import type { BodyStream } from './http/request.ts';
import { openShared, readShared, writeShared, type SharedFiles } from './uploads.ts';

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
  constructor(
    private readonly dataDir: string,
    private readonly shared: SharedFiles | null = null,
  ) {}

  /**
   * Writes the image (and its still) durably under new unguessable names, before the realm records them:
   * a recorded emoji always has its image, and a crash in between leaves only unrecorded files.
   */
  async save(realmId: number, image: ImageInfo, data: Buffer): Promise<StoredEmojiImage> {
    const fileName = `${randomBytes(9).toString('base64url')}.${image.extension}`;
    await writeShared(this.dataDir, this.pathOf(realmId, fileName, false), data, this.shared);
    if (!image.still) return { fileName, stillFileName: null };
    await writeShared(this.dataDir, this.pathOf(realmId, fileName, true), image.still, this.shared);
    return { fileName, stillFileName: fileName };
  }

  /** The bytes, or null when there is no such file. */
  async read(realmId: number, fileName: string, still: boolean): Promise<Buffer | null> {
    if (!FILE_NAME.test(fileName)) return null;
    return readShared(this.dataDir, this.pathOf(realmId, fileName, still), this.shared);
  }

  /** The image as a body read from disk as the client takes it, or null when there is no such file. */
  async open(realmId: number, fileName: string, still: boolean): Promise<BodyStream | null> {
    if (!FILE_NAME.test(fileName)) return null;
    return openShared(this.dataDir, this.pathOf(realmId, fileName, still), this.shared);
  }

  /** Writes an image under a name chosen elsewhere (import-realm), durably; refused if it exists. */
  async put(realmId: number, fileName: string, still: boolean, data: Buffer): Promise<void> {
    await writeShared(this.dataDir, this.pathOf(realmId, fileName, still), data, this.shared);
  }

  /** Removes every image of an organization: those a failed import-realm wrote under its new id. */
  async removeRealm(realmId: number): Promise<void> {
    await rm(join(this.dataDir, 'emoji', String(realmId)), { recursive: true, force: true });
  }

  /** Takes back files the realm refused to record. */
  async remove(realmId: number, stored: StoredEmojiImage): Promise<void> {
    const files = [this.pathOf(realmId, stored.fileName, false), ...(stored.stillFileName ? [this.pathOf(realmId, stored.stillFileName, true)] : [])];
    for (const path of files) {
      await rm(join(this.dataDir, path), { force: true });
      await this.shared?.remove(path);
    }
  }

  /** The file's path below the data directory. */
  private pathOf(realmId: number, fileName: string, still: boolean): string {
    if (!FILE_NAME.test(fileName)) throw new Error(`bad emoji file name ${fileName}`);
    return join('emoji', String(realmId), ...(still ? ['still'] : []), fileName);
  }
}

/** The names save() gives: nothing that could leave the realm's folder. */
const FILE_NAME = /^[\w-]+\.(png|gif|jpg|webp|avif)$/;
