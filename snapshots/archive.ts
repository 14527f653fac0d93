import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { decode } from './codec.ts';
import { checkVersion, type LogRecord } from './records.ts';

/** A week: long enough to notice a mistake after a weekend and go back to just before it. */
export const DEFAULT_ARCHIVE_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Most archive records one snapshot's transaction prunes (beyond as many as it newly covers), so that a
 * retention made much shorter does not turn one snapshot into a commit of millions of deletions; the next
 * snapshots go on where it stopped.
 */
const PRUNE_BATCH = 20_000;

/** One stored log record: its position, its commit time, and its bytes exactly as stored. */
export interface HistoryEntry {
  seq: number;
  /** wall-clock milliseconds when it was committed (LogRecord.at) */
  at: number;
  bytes: Buffer;
}

/** Decodes a stored log record far enough to know it is whole and when it was committed. */
export function historyEntry(key: number, bytes: Buffer): HistoryEntry {
  const record = checkVersion('log record', decode<LogRecord>(bytes));
  if (record.seq !== key || typeof record.at !== 'number' || !Array.isArray(record.changes)) throw new Error(`record ${key} is malformed`);
  return { seq: key, at: record.at, bytes };
}

type LogDb = Database<Buffer, number>;

/**
 * The log archive: the log records a snapshot covered, kept instead of deleted, so that a base backup
 * (`chat-server snapshot`) plus the records after it can rebuild the state of any moment since (`restore
 * --until`). Since 2026-11-28 they stay where they were written, in the log below the snapshot's position
 * (a boot reads only what follows it, Store.readLog): a snapshot no longer copies every record it covers
 * into another database and deletes it from the log, which cost about as much of its commit as the records
 * it writes (bench/README.md). The `archive` database is where servers before that moved them: it is read
 * before the log and pruned, never written. Records older than the retention are pruned by the snapshots
 * that follow, so the history stays bounded as the log does.
 */
export class LogArchive {
  constructor(
    private readonly db: LogDb,
    /** 0: nothing is kept (and what an earlier retention kept is pruned) */
    readonly retentionMs: number,
  ) {}

  /**
   * Inside the snapshot's write transaction, the snapshot moving from position `previousSeq` to `seq`:
   * removes the records up to `seq` committed before `now - retention` (every one of them with a retention
   * of 0), the archive database's first, at most PRUNE_BATCH more than the snapshot newly covers. Where
   * the retention starts is found by a binary search (commit times follow positions): a server that has run
   * past its retention prunes about as many records per snapshot as it newly covers, and those are removed
   * by key, none of them read.
   */
  prune(log: LogDb, previousSeq: number, seq: number, now: number): void {
    let budget = PRUNE_BATCH + Math.max(0, seq - previousSeq);
    for (const db of [this.db, log]) {
      const kept = this.retentionMs > 0 ? firstKept(db, seq + 1, now - this.retentionMs) : seq + 1;
      for (const key of db.getKeys({ end: kept })) {
        if (budget === 0) return;
        db.remove(key);
        budget--;
      }
      // A record within the retention: every later one is too, the log's after the archive database's.
      if (kept <= seq) return;
    }
  }

  /**
   * How many records the archive (the archive database, and the log up to `snapshotSeq`) holds and when the
   * oldest was committed (for metrics); `lastSeq` is the store's (Store.lastSeq).
   */
  stats(log: LogDb, snapshotSeq: number, lastSeq: number): { entries: number; oldestAt: number | null } {
    const count = (db: LogDb) => (db.getStats() as { entryCount?: number }).entryCount ?? 0;
    // The log past the snapshot is consecutive (a boot drops what follows a gap): counted by its positions.
    const entries = count(this.db) + Math.max(0, count(log) - (lastSeq - snapshotSeq));
    let oldestAt: number | null = null;
    for (const { value } of this.db.getRange({ limit: 1 })) oldestAt = commitTime(value);
    if (oldestAt === null) for (const { value } of log.getRange({ end: snapshotSeq + 1, limit: 1 })) oldestAt = commitTime(value);
    return { entries, oldestAt };
  }
}

/**
 * The first position below `end` from which on the records were committed at `cutoff` or later (`end` if
 * none was): a binary search over positions, reading the first record at or after each, so a few records
 * for any number. Commit times follow positions (a clock set back may break this by a little: such a
 * record waits for a later prune); an unreadable record counts as the readable one after it.
 */
