import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { verifyRealm } from '../actors/verify.ts';
import type { ArchiveReport } from '../snapshots/archive.ts';
import { Store } from '../snapshots/store.ts';
import { ConfigError, type Config } from './config.ts';
import type { OperatorCommand } from './operator.ts';
import { openRuntime } from './operator-runtime.ts';
import { parseUntil, replayInto, type Replayed } from './point-in-time.ts';

const DATA_FILE = 'data.mdb';

interface Summary {
  realms: number;
  users: number;
  channels: number;
  groups: number;
  seq: number;
  snapshots: number;
  replayed: number;
  archive: ArchiveReport;
  problems: string[];
  /** what is not wrong but worth knowing: a tail of the log that was never acknowledged */
  notes: string[];
}

/** Loads a data directory the way a boot does, checks every realm and the log archive; lists any problem. */
async function loadAndVerify(config: Config): Promise<Summary> {
  const { store, runtime, recovered } = openRuntime(config);
  try {
    const { snapshots, replayed, tornTail } = recovered;
    const realms = runtime.realmStates();
    const problems = realms.flatMap(verifyRealm);
    // A tail the boot drops (a write cut short by a crash, or the entries after a write that failed on a full
    // disk) was never acknowledged to anyone: the directory is sound, the operator is told.
    const notes = tornTail ? [`log record ${tornTail.seq} at the end of the log cannot be read (${tornTail.error}); it was never acknowledged, and the server drops it at its next start`] : [];
    const archive = store.history().checkArchive(store.snapshotSeq());
    problems.push(...archive.problems);
    const count = (pick: (realm: (typeof realms)[number]) => number) => realms.reduce((sum, realm) => sum + pick(realm), 0);
    return {
      realms: realms.length, users: count((r) => r.users.size), channels: count((r) => r.channels.size), groups: count((r) => r.groups.size),
      seq: runtime.logPosition, snapshots, replayed, archive, problems, notes,
    };
  } finally {
    await store.close();
  }
}

const iso = (ms: number) => new Date(ms).toISOString();

function printSummary(summary: Summary): void {
  console.log(`log position ${summary.seq}: ${summary.snapshots} snapshot records, ${summary.replayed} log entries replayed`);
  console.log(`${summary.realms} organizations, ${summary.users} users, ${summary.channels} channels, ${summary.groups} groups`);
  const { entries, first, last } = summary.archive;
  console.log(first && last
    ? `log archive: ${entries} records, positions ${first.seq} to ${last.seq}, committed ${iso(first.at)} to ${iso(last.at)}`
    : `log archive: ${entries} records`);
}

function printReplayed(replayed: Replayed, logDir: string | null): void {
  const taken = replayed.seq - replayed.base;
  const from = logDir ? ` (${replayed.fromLog} of them from ${logDir})` : '';
  const dropped = replayed.dropped ? `; ${replayed.dropped} later records of the snapshot's log dropped` : '';
  const at = replayed.at === null ? '' : `, the last change committed ${iso(replayed.at)}`;
  console.log(`Point in time: the snapshot's position ${replayed.base}, ${taken} log records after it${from}, up to position ${replayed.seq}${at}${dropped}`);
}

