import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { decode } from './codec.ts';
import { checkVersion, type LogRecord } from './records.ts';

/** A week: long enough to notice a mistake after a weekend and go back to just before it. */
export const DEFAULT_ARCHIVE_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Most archive records one snapshot's transaction prunes (beyond as many as it archives), so that a
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
 * --until`). Since format 6 they stay where they are, in the log database below the snapshot position: the
 * live log is what follows that position (Store.readLog), and a snapshot's transaction moves nothing (a
 * record moved into a database of its own cost a read, a put and a removal, about 2.4 us of the event loop
 * per entry, and its page writes in the snapshot's commit: bench/README.md, "Eighth pass"). A directory
 * written before format 6 keeps its older records in the `archive` database, read before the log's. Records
 * older than the retention are pruned by the snapshots that follow, so the archive stays bounded as the log does.
 */
export class LogArchive {
  constructor(
    /** the `archive` database, which directories written before format 6 moved the covered records into */
    private readonly legacy: LogDb,
    /** 0: nothing is kept (and what an earlier retention kept is pruned) */
    readonly retentionMs: number,
  ) {}

  /**
   * Inside the snapshot's write transaction, the snapshot covering the log through `seq` now, `covered`
   * records more than the one before: prunes records committed before `now - retention` (all of them with a
   * retention of 0), oldest first, at most PRUNE_BATCH + `covered`: the older archive's, then the log's up
   * to `seq`.
   */
  trim(log: LogDb, seq: number, covered: number, now: number): void {
    const cutoff = this.retentionMs > 0 ? now - this.retentionMs : Infinity;
    const budget = PRUNE_BATCH + covered;
    const pruned = pruneBefore(this.legacy, null, cutoff, budget);
    if (pruned < budget) pruneBefore(log, seq, cutoff, budget - pruned);
  }

  /** How many records the archive holds and when the oldest was committed (for metrics). */
  stats(log: LogDb, snapshotSeq: number): { entries: number; oldestAt: number | null } {
    let entries = (this.legacy.getStats() as { entryCount?: number }).entryCount ?? 0;
    let oldestAt: number | null = null;
    for (const { value } of this.legacy.getRange({ limit: 1 })) oldestAt = commitTime(value) ?? 0;
    for (const key of log.getKeys({ end: snapshotSeq + 1, limit: 1 })) {
      // The log's positions are consecutive (verify checks the archive's): no count of a long range.
      entries += Math.min(snapshotSeq - key + 1, (log.getStats() as { entryCount?: number }).entryCount ?? 0);
      if (oldestAt === null) for (const { value } of log.getRange({ start: key, limit: 1 })) oldestAt = commitTime(value) ?? 0;
    }
    return { entries, oldestAt };
  }
}

/**
 * Removes the records of `db` up to `through` (all of them if null) committed before `cutoff`, oldest first,
 * at most `budget`; returns how many. Commit times follow positions (a clock set back may break this by a
 * little: such a record waits for a later prune), so the last one to go is found by a binary search, a few
 * records decoded rather than each. An unreadable record is no use for a restore: at the head it goes with
 * the first prune; elsewhere it counts as recent, so that no record after it within the retention goes.
 */
function pruneBefore(db: LogDb, through: number | null, cutoff: number, budget: number): number {
  const range = through === null ? {} : { end: through + 1 };
  let removed = 0;
  let first: number | null = null;
  for (const { key, value } of db.getRange(range)) {
    if (removed >= budget) return removed;
    const at = cutoff === Infinity ? null : commitTime(value);
    if (at !== null) {
      // Most snapshots find the oldest record within the retention.
      if (at >= cutoff) return removed;
      first = key;
      break;
    }
    db.remove(key);
    removed++;
  }
  if (first === null) return removed;
  let last = first;
  // Reversed, a range starts at its high end.
  for (const key of db.getKeys({ ...(through === null ? {} : { start: through }), reverse: true, limit: 1 })) last = key;
  // Every record below `low` was committed before the cutoff; none from `high` on is known to be.
  let low = first;
  let high = last + 1;
  while (low < high) {
    const middle = low + Math.floor((high - low) / 2);
    let probe: { key: number; value: Buffer } | undefined;
    for (const entry of db.getRange({ start: middle, end: high, limit: 1 })) probe = entry;
    const at = probe === undefined ? null : commitTime(probe.value);
    if (probe !== undefined && at !== null && at < cutoff) low = probe.key + 1;
    else high = middle;
  }
  for (const key of [...db.getKeys({ start: first, end: low, limit: budget - removed })]) {
    db.remove(key);
    removed++;
  }
  return removed;
}

/** When a stored log record was committed, or null when it cannot be read. */
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
 * A data directory's history as point-in-time restore reads it: the archive (an older directory's `archive`
 * database, then the log's records up to the snapshot position), then the live log, read in one read
 * transaction (a server writing a snapshot meanwhile moves the position and prunes in one write
 * transaction, which this reader does not see half done). Opened on the directory of a restore's `--log`
 * (read-only, even while a server runs on it), or on a store's own environment.
 */
export class LogHistory {
  private constructor(
    readonly dir: string,
    private readonly root: RootDatabase<Buffer, number>,
    private readonly log: LogDb | null,
    private readonly archive: LogDb | null,
    /** the highest position the directory ever reached (Store.lastSeq): what its history once went up to */
    readonly lastSeq: () => number,
    /** the position its snapshot covers: the log's records up to it are archived, the live log follows */
    private readonly snapshotSeq: () => number,
    private readonly owned: boolean,
  ) {}

  /** A view of an open environment's log and archive (the store keeps owning it). */
  static of(dir: string, root: RootDatabase<Buffer, number>, log: LogDb, archive: LogDb, lastSeq: () => number, snapshotSeq: () => number): LogHistory {
    return new LogHistory(dir, root, log, archive, lastSeq, snapshotSeq, false);
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
    const snapshotSeq = () => {
      const snapshot = meta?.get('snapshot');
      return snapshot ? decode<{ seq: number }>(snapshot).seq : 0;
    };
    const lastSeq = () => {
      let last = 0;
      for (const key of log?.getKeys({ reverse: true, limit: 1 }) ?? []) last = key;
      return Math.max(last, snapshotSeq());
    };
    return new LogHistory(dir, root, log, named('archive'), lastSeq, snapshotSeq, true);
  }

  /**
   * The records after `afterSeq` in order: the archived ones, then the live log's. The live log ends where
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
      const covered = this.snapshotSeq();
      let last = 0;
      for (const key of this.log.getKeys({ reverse: true, limit: 1, transaction })) last = key;
      let previous: number | null = null;
      for (const { key, value } of this.log.getRange({ start: next, transaction })) {
        if (key <= covered) {
          yield this.entry(key, value);
          continue;
        }
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

  /** Checks every archived record: readable, consecutive, and all before the live log. */
  checkArchive(snapshotSeq: number): ArchiveReport {
    const report: ArchiveReport = { entries: 0, first: null, last: null, problems: [] };
    const transaction = this.root.useReadTransaction();
    try {
      let previous: number | null = null;
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
      const older: number | null = previous;
      if (older !== null && older > snapshotSeq) report.problems.push(`the log archive reaches position ${older}, past the snapshot position ${snapshotSeq}`);
      if (older !== null && this.log) {
        for (const key of this.log.getKeys({ end: older + 1, limit: 1, transaction })) {
          report.problems.push(`log record ${key} is both in the log and in the archive`);
        }
      }
      const start = older === null ? {} : { start: older + 1 };
      for (const { key, value } of this.log?.getRange({ ...start, end: snapshotSeq + 1, transaction }) ?? []) check(key, value);
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
