import { mkdirSync } from 'node:fs';
import { open, type Database, type RootDatabase } from 'lmdb';
import { DEFAULT_ARCHIVE_RETENTION_MS, LogArchive, LogHistory, type HistoryEntry } from './archive.ts';
import { decode, encode, FORMAT_VERSION } from './codec.ts';
import { CommitDelay, DEFAULT_COMMIT_DELAY_MS, type Entry } from './commit-delay.ts';
import { checkVersion, snapshotRecordOf, type BodyWrite, type LogRecord, type SnapshotRecord } from './records.ts';

export interface StoreOptions {
  /** Wait for the OS to flush each group commit to disk before acknowledging (power-loss durability). */
  waitForFlush?: boolean;
  /** how long log records a snapshot covered stay in the log archive (see archive.ts); 0: not kept */
  archiveRetentionMs?: number;
  /** the clock archive pruning goes by */
  now?: () => number;
  /**
   * Open for reading only (`verify`): LMDB's read-only mode, which writes nothing and makes no file (a
   * read-only copy or mount is read; a lock file it may not write is left alone), and lmdb-js gives the
   * databases no write methods, so a write throws.
   */
  readOnly?: boolean;
  /**
   * How long, at most, log appends that came while a commit was in flight wait for more before their own
   * commit (see commit-delay.ts); 0: each is handed to LMDB at once.
   */
  commitDelayMs?: number;
  /**
   * LMDB's classic commit, which flushes before the next commit starts, instead of lmdb-js's overlapping
   * flush, whose commits overlap the previous one's flush: about 15 % less CPU per commit in the fourth
   * pass's measure, not better per send with the commit delay on a loaded machine (bench/README.md, "Fifth
   * pass"). A commit always waits for its flush then, whatever `waitForFlush` says.
   */
  classicCommit?: boolean;
}

/**
 * A write the data directory did not take (disk full, file size limit, I/O error): nothing of the group
 * commit holding it was stored. `reason` is the operating system's, as LMDB reports it.
 */
export class StorageError extends Error {
  constructor(readonly reason: string) {
    super(`storage failure: ${reason}`);
  }
}

/**
 * lmdb-js rejects a failed commit's promises with 'Commit failed', the reason in `commitError`, a second
 * promise that it rejects right after (usually: when the failure is noticed outside the commit's callback,
 * only with the next failure, maybe never). The reason is taken if it comes within this turn of the event
 * loop, so that no write waits on it; either way that promise is marked handled (unhandled, it would end
 * the process).
 */
async function storageError(error: unknown): Promise<StorageError> {
  const commitError = (error as { commitError?: Promise<unknown> } | null)?.commitError;
  const fallback = error instanceof Error ? error.message : String(error);
  if (!commitError) return new StorageError(fallback);
  commitError.catch(() => {});
  const cause = await Promise.race([
    commitError.then(() => null, (reason: unknown) => reason),
    new Promise<null>((resolve) => setImmediate(() => resolve(null))),
  ]);
  return new StorageError(cause instanceof Error ? cause.message : fallback);
}

/**
 * lmdb-js 3.5 also rejects promises of its own that nobody holds when a commit fails: the end of each
 * event-turn batch, and the `commitError` of a failure no write was told of. Node would end the process for
 * them. The writes of a failed commit report it through their own promises (append, writeSnapshots), so
 * these are dropped. Any other unhandled rejection keeps Node's default: it is thrown, and ends the process,
 * unless another listener (a test runner) takes it. Remove when lmdb-js stops leaving them unhandled.
 */
function dropOrphanedCommitRejection(reason: unknown): void {
  if (reason instanceof Error && 'commitError' in reason) {
    (reason as { commitError: Promise<unknown> }).commitError.catch(() => {});
    return;
  }
  if (reason instanceof Error && /[/\\]lmdb[/\\]write\.js:/.test(reason.stack ?? '')) return;
  if (process.listenerCount('unhandledRejection') === 1) throw reason;
}

interface SnapshotMeta {
  v: number;
  seq: number;
  clean: boolean;
}

/** The last backup of a data directory: when it was taken, its size in bytes (data and files), its log position. */
export interface BackupRecord {
  at: number;
  bytes: number;
  seq: number;
}

type Key = string | number | (string | number)[];

/**
 * The meta key of the write that gives an environment opened with an empty free-page database a record in
 * it (see sealFreeList).
 */
const SEAL_KEY = 'free-list-seal';

