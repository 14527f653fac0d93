import { LogHistory, type HistoryEntry } from '../snapshots/archive.ts';
import { Store } from '../snapshots/store.ts';
import { ConfigError, type Config } from './config.ts';

/** Where a point-in-time restore stops: after a log position, or after the last change made by a moment. */
export type Until = { seq: number } | { time: number };

/** A whole number is a log position; anything else must be a date and time (ISO 8601; local without a zone). */
export function parseUntil(text: string): Until {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return { seq: Number(trimmed) };
  const time = Date.parse(trimmed);
  if (!/^\d{4}-\d{2}-\d{2}/.test(trimmed) || Number.isNaN(time)) {
    throw new ConfigError(`--until must be a log position (a whole number) or a date and time such as 2026-11-22T10:15:00Z, not '${text}'`);
  }
  return { time };
}

export interface Replayed {
  /** the snapshot's own position, where replay started */
  base: number;
  /** the position the restored data directory ends at */
  seq: number;
  /** when the last change restored was committed, if known */
  at: number | null;
  /** records taken from the --log directory (the rest came with the snapshot) */
  fromLog: number;
  /** records of the snapshot's own log dropped because they came after the point asked for */
  dropped: number;
}

/** Records appended to the restored log per transaction. */
const BATCH = 5_000;

const iso = (ms: number) => new Date(ms).toISOString();
const describe = (entry: HistoryEntry) => `position ${entry.seq}, committed ${iso(entry.at)}`;
const describeUntil = (until: Until) => ('seq' in until ? `position ${until.seq}` : iso(until.time));

/**
 * Opens the restored copy of a snapshot (`config.dataDir`) and the history of `logDir` (read-only), and
 * brings the copy forward to `until`.
 */
export async function replayInto(config: Config, logDir: string | null, until: Until): Promise<Replayed> {
  const store = new Store(config.dataDir, { waitForFlush: true, archiveRetentionMs: config.logArchiveMs });
  let history: LogHistory | null = null;
  try {
    history = logDir ? LogHistory.open(logDir) : null;
    return await replayUntil(store, history, until);
  } finally {
    await history?.close();
    await store.close();
  }
}

/**
 * Brings a restored snapshot forward to `until`. The snapshot's actors cover its position S; its own log
 * holds what was committed between S and the moment it was copied; `source` (another data directory's
 * archive and log, most often the one the snapshot was taken of) holds what came after. The records from
 * S + 1 up to the point asked for are put in the restored log (bytes unchanged, so the restored
 * directory's archive continues the same history), later ones of the snapshot's own log are dropped; the
 * next load replays them through the same apply as any boot. Refused, before anything is kept: a point
 * before S, a point past the last record available, a range the source's archive no longer holds, and a
 * source whose records differ from the snapshot's (another history), and a point before the first change
 * of all (an empty directory).
 */
