import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream } from 'node:stream/web';
import type { JetStreamClient } from '@nats-io/jetstream';
import { Objm, setSha256Backend, StorageType, type ObjectStore } from '@nats-io/obj';
import { LEGACY_QUEUE_KIND, PAYLOAD_KIND, QUEUE_KIND } from '../../actors/queue/snapshot.ts';
import type { Store } from '../../snapshots/store.ts';
import { backupFiles, FILE_FOLDERS, filesBelow } from '../backup-files.ts';

/** The organization's latest snapshot, as the primary stored it: what an empty node starts from. */
const BUCKET = 'chat_snapshot';
/** The object naming the latest snapshot (a Manifest); written last, so it never names a missing object. */
const MANIFEST = 'latest';
/** Files are written whole and never changed (uploads.ts): each is stored once, under its path. */
const FILE_PREFIX = 'file:';
const DATA_FILE = 'data.mdb';

// The object store checks every object with SHA-256, chunk by chunk as it is put and read (never the whole
// file at once); node:crypto hashes each chunk many times faster than its pure-JS default, which would hold
// the event loop for most of a large snapshot's upload or download.
setSha256Backend('native');

export interface Manifest {
  /** the object holding the LMDB copy (its name changes with each snapshot: a reader never sees half of one) */
  data: string;
  /** the log position the copy holds */
  seq: number;
  /** the first stream position not covered by the copy: a node that starts from it follows from there */
  streamStart: number;
  /** the organization's files at the time (paths below the data directory) */
  files: string[];
  at: number;
  /** the snapshot before, kept until the next one: the stream keeps what follows it (see ClusterNode) */
  previous: { data: string; seq: number; streamStart: number } | null;
}

/**
 * The snapshot a cluster keeps in a JetStream object store (replicated as the stream is): the same files a
 * backup holds (`chat-server snapshot`: a consistent LMDB copy and the organization's files, backupFiles),
 * and the stream position after it.
 */
export class SnapshotBucket {
  private constructor(private readonly os: ObjectStore) {}

  /** Opens the bucket, creating it if need be (the primary, once it stores a snapshot). */
  static async open(js: JetStreamClient, replicas: number): Promise<SnapshotBucket> {
    return new SnapshotBucket(await new Objm(js).create(BUCKET, { replicas, storage: StorageType.File }));
  }

  /** The bucket if a primary created it; null if none ever stored a snapshot (a cluster's first start). */
  static async find(js: JetStreamClient): Promise<SnapshotBucket | null> {
    try {
      return new SnapshotBucket(await new Objm(js).open(BUCKET));
    } catch (error) {
      if (error instanceof Error && /not found/i.test(error.message)) return null;
      throw error;
    }
  }

  async latest(): Promise<Manifest | null> {
    const raw = await this.os.getBlob(MANIFEST);
    return raw ? (JSON.parse(new TextDecoder().decode(raw)) as Manifest) : null;
  }

  /**
   * Takes a backup of `store` (in `workDir`, removed after) and stores it as the latest snapshot.
   * `streamStart(seq)` gives the first stream position the copy (at log position seq) does not cover, or
   * null when that is not known (the snapshot is then not stored).
   */
  async store(store: Store, dataDir: string, workDir: string, streamStart: (seq: number) => number | null): Promise<Manifest | null> {
    await rm(workDir, { recursive: true, force: true });
    try {
      let seq = 0;
      await backupFiles(dataDir, workDir, async () => {
        ({ seq } = await store.backup(workDir));
      });
      const start = streamStart(seq);
      if (start === null) return null;
      const before = await this.latest();
      const data = `data-${seq}-${Date.now()}`;
      await this.os.put({ name: data }, Readable.toWeb(createReadStream(join(workDir, DATA_FILE))) as unknown as globalThis.ReadableStream<Uint8Array>);
      const files: string[] = [];
      for (const folder of FILE_FOLDERS) {
        for (const path of await filesBelow(join(workDir, folder))) {
          const relative = join(folder, path);
          files.push(relative);
          if (await this.os.info(FILE_PREFIX + relative)) continue;
          await this.os.put({ name: FILE_PREFIX + relative }, Readable.toWeb(createReadStream(join(workDir, relative))) as unknown as globalThis.ReadableStream<Uint8Array>);
        }
      }
      const previous = before ? { data: before.data, seq: before.seq, streamStart: before.streamStart } : null;
      const manifest: Manifest = { data, seq, streamStart: start, files, at: Date.now(), previous };
      await this.os.putBlob({ name: MANIFEST }, new TextEncoder().encode(JSON.stringify(manifest)));
      if (before?.previous) await this.os.delete(before.previous.data).catch(() => undefined);
      return manifest;
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  }

  /** Stores one of the organization's files (`path` below the data directory) under the name a snapshot gives it. */
  async putFile(path: string, data: Buffer): Promise<void> {
    await this.os.putBlob({ name: FILE_PREFIX + path }, data);
  }

  async getFile(path: string): Promise<Buffer | null> {
    const data = await this.os.getBlob(FILE_PREFIX + path);
    return data ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : null;
  }

  async removeFile(path: string): Promise<void> {
    if (await this.os.info(FILE_PREFIX + path)) await this.os.delete(FILE_PREFIX + path);
  }

  /** Writes the latest snapshot into an empty data directory; null if the cluster has stored none yet. */
  async restoreInto(dataDir: string): Promise<Manifest | null> {
    const manifest = await this.latest();
    if (!manifest) return null;
    await mkdir(dataDir, { recursive: true });
    for (const relative of manifest.files) {
      // A file removed since (an attachment deleted) is named by no record of a later snapshot either.
      await this.fetch(FILE_PREFIX + relative, join(dataDir, relative));
    }
    // The LMDB copy last, under its own name until whole: a data directory with data.mdb is a started one.
    const partial = join(dataDir, `${DATA_FILE}.joining`);
    if (!(await this.fetch(manifest.data, partial))) throw new Error(`the cluster's snapshot ${manifest.data} is gone; try again`);
    await rename(partial, join(dataDir, DATA_FILE));
    return manifest;
  }

  private async fetch(name: string, path: string): Promise<boolean> {
    const result = await this.os.get(name);
    if (!result) return false;
    await mkdir(dirname(path), { recursive: true });
    await pipeline(Readable.fromWeb(result.data as unknown as ReadableStream<Uint8Array>), createWriteStream(path));
    // The object store checks the digest once the data is read: a broken copy is an error here.
    const error = await result.error;
    if (error) throw error;
    return true;
  }
}

/** The records of event queues and of their events' payloads (actors/queue/snapshot.ts). */
const QUEUE_RECORD_KINDS = new Set([QUEUE_KIND, PAYLOAD_KIND, LEGACY_QUEUE_KIND]);

/**
 * The event queues in a snapshot of the primary's are the primary's alone (a queue is its node's): a node
 * that started from it removes them before it loads the data, as it would never be asked for them.
 */
export async function dropQueueRecords(store: Store): Promise<number> {
  const deleted: [string, string][] = [];
  for (const record of store.readSnapshots()) if (QUEUE_RECORD_KINDS.has(record.kind)) deleted.push([record.kind, record.id]);
  if (deleted.length > 0) await store.writeSnapshots(store.snapshotSeq(), [], deleted);
  return deleted.length;
}

export function hasData(dataDir: string): boolean {
  return existsSync(join(dataDir, DATA_FILE));
}