/**
 * The LMDB data directory: a write-ahead log keyed by sequence number, actor snapshots keyed by
 * [kind, id], and a little metadata. Reads are synchronous; writes are asynchronous and lmdb-js commits
 * every write issued in one event-loop turn in one transaction (group commit).
 */
export class Store {
  private readonly root: RootDatabase<Buffer, Key>;
  private readonly log: Database<Buffer, number>;
  private readonly snaps: Database<Buffer, [string, string]>;
  /** message bodies by [realm, message], written with the snapshots (FORMAT_VERSION 3) */
  private readonly bodies: Database<Buffer, [number, number]>;
  private readonly meta: Database<Buffer, string>;
  private readonly archiveDb: Database<Buffer, number>;
  private readonly archive: LogArchive;
  private readonly now: () => number;
  private readonly waitForFlush: boolean;
  private readonly commits: CommitDelay;
  private closed = false;

  constructor(readonly dir: string, options: StoreOptions = {}) {
    const readOnly = options.readOnly ?? false;
    if (!readOnly) mkdirSync(dir, { recursive: true });
    this.waitForFlush = options.waitForFlush ?? true;
    if (!process.listeners('unhandledRejection').includes(dropOrphanedCommitRejection)) {
      process.on('unhandledRejection', dropOrphanedCommitRejection);
    }
    this.root = open<Buffer, Key>({
      path: dir,
      // lmdb-js guesses from the path: a name with a dot ('data.2026', mktemp's 'tmp.X') would be taken
      // for a file, and opening failed with 'Is a directory'. The data directory is always a directory.
      noSubdir: false,
      encoding: 'binary',
      compression: false,
      separateFlushed: true,
      // lmdb-js's overlapping flush (its default, but when reading only) unless LMDB's classic commit is asked
      // for. A directory may go from one mode to the other either way, after a crash too: each finds every
      // commit the other made (test/commit-modes.test.ts).
      overlappingSync: !readOnly && !(options.classicCommit ?? false),
      readOnly,
    } as Parameters<typeof open>[0]) as RootDatabase<Buffer, Key>;
    this.log = this.root.openDB<Buffer, number>({ name: 'log', encoding: 'binary' });
    this.snaps = this.root.openDB<Buffer, [string, string]>({ name: 'snapshots', encoding: 'binary' });
    this.meta = this.root.openDB<Buffer, string>({ name: 'meta', encoding: 'binary' });
    this.bodies = this.root.openDB<Buffer, [number, number]>({ name: 'bodies', encoding: 'binary' });
    this.archiveDb = this.root.openDB<Buffer, number>({ name: 'archive', encoding: 'binary' });
    this.archive = new LogArchive(this.archiveDb, options.archiveRetentionMs ?? DEFAULT_ARCHIVE_RETENTION_MS);
    this.now = options.now ?? Date.now;
    this.commits = new CommitDelay(options.commitDelayMs ?? DEFAULT_COMMIT_DELAY_MS, (entries) => this.writeEntries(entries));
    if (!readOnly) this.sealFreeList();
  }