function firstKept(db: LogDb, end: number, cutoff: number): number {
  let low = end;
  for (const key of db.getKeys({ end, limit: 1 })) low = key;
  let high = end;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    let at: number | null = null;
    for (const { value } of db.getRange({ start: middle, end })) if ((at = commitTime(value)) !== null) break;
    if (at !== null && at >= cutoff) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** When a stored record was committed, or null if it cannot be read. */
function commitTime(bytes: Buffer): number | null {
  try {
    const at = decode<LogRecord>(bytes).at;
    return typeof at === 'number' ? at : null;
  } catch {
    return null;
  }
}

/** What `verify` reports of a data directory's archive. */
export interface ArchiveReport {
  entries: number;
  first: { seq: number; at: number } | null;
  last: { seq: number; at: number } | null;
  problems: string[];
}

/**
 * A data directory's history as point-in-time restore reads it: the archive database an older server
 * moved records into, then the log (the records the snapshot covers, and those after it), read in one read
 * transaction (a server pruning meanwhile does so in one write transaction, which this reader does not see
 * half done). Opened on the directory of a restore's `--log` (read-only, even while a server runs on it), or
 * on a store's own environment.
 */
export class LogHistory {
  private constructor(
    readonly dir: string,
    private readonly root: RootDatabase<Buffer, number>,
    private readonly log: LogDb | null,
    private readonly archive: LogDb | null,
    /** the highest position the directory ever reached (Store.lastSeq): what its history once went up to */
    readonly lastSeq: () => number,
    private readonly owned: boolean,
  ) {}

  /** A view of an open environment's log and archive (the store keeps owning it). */
  static of(dir: string, root: RootDatabase<Buffer, number>, log: LogDb, archive: LogDb, lastSeq: () => number): LogHistory {
    return new LogHistory(dir, root, log, archive, lastSeq, false);
  }

  /** Opens another data directory read-only: nothing is written to it, a server may keep running on it. */
  static open(dir: string): LogHistory {
    if (!existsSync(join(dir, 'data.mdb'))) throw new Error(`no data in ${dir}`);
    const root = open<Buffer, number>({ path: dir, noSubdir: false, readOnly: true, encoding: 'binary', compression: false } as Parameters<typeof open>[0]) as RootDatabase<Buffer, number>;
    // Read-only, a database that was never created is not there (an older server kept no archive).
    const named = (name: string): LogDb | null => {
      try {
        return (root.openDB<Buffer, number>({ name, encoding: 'binary' }) as LogDb | undefined) ?? null;
      } catch {
        return null;
      }
    };
    const log = named('log');
    const meta = root.openDB<Buffer, string>({ name: 'meta', encoding: 'binary' }) as Database<Buffer, string> | undefined;
    const lastSeq = () => {
      let last = 0;
      for (const key of log?.getKeys({ reverse: true, limit: 1 }) ?? []) last = key;
      const snapshot = meta?.get('snapshot');
      return Math.max(last, snapshot ? decode<{ seq: number }>(snapshot).seq : 0);
    };
    return new LogHistory(dir, root, log, named('archive'), lastSeq, true);
  }

  /**
   * The records after `afterSeq` in order: the archived ones, then the live log's. The log ends where
   * Store.readLog ends it: at an unreadable record at its very end (a write cut short), or at a gap (the
   * records after it were never acknowledged); an unreadable record anywhere else is an error.
   */
  *after(afterSeq: number): Generator<HistoryEntry> {
    const transaction = this.root.useReadTransaction();
    try {
      let next = afterSeq + 1;
      if (this.archive) {
        for (const { key, value } of this.archive.getRange({ start: next, transaction })) {
          yield this.entry(key, value);
          next = key + 1;
        }
      }
      if (!this.log) return;
      let last = 0;
      for (const key of this.log.getKeys({ reverse: true, limit: 1, transaction })) last = key;
      let previous: number | null = null;
      for (const { key, value } of this.log.getRange({ start: next, transaction })) {
        if (previous !== null && key !== previous + 1) return;
        previous = key;
        let entry: HistoryEntry;
        try {
          entry = this.entry(key, value);
        } catch (error) {
          if (key === last) return;
          throw error;
        }
        yield entry;
      }
    } finally {
      transaction.done();
    }
  }

  /** The record at `seq`, if the archive or the log still holds it. */
  find(seq: number): HistoryEntry | null {
    for (const db of [this.archive, this.log]) {
      const value = db?.get(seq);
      if (value) return this.entry(seq, value);
    }
    return null;
  }

  /**
   * Checks every archived record (the archive database's, then the log's up to `snapshotSeq`): readable,
   * consecutive, the archive database's all before the log's and the snapshot's position.
   */
  checkArchive(snapshotSeq: number): ArchiveReport {
    const report: ArchiveReport = { entries: 0, first: null, last: null, problems: [] };
    const transaction = this.root.useReadTransaction();
    try {
      let previous = null as number | null;
      const check = (key: number, value: Buffer) => {
        report.entries++;
        if (previous !== null && key !== previous + 1) report.problems.push(`the log archive has a gap: positions ${previous + 1} to ${key - 1} are missing`);
        previous = key;
        try {
          const { at } = historyEntry(key, value);
          report.first ??= { seq: key, at };
          report.last = { seq: key, at };
        } catch (error) {
          report.problems.push(`archived log record ${key} cannot be read (${error instanceof Error ? error.message : String(error)})`);
        }
      };
      for (const { key, value } of this.archive?.getRange({ transaction }) ?? []) check(key, value);
      const archiveEnd: number | null = previous;
      if (archiveEnd !== null && archiveEnd > snapshotSeq) report.problems.push(`the log archive reaches position ${archiveEnd}, past the snapshot position ${snapshotSeq}`);
      if (archiveEnd !== null && this.log) {
        for (const key of this.log.getKeys({ end: archiveEnd + 1, limit: 1, transaction })) {
          report.problems.push(`log record ${key} is both in the log and in the archive`);
        }
      }
      for (const { key, value } of this.log?.getRange({ start: (archiveEnd ?? 0) + 1, end: snapshotSeq + 1, transaction }) ?? []) check(key, value);
    } finally {
      transaction.done();
    }
    return report;
  }

  async close(): Promise<void> {
    if (this.owned) await this.root.close();
  }

  private entry(key: number, value: Buffer): HistoryEntry {
    try {
      return historyEntry(key, Buffer.from(value));
    } catch (error) {
      throw new Error(`log record ${key} in ${this.dir} cannot be read (${error instanceof Error ? error.message : String(error)})`);
    }
  }
}