export async function replayUntil(target: Store, source: LogHistory | null, until: Until): Promise<Replayed> {
  const base = target.snapshotSeq();
  const own = target.history();
  const tail = [...own.after(base)];
  const ownBase = base > 0 ? own.find(base) : null;
  const sourceBase = base > 0 ? source?.find(base) ?? null : null;
  if (ownBase && sourceBase && !ownBase.bytes.equals(sourceBase.bytes)) throw diverged(base, source!);
  const baseEntry = ownBase ?? sourceBase;
  const atBase = baseEntry ? `, committed ${iso(baseEntry.at)}` : '';
  if (('seq' in until && until.seq < base) || ('time' in until && baseEntry && until.time < baseEntry.at)) {
    throw new ConfigError(`--until ${describeUntil(until)} is before the snapshot's position ${base}${atBase}: restore an older snapshot`);
  }

  let expected = base + 1;
  let last: HistoryEntry | null = null;
  let reached = 'seq' in until && until.seq === base;
  let fromLog = 0;
  const pending: HistoryEntry[] = [];
  if (!reached) {
    for (const { entry, fromSource } of merged(tail, source, base)) {
      if (entry.seq !== expected) throw missing(expected, entry, source);
      if ('time' in until && entry.at > until.time) {
        if (last === null && base > 0 && !baseEntry) {
          throw new ConfigError(`--until ${iso(until.time)} is before the first change after the snapshot (${describe(entry)}), and the time of ` +
            `the snapshot's own position ${base} is no longer in any log archive, so it cannot be told whether it is before the snapshot too: ` +
            `restore the snapshot without --until, or give --until ${base}`);
        }
        reached = true;
        break;
      }
      last = entry;
      expected++;
      if (fromSource) {
        pending.push(entry);
        fromLog++;
        if (pending.length >= BATCH) await target.appendEntries(pending.splice(0));
      }
      if ('seq' in until && entry.seq === until.seq) {
        reached = true;
        break;
      }
    }
  }
  if (!reached) {
    const end = last?.seq ?? base;
    // The source went further once, but kept nothing after the snapshot: all of it was pruned.
    if (source && source.lastSeq() > end) throw pruned(end + 1, source.lastSeq(), source);
    throw beyond(until, last ?? baseEntry, base, source);
  }
  const seq = last?.seq ?? base;
  // A snapshot taken before the server's first periodic snapshot has position 0: nothing existed at its
  // position, and a point before the first change would restore an empty directory (a server started on it
  // creates a new organization).
  if (seq === 0) throw beforeFirst(until, tail[0] ?? source?.find(1) ?? null);
  await target.appendEntries(pending);
  const dropped = tail.filter((entry) => entry.seq > seq).length;
  if (dropped > 0) await target.truncateLogAfter(seq);
  return { base, seq, at: (last ?? baseEntry)?.at ?? null, fromLog, dropped };
}

/** The snapshot's own log after its position, then the source's records past it (checked against it where both hold one). */
function* merged(tail: HistoryEntry[], source: LogHistory | null, base: number): Generator<{ entry: HistoryEntry; fromSource: boolean }> {
  for (const entry of tail) yield { entry, fromSource: false };
  if (!source) return;
  const ours = new Map(tail.map((entry) => [entry.seq, entry]));
  const tailEnd = tail.at(-1)?.seq ?? base;
  for (const entry of source.after(base)) {
    if (entry.seq <= tailEnd) {
      const mine = ours.get(entry.seq);
      if (mine && !mine.bytes.equals(entry.bytes)) throw diverged(entry.seq, source);
      continue;
    }
    yield { entry, fromSource: true };
  }
}

function diverged(seq: number, source: LogHistory): ConfigError {
  return new ConfigError(`log record ${seq} in ${source.dir} differs from the snapshot's: they are not the same history ` +
    '(was the snapshot taken of another data directory, or of one restored since?)');
}

function missing(expected: number, found: HistoryEntry, source: LogHistory | null): ConfigError {
  const where = source ? `the log archive of ${source.dir}` : "the snapshot's log";
  return pruned(expected, found.seq - 1, source, `${where} goes on only at ${describe(found)}`);
}

function pruned(from: number, to: number, source: LogHistory | null, detail = `${source?.dir} reached position ${to} but keeps none of them`): ConfigError {
  return new ConfigError(`log positions ${from} to ${to}, needed to go forward from the snapshot, are no longer kept: ${detail} ` +
    '(archived records are pruned after CHAT_LOG_ARCHIVE_RETENTION); restore a newer snapshot');
}

function beforeFirst(until: Until, first: HistoryEntry | null): ConfigError {
  if (!first) return new ConfigError(`--until ${describeUntil(until)}: the snapshot holds nothing and no log record follows it`);
  return new ConfigError(`--until ${describeUntil(until)} is before the first change recorded (${describe(first)}): the data directory ` +
    `held nothing then; give a later point (--until ${first.seq} or later)`);
}

function beyond(until: Until, end: HistoryEntry | null, base: number, source: LogHistory | null): ConfigError {
  const where = source ? `the log of ${source.dir}` : "the snapshot's own log";
  const ends = `${where} ends at ${end ? describe(end) : `the snapshot's position ${base}`}`;
  const hint = source ? '' : ' (--log names a data directory with the later records)';
  if ('seq' in until) return new ConfigError(`--until ${until.seq} is beyond the available log: ${ends}${hint}`);
  return new ConfigError(`--until ${iso(until.time)} is past the last record available: ${ends}${hint}, and what came after it ` +
    `cannot be known from here; to replay everything available, give --until ${end?.seq ?? base}`);
}