  /**
   * A compacted copy (`chat-server snapshot` before this version wrote them, `mdb_env_copy2` with
   * MDB_CP_COMPACT) has an empty free-page database (LMDB's FREE_DBI). lmdb-js 3.5's mdb_page_alloc
   * mishandles that: the first commit that frees more than about 250 pages (4 KiB pages: the list of freed
   * page numbers no longer fits in a leaf node) stores that list as the free database's first record, which
   * needs an overflow page; allocating it, mdb_page_alloc walks the free database for reusable pages, finds
   * the root leaf just created with no key in it yet, and mdb_cursor_last reads the node at index -1 of that
   * empty page: the process aborts (`Assertion 'key.mv_size > 0' failed in mdb_page_alloc()`) or the commit
   * fails (MDB_BAD_VALSIZE, `mdb_page_alloc error`, then MDB_BAD_TXN). A boot that trims thousands of log
   * entries, or a restore --until that drops them, was such a commit. A live environment always holds
   * free-page records (every commit that copies a page on write stores the old one's number), so it is only
   * the first commit after a compacted copy that meets this: one small write first, which copies the meta
   * database's page, or the main database's, and so frees one, leaves a record in the free database, and from then on it is never
   * empty when a big commit comes (test/lmdb-compacted-copy.test.ts reproduces it with lmdb-js alone).
   */
  private sealFreeList(): void {
    const stats = this.root.getStats() as { free?: { entryCount?: number } };
    if ((stats.free?.entryCount ?? 0) > 0) return;
    this.meta.putSync(SEAL_KEY, encode({ v: FORMAT_VERSION, at: this.now() }));
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

  /**
   * Appends one log entry; resolves once the group commit holding it is durable, rejects with a StorageError
   * when that commit failed. While other appends are in flight it may wait a moment to share their next
   * commit (see commit-delay.ts).
   */
  append(record: LogRecord): Promise<void> {
    // Encoded now: the record's arrays may be the live state's, which moves on while the entry waits.
    return this.commits.append({ seq: record.seq, bytes: encode(record) });
  }

  /**
   * Writes entries in this turn of the event loop, so in one commit (lmdb-js commits each turn's writes
   * together); resolves once it is durable. (The flush is awaited only after the commit succeeded: a failed
   * commit's `flushed` never settles.)
   */
  private writeEntries(entries: Entry[]): Promise<void> {
    let written!: Promise<boolean> & { flushed?: Promise<unknown> };
    for (const { seq, bytes } of entries) written = this.log.put(seq, bytes) as typeof written;
    const first = entries[0]!.seq;
    return written.then(
      async () => {
        // LMDB may still take a later commit after one failed (it reuses freed pages where the failed one
        // needed new ones). These entries were decided against a state that held the lost one's changes:
        // they are not acknowledged, and the next boot drops them (a gap in the log, see readLog). The failed
        // commit's handler below runs first: lmdb-js settles commits in order and this check is synchronous.
        if (this.failedSeq !== null && this.failedSeq < first) {
          throw new StorageError(`log entry ${this.failedSeq}, before this one, could not be written`);
        }
        if (this.waitForFlush && written.flushed) await written.flushed;
      },
      (error: unknown) => {
        this.failedSeq ??= first;
        this.failed = true;
        return storageError(error).then((failure) => Promise.reject(failure));
      },
    );
  }

  /** The first log entry whose commit failed, if one did since the store was opened. */
  private failedSeq: number | null = null;
  /** whether any commit failed since the store was opened */
  private failed = false;

  /** The log record at the tail that could not be read, if the last read found one (see readLog). */
  tornTail: { seq: number; error: string } | null = null;

  /**
   * The log after `afterSeq` and after the snapshot's position, in order: the records the snapshot covers
   * stay in the log as its archive (archive.ts), and a boot starts from the snapshot. A record that does not
   * decode at the very end of the log is a torn tail (a write cut short): reading stops before it and
   * `tornTail` says so. One anywhere else is corruption, and reading fails rather than skip history.
   *
   * The log has no gaps: sequence numbers are consecutive. A gap is left by a commit that failed (disk full)
   * while later ones, already handed to LMDB, succeeded: those were decided against the lost changes and
   * never acknowledged (see append). They are a tail too: reading stops at the gap and `tornTail` names the
   * first of them.
   */
  *readLog(afterSeq: number): Generator<LogRecord> {
    this.tornTail = null;
    let last = 0;
    for (const key of this.log.getKeys({ reverse: true, limit: 1 })) last = key;
    const start = Math.max(afterSeq, this.snapshotSeq());
    // The entry at the start, when the log still holds it (the archive), is where the next must follow.
    let previous: number | null = start > 0 && this.log.doesExist(start) ? start : null;
    for (const { key, value } of this.log.getRange({ start: start + 1 })) {
      if (previous !== null && key > previous + 1) {
        this.tornTail = { seq: key, error: `log entries ${key} to ${last} follow a gap after ${previous} (a write that failed); they were never acknowledged` };
        return;
      }
      previous = key;
      let record: LogRecord;
      try {
        record = logRecordOf(key, value);
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

  /**
   * The records after `afterSeq` up to the snapshot's position that the log archive keeps (archive.ts: the
   * archive database an older server wrote, then the log below the snapshot), in order, for what catches up
   * from before the snapshot (the search index, search-sync.ts). They end where the archive no longer holds
   * the next one: before `afterSeq + 1` if it was pruned (or never kept), or at a gap or an unreadable
   * record. The reader compares the last position it got with the snapshot's.
   */
  *readKept(afterSeq: number): Generator<LogRecord> {
    const end = this.snapshotSeq();
    let next = afterSeq + 1;
    for (const db of [this.archiveDb, this.log]) {
      for (const { key, value } of db.getRange({ start: next, end: end + 1 })) {
        if (key !== next) return;
        let record: LogRecord;
        try {
          record = logRecordOf(key, value);
        } catch {
          return;
        }
        yield record;
        next = key + 1;
      }
    }
  }

  /** Removes the tail found by readLog (a torn record, or the entries after a gap), so the next append continues a clean log. */
  async discardTornTail(): Promise<void> {
    if (!this.tornTail) return;
    this.commits.flush();
    const from = this.tornTail.seq;
    await this.root.transaction(() => {
      for (const key of this.log.getKeys({ start: from })) this.log.remove(key);
    });
  }

  /**
   * Every snapshot record, in key order, but for those of the kinds in `skipKinds` (a boot leaves the
   * messages' records on disk): their ranges of keys are not even read.
   */
  *readSnapshots(skipKinds: readonly string[] = []): Generator<SnapshotRecord> {
    // Keys are [kind, id]: a kind's records are one range, after the key [kind] and before [kind, '\uffff'].
    const ranges: { start?: [string, string]; end?: [string] }[] = [];
    let start: [string, string] | undefined;
    for (const kind of [...skipKinds].sort()) {
      ranges.push({ ...(start ? { start } : {}), end: [kind] });
      start = [kind, '\uffff'];
    }
    ranges.push(start ? { start } : {});
    for (const range of ranges) {
      for (const { value } of this.snaps.getRange(range as { start?: [string, string]; end?: [string, string] })) {
        yield snapshotRecordOf(value);
      }
    }
  }

  /** One snapshot record, decoded; synchronous (memory-mapped). */
  readSnapshot(kind: string, id: string): SnapshotRecord | undefined {
    const raw = this.snaps.get([kind, id]);
    return raw === undefined ? undefined : snapshotRecordOf(raw);
  }

  /**
   * One snapshot record as stored (snapshotRecordOf decodes it), not copied out of lmdb-js's shared read
   * buffer: valid until the next read of this store, for a reader that copies what it keeps (a chunk record
   * read for a few of its messages: realm/messages/chunk-slots.ts).
   */
  readSnapshotBytes(kind: string, id: string): Uint8Array | undefined {
    const raw = this.snaps.getBinaryFast([kind, id]);
    // lmdb-js's buffer is longer than the record; its `length` alone says how long the record is.
    return raw === undefined ? undefined : raw.subarray(0, raw.length);
  }

  /** The snapshot records of `kind` whose id starts with `idPrefix`, in key order. */
  *readSnapshotsOf(kind: string, idPrefix: string): Generator<SnapshotRecord> {
    for (const { value } of this.snaps.getRange({ start: [kind, idPrefix], end: [kind, `${idPrefix}\uffff`] })) {
      yield snapshotRecordOf(value);
    }
  }

  /** The ids of the snapshot records of `kind` whose id starts with `idPrefix`, in key order, without reading the records. */
  *readSnapshotIdsOf(kind: string, idPrefix: string): Generator<string> {
    for (const key of this.snaps.getKeys({ start: [kind, idPrefix], end: [kind, `${idPrefix}\uffff`] })) yield key[1];
  }

  /**
   * Writes actor snapshots covering the log up to `seq`, removes the ones named in `deleted`, and prunes
   * the archive (the log up to `seq` and before, archive.ts): all in one transaction, so a crash leaves
   * either the old or the new picture.
   */
  async writeSnapshots(seq: number, records: SnapshotRecord[], deleted: [string, string][], clean = false, bodies: readonly BodyWrite[] = []): Promise<void> {
    // Encoded now, not in the transaction's callback: lmdb-js runs that in a later turn, when the actors may
    // have moved past `seq`, and the records share their arrays with the live state.
    const encoded = records.map((record): [[string, string], Buffer] => [[record.kind, record.id], encode(record)]);
    // The log entries the snapshot covers go first: a boot reads the log only after its position.
    this.commits.flush();
    const previousSeq = this.snapshotSeq();
    const encodedBodies = bodies.map(({ realmId, messageId, body }): [[number, number], Buffer | null] => [[realmId, messageId], body === null ? null : encode(body)]);
    try {
      await this.root.transaction(() => {
        for (const [key, bytes] of encoded) this.snaps.put(key, bytes);
        for (const key of deleted) this.snaps.remove(key);
        for (const [key, bytes] of encodedBodies) {
          if (bytes) this.bodies.put(key, bytes);
          else this.bodies.remove(key);
        }
        this.meta.put('snapshot', encode({ v: FORMAT_VERSION, seq, clean } satisfies SnapshotMeta));
        this.archive.prune(this.log, previousSeq, seq, this.now());
      });
    } catch (error) {
      this.failed = true;
      throw await storageError(error);
    }
    if (this.waitForFlush) await this.root.flushed;
  }

  readBody(realmId: number, messageId: number): unknown {
    const raw = this.bodies.get([realmId, messageId]);
    return raw === undefined ? undefined : decode(raw);
  }

  /**
   * A stored body's bytes, not copied out of lmdb-js's shared read buffer: valid until the next read of this
   * store, for a reader that takes what it needs at once (a cold GET /messages copies the text into its answer).
   */
  readBodyBytes(realmId: number, messageId: number): Uint8Array | undefined {
    return this.bodies.getBinaryFast([realmId, messageId]);
  }

  /** The ids of the messages of the realm that have a body stored, in order, none decoded. */
  *readBodyIds(realmId: number): Generator<number> {
    for (const key of this.bodies.getKeys({ start: [realmId, 0], end: [realmId + 1, 0] })) yield key[1];
  }

  /** Every message body stored for the realm, in id order: one pass over the pages, far cheaper than a read per id. */
  *readBodies(realmId: number): Generator<[messageId: number, body: unknown]> {
    for (const { key, value } of this.bodies.getRange({ start: [realmId, 0], end: [realmId + 1, 0] })) yield [key[1], decode(value)];
  }

  /** The archive and the live log, as point-in-time restore and verify read them. */
  history(): LogHistory {
    return LogHistory.of(this.dir, this.root as unknown as RootDatabase<Buffer, number>, this.log, this.archiveDb, () => this.lastSeq());
  }

  archiveStats(): { entries: number; oldestAt: number | null } {
    return this.archive.stats(this.log, this.snapshotSeq(), this.lastSeq());
  }

  /** Point-in-time restore: drops the log records after `seq`, the changes made after the moment restored. */
  async truncateLogAfter(seq: number): Promise<void> {
    this.commits.flush();
    // One transaction: the LMDB abort that many removals met came from the compacted copy (see sealFreeList).
    await this.root.transaction(() => {
      for (const key of this.log.getKeys({ start: seq + 1 })) this.log.remove(key);
    });
  }

  /** Point-in-time restore: appends records read from another data directory's history, bytes unchanged. */
  async appendEntries(entries: readonly HistoryEntry[]): Promise<void> {
    this.commits.flush();
    await this.root.transaction(() => {
      for (const entry of entries) this.log.put(entry.seq, entry.bytes);
    });
  }

  /**
   * A consistent, compacted copy of the whole environment into `dir` (which must be empty), taken in one
   * read transaction while writers go on.
   */
  async backup(dir: string): Promise<{ seq: number }> {
    mkdirSync(dir, { recursive: true });
    await this.root.backup(dir, true);
    // Sealed at once (see sealFreeList), so that the copy is sound for any version that opens it.
    const copy = new Store(dir, { waitForFlush: true, now: this.now });
    try {
      return { seq: copy.lastSeq() };
    } finally {
      await copy.close();
    }
  }

  /** Records the last backup taken of this directory (`chat-server snapshot`), for /health and /metrics. */
  async recordBackup(backup: BackupRecord): Promise<void> {
    await this.meta.put('backup', encode({ v: FORMAT_VERSION, ...backup }));
  }

  lastBackup(): BackupRecord | null {
    const raw = this.meta.get('backup');
    if (!raw) return null;
    const { at, bytes, seq } = checkVersion('backup meta', decode<BackupRecord & { v: number }>(raw));
    return { at, bytes, seq };
  }

  /** The log entries after the snapshot's position: what a boot replays. */
  logCount(): number {
    return this.log.getCount({ start: this.snapshotSeq() + 1 });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.commits.flush();
    await this.commits.last.catch(() => {});
    await Promise.resolve(this.root.committed).catch(() => {});
    const closed = this.root.close();
    // lmdb-js waits for every commit's flush before it closes, and a failed commit's flush never comes:
    // after a failure, stop waiting after a moment (everything committed is on disk; the process ends).
    if (this.failed) await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 200).unref())]);
    else await closed;
  }
}

/** A stored log record decoded and checked: its format version, its position as its key, its changes. */
function logRecordOf(key: number, value: Buffer): LogRecord {
  const record = checkVersion('log record', decode<LogRecord>(value));
  if (record.seq !== key || !Array.isArray(record.changes)) throw new Error(`record ${key} is malformed`);
  return record;
}
