import { mkdirSync } from 'node:fs';
import { open, type Database, type RootDatabase } from 'lmdb';
import { decode, encode, FORMAT_VERSION } from './codec.ts';
import { checkVersion, type LogRecord, type SnapshotRecord } from './records.ts';

export interface StoreOptions {
  /** Wait for the OS to flush each group commit to disk before acknowledging (power-loss durability). */
  waitForFlush?: boolean;
}

interface SnapshotMeta {
  v: number;
  seq: number;
  clean: boolean;
}

type Key = string | number | (string | number)[];

/**
 * The LMDB data directory: a write-ahead log keyed by sequence number, actor snapshots keyed by
 * [kind, id], and a little metadata. Reads are synchronous; writes are asynchronous and lmdb-js commits
 * every write issued in one event-loop turn in one transaction (group commit).
 */
export class Store {
  private readonly root: RootDatabase<Buffer, Key>;
  private readonly log: Database<Buffer, number>;
  private readonly snaps: Database<Buffer, [string, string]>;
  private readonly meta: Database<Buffer, string>;
  private readonly waitForFlush: boolean;
  private closed = false;

  constructor(readonly dir: string, options: StoreOptions = {}) {
    mkdirSync(dir, { recursive: true });
    this.waitForFlush = options.waitForFlush ?? true;
    this.root = open<Buffer, Key>({
      path: dir,
      encoding: 'binary',
      compression: false,
      separateFlushed: true,
    } as Parameters<typeof open>[0]) as RootDatabase<Buffer, Key>;
    this.log = this.root.openDB<Buffer, number>({ name: 'log', encoding: 'binary' });
    this.snaps = this.root.openDB<Buffer, [string, string]>({ name: 'snapshots', encoding: 'binary' });
    this.meta = this.root.openDB<Buffer, string>({ name: 'meta', encoding: 'binary' });
  }

  /** The highest sequence number ever used: the last log key, or the snapshot position if the log is trimmed. */
  lastSeq(): number {
    let last = 0;
    for (const key of this.log.getKeys({ reverse: true, limit: 1 })) last = key;
    return Math.max(last, this.snapshotSeq());
  }

  snapshotSeq(): number {
    return this.snapshotMeta().seq;
  }

  /** True when the last process wrote its final snapshot on the way out (graceful shutdown). */
  wasCleanShutdown(): boolean {
    return this.snapshotMeta().clean;
  }

  private snapshotMeta(): SnapshotMeta {
    const raw = this.meta.get('snapshot');
    return raw ? checkVersion('snapshot meta', decode<SnapshotMeta>(raw)) : { v: FORMAT_VERSION, seq: 0, clean: false };
  }

  /** Appends one log entry; resolves once the group commit holding it is durable. */
  append(record: LogRecord): Promise<void> {
    const written = this.log.put(record.seq, encode(record)) as Promise<boolean> & { flushed?: Promise<unknown> };
    return (this.waitForFlush && written.flushed ? written.flushed : written).then(() => undefined);
  }

  /** The log record at the tail that could not be read, if the last read found one (see readLog). */
  tornTail: { seq: number; error: string } | null = null;

  /**
   * The log after `afterSeq`, in order. A record that does not decode at the very end of the log is a
   * torn tail (a write cut short): reading stops before it and `tornTail` says so. One anywhere else is
   * corruption, and reading fails rather than skip history.
   */
  *readLog(afterSeq: number): Generator<LogRecord> {
    this.tornTail = null;
    let last = 0;
    for (const key of this.log.getKeys({ reverse: true, limit: 1 })) last = key;
    for (const { key, value } of this.log.getRange({ start: afterSeq + 1 })) {
      let record: LogRecord;
      try {
        record = checkVersion('log record', decode<LogRecord>(value));
        if (record.seq !== key || !Array.isArray(record.changes)) throw new Error(`record ${key} is malformed`);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        if (key === last) {
          this.tornTail = { seq: key, error: message };
          return;
        }
        throw new Error(`log record ${key} is corrupt (${message}); later records exist, so it is not a torn tail`);
      }
      yield record;
    }
  }

  /** Removes a torn tail record found by readLog, so the next append continues a clean log. */
  async discardTornTail(): Promise<void> {
    if (!this.tornTail) return;
    await this.log.remove(this.tornTail.seq);
  }

  *readSnapshots(): Generator<SnapshotRecord> {
    for (const { value } of this.snaps.getRange({})) {
      yield checkVersion('snapshot', decode<SnapshotRecord>(value));
    }
  }

  /**
   * Writes actor snapshots covering the log up to `seq`, removes the ones named in `deleted`, and trims
   * the log through `seq`: all in one transaction, so a crash leaves either the old or the new picture.
   */
  async writeSnapshots(seq: number, records: SnapshotRecord[], deleted: [string, string][], clean = false): Promise<void> {
    await this.root.transaction(() => {
      for (const record of records) this.snaps.put([record.kind, record.id], encode(record));
      for (const key of deleted) this.snaps.remove(key);
      this.meta.put('snapshot', encode({ v: FORMAT_VERSION, seq, clean } satisfies SnapshotMeta));
      for (const key of this.log.getKeys({ end: seq + 1 })) this.log.remove(key);
    });
    if (this.waitForFlush) await this.root.flushed;
  }

  /**
   * A consistent, compacted copy of the whole environment into `dir` (which must be empty), taken in one
   * read transaction while writers go on.
   */
  async backup(dir: string): Promise<void> {
    mkdirSync(dir, { recursive: true });
    await this.root.backup(dir, true);
  }

  logCount(): number {
    return this.log.getCount();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.root.committed;
    await this.root.close();
  }
}
