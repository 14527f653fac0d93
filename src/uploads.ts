import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * Uploaded files on disk, beside LMDB: `<dataDir>/<folder>/<path id>`, where a path id is
 * `<realm id>/<random>/<sanitized name>`. The realm actor records the metadata (attachments/, avatars/);
 * this module is the only code that touches the bytes. Message attachments and avatars live in folders of
 * their own: avatars are served without credentials, attachments only to those who may read them.
 */
export class UploadStore {
  constructor(
    private readonly dataDir: string,
    private readonly folder: 'uploads' | 'avatars' = 'uploads',
  ) {}

  /**
   * Writes the file durably (fsync) and returns its path id. The file is on disk before the realm records
   * it, so a recorded attachment always has its bytes; a crash in between leaves an unrecorded file only.
   */
  async save(realmId: number, name: string, data: Buffer): Promise<string> {
    const pathId = `${realmId}/${randomBytes(18).toString('base64url')}/${sanitizeFileName(name)}`;
    await this.put(pathId, data);
    return pathId;
  }

  /** Writes a file under a path id chosen elsewhere (import-realm), durably; refused if it exists. */
  async put(pathId: string, data: Buffer): Promise<void> {
    await writeDurably(this.fileOf(pathId), data);
  }

  /** The bytes, or null when the file is gone. */
  async read(pathId: string): Promise<Buffer | null> {
    return readIfPresent(this.fileOf(pathId));
  }

  /** Removes the file and its random directory. */
  async remove(pathId: string): Promise<void> {
    await rm(dirname(this.fileOf(pathId)), { recursive: true, force: true });
  }

  /** Removes every file of an organization: those a failed import-realm wrote under its new id. */
  async removeRealm(realmId: number): Promise<void> {
    await rm(join(this.dataDir, this.folder, String(realmId)), { recursive: true, force: true });
  }

  private fileOf(pathId: string): string {
    // Path ids come from save() (or from the realm's records of them), never straight from a request.
    if (!/^\d+\/[\w-]+\/[\w.-]+$/.test(pathId) || pathId.includes('..')) throw new Error(`bad upload path id ${pathId}`);
    return join(this.dataDir, this.folder, pathId);
  }
}

/** Writes a new file (never over an existing one) and syncs it to disk before returning. */
export async function writeDurably(file: string, data: Buffer): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const handle = await open(file, 'wx');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The bytes of a file, or null when it is not there. */
export async function readIfPresent(file: string): Promise<Buffer | null> {
  try {
    return await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** A name safe in a URL and on any file system: ASCII letters, digits, `.`, `-`, `_`; never empty or dotted. */
export function sanitizeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  let safe = base.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').replace(/[^\w.-]+/g, '_').replace(/_+/g, '_').replace(/\.{2,}/g, '.').replace(/^[._]+/, '');
  if (safe.length > 120) {
    const dot = safe.lastIndexOf('.');
    const extension = dot > 0 && safe.length - dot <= 10 ? safe.slice(dot) : '';
    safe = safe.slice(0, 120 - extension.length) + extension;
  }
  return safe || 'uploaded-file';
}