export const dataDirCommands: Record<string, OperatorCommand> = {
  snapshot: {
    summary: 'copy the data directory consistently, even while the server runs',
    exclusive: false,
    help: `Usage: chat-server snapshot --out SNAPSHOT_DIR [--data-dir DIR]

Writes a consistent, compacted copy of the LMDB data to SNAPSHOT_DIR/data.mdb, taken in one read
transaction: the server may keep serving meanwhile. Restore it with 'chat-server restore SNAPSHOT_DIR'.
  --out SNAPSHOT_DIR    a new (or empty) folder for the copy
  --data-dir DIR        the data directory (CHAT_DATA_DIR, default ./data)`,
    options: { out: { type: 'string' } },
    async run(config, values) {
      const out = typeof values.out === 'string' ? resolve(values.out) : null;
      if (!out) throw new ConfigError('--out is required (see --help)');
      if (existsSync(out) && readdirSync(out).length > 0) throw new ConfigError(`${out} exists already and is not empty`);
      if (!existsSync(join(config.dataDir, DATA_FILE))) throw new ConfigError(`no data in ${config.dataDir}`);
      const started = performance.now();
      const store = new Store(config.dataDir, { waitForFlush: true });
      try {
        await store.backup(out);
      } finally {
        await store.close();
      }
      console.log(`Snapshot written to ${out} (${statSync(join(out, DATA_FILE)).size} bytes, ${Math.round(performance.now() - started)} ms)`);
    },
  },
  restore: {
    summary: 'restore a snapshot into a data directory, optionally up to a point in time',
    exclusive: true,
    help: `Usage: chat-server restore SNAPSHOT_DIR [--until TIME|POSITION [--log DIR]] [--data-dir DIR] [--force]

Restores a snapshot written by 'chat-server snapshot' into the data directory, then loads and verifies it.
The directory must hold no data unless --force is given (its data is then replaced, once the restored copy
has loaded and verified; a failed restore leaves it as it was).

Point-in-time recovery: with --until, the state is brought forward from the snapshot, replaying the log
records committed after it up to TIME (the last change committed at or before it; ISO 8601 such as
2026-11-22T10:15:00Z, local time without a zone) or up to log POSITION (a whole number; 'verify' and
/health show positions). The records come from the snapshot's own log and, with --log, from the log and
the log archive of another data directory: the one the snapshot was taken of (a server may keep running
on it; it is only read, and it may be the data directory being restored into). The archive keeps the
records of CHAT_LOG_ARCHIVE_RETENTION (default 7d). Refused: a point before the snapshot (for a snapshot
taken before the server's first periodic one, at position 0: a point before the first change), a point past
the last record available, and records the archive no longer holds (restore a newer snapshot).
  --until TIME|POS      bring the state forward to this moment or log position
  --log DIR             the data directory whose log and archive hold the records after the snapshot
  --force               replace existing data
  --data-dir DIR        the data directory (CHAT_DATA_DIR, default ./data); no server may be running on it`,
    options: { force: { type: 'boolean' }, until: { type: 'string' }, log: { type: 'string' } },
    async run(config, values, positionals) {
      const snapshotDir = positionals[0] ? resolve(positionals[0]) : null;
      if (!snapshotDir) throw new ConfigError('name the snapshot to restore (see --help)');
      const source = join(snapshotDir, DATA_FILE);
      if (!existsSync(source)) throw new ConfigError(`no snapshot at ${positionals[0]}`);
      const until = typeof values.until === 'string' ? parseUntil(values.until) : null;
      const logDir = typeof values.log === 'string' ? resolve(values.log) : null;
      if (logDir && !until) throw new ConfigError('--log goes with --until (see --help)');
      if (logDir && !existsSync(join(logDir, DATA_FILE))) throw new ConfigError(`no data in ${logDir} (--log)`);
      const target = join(config.dataDir, DATA_FILE);
      if (existsSync(target) && values.force !== true) {
        throw new ConfigError(`${config.dataDir} already holds data; pass --force to replace it`);
      }
      const started = performance.now();
      // Restored aside and moved in place only once it loads and verifies: a failed restore leaves the
      // data directory as it was (and it can be the --log being read).
      const staging = join(config.dataDir, 'restoring');
      const stagingConfig = { ...config, dataDir: staging };
      rmSync(staging, { recursive: true, force: true });
      mkdirSync(staging, { recursive: true });
      let summary: Summary;
      let replayed: Replayed | null = null;
      try {
        copyFileSync(source, join(staging, DATA_FILE));
        if (until) replayed = await replayInto(stagingConfig, logDir, until);
        summary = await loadAndVerify(stagingConfig);
        if (summary.problems.length) throw new Error(`restored data fails verification:\n${summary.problems.join('\n')}`);
        renameSync(join(staging, DATA_FILE), target);
        rmSync(join(config.dataDir, 'lock.mdb'), { force: true });
      } finally {
        rmSync(staging, { recursive: true, force: true });
      }
      console.log(`Restored ${source} into ${config.dataDir} in ${Math.round(performance.now() - started)} ms`);
      if (replayed) printReplayed(replayed, logDir);
      printSummary(summary);
    },
  },
  verify: {
    summary: 'check that every record decodes and every index agrees',
    exclusive: false,
    help: `Usage: chat-server verify [--data-dir DIR]

Loads the data directory as a boot would (every snapshot and log record decoded, the log replayed), checks
that every index agrees with its records and that the log archive (the records 'restore --until' replays)
is readable and without gaps, and prints a summary. Exits 1 when anything is wrong.
  --data-dir DIR        the data directory (CHAT_DATA_DIR, default ./data)`,
    options: {},
    async run(config) {
      if (!existsSync(join(config.dataDir, DATA_FILE))) throw new ConfigError(`no data in ${config.dataDir}`);
      const summary = await loadAndVerify(config);
      printSummary(summary);
      for (const note of summary.notes) console.log(`note: ${note}`);
      if (summary.problems.length) {
        for (const problem of summary.problems) console.log(`problem: ${problem}`);
        throw new Error(`${summary.problems.length} problems found`);
      }
      console.log('OK');
    },
  },
};
