import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileBody } from './http/file-body.ts';
import type { BodyStream } from './http/request.ts';

/**
 * Where a cluster keeps the organization's files (cluster/node.ts: in its object store, replicated as the
 * log is). A file is stored there before the realm records it, so that an acknowledged upload outlives the
 * node that took it; a node whose own disk lacks a file (it was taken by another) reads it from there and
 * keeps a copy. Absent in a single process. Files are named by their path below the data directory.
 */
export interface SharedFiles {
  /** Stores a new file in the cluster; throws NotPrimary at a node that takes no writes (the primary takes the request). */
  put(path: string, data: Buffer): Promise<void>;
  /** The file's bytes, or null when the cluster has no such file. */
  get(path: string): Promise<Buffer | null>;
  remove(path: string): Promise<void>;
}

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
    private readonly shared: SharedFiles | null = null,
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
    await writeShared(this.dataDir, this.pathOf(pathId), data, this.shared);
  }

  /** The bytes, or null when the file is gone. */
  async read(pathId: string): Promise<Buffer | null> {
    return readShared(this.dataDir, this.pathOf(pathId), this.shared);
  }

  /** The file as a body read from disk as the client takes it, or null when the file is gone. */
  async open(pathId: string): Promise<BodyStream | null> {
    return openShared(this.dataDir, this.pathOf(pathId), this.shared);
  }

  /** Removes the file and its random directory. */
  async remove(pathId: string): Promise<void> {
    await rm(dirname(this.fileOf(pathId)), { recursive: true, force: true });
    await this.shared?.remove(this.pathOf(pathId));
  }

  /** Removes every file of an organization: those a failed import-realm wrote under its new id. */
  async removeRealm(realmId: number): Promise<void> {
    await rm(join(this.dataDir, this.folder, String(realmId)), { recursive: true, force: true });
  }

  private fileOf(pathId: string): string {
    return join(this.dataDir, this.pathOf(pathId));
  }

  /** The file's path below the data directory. */
  private pathOf(pathId: string): string {
    // Path ids come from save() (or from the realm's records of them), never straight from a request.
    if (!/^\d+\/[\w-]+\/[\w.-]+$/.test(pathId) || pathId.includes('..')) throw new Error(`bad upload path id ${pathId}`);
    return join(this.folder, pathId);
  }
}

/** Writes a new file durably, in the cluster first when there is one: a replica writes nothing (NotPrimary). */
export async function writeShared(dataDir: string, path: string, data: Buffer, shared: SharedFiles | null): Promise<void> {
  await shared?.put(path, data);
  await writeDurably(join(dataDir, path), data);
}

/**
 * A file's bytes from the data directory, or else from the cluster, keeping a copy (files never change once
 * written, so the copy stays good); null when neither has it.
 */
export async function readShared(dataDir: string, path: string, shared: SharedFiles | null): Promise<Buffer | null> {
  const local = await readIfPresent(join(dataDir, path));
  if (local || !shared) return local;
  const fetched = await shared.get(path);
  if (fetched) {
    await writeDurably(join(dataDir, path), fetched).catch((error: unknown) => {
      // Another request for it made the copy first.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    });
  }
  return fetched;
}

/**
 * A file as a response body read from the data directory a piece at a time; a file only the cluster has is
 * fetched (readShared keeps a copy) and sent from that copy. Null when neither has it.
 */
export async function openShared(dataDir: string, path: string, shared: SharedFiles | null): Promise<BodyStream | null> {
  const local = await fileBody(join(dataDir, path));
  if (local || !shared) return local;
  const fetched = await readShared(dataDir, path, shared);
  return fetched ? fileBody(join(dataDir, path)) : null;
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
