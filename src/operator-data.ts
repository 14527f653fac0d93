import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Runtime } from '../actors/runtime.ts';
import { verifyRealm } from '../actors/verify.ts';
import type { ArchiveReport } from '../snapshots/archive.ts';
import { removeSearchIndex } from '../snapshots/search-index.ts';
import { Store } from '../snapshots/store.ts';
import { backupFiles, replaceFiles, restoreFiles } from './backup-files.ts';
import { configuredExternalUrl, realmUrl, refreshZuliprc } from './bootstrap.ts';
import { ConfigError, type Config } from './config.ts';
import type { OperatorCommand } from './operator.ts';
import { openRuntime } from './operator-runtime.ts';
import { parseUntil, replayInto, type Replayed } from './point-in-time.ts';
import { fileRecords, filesNamed, RealmFiles } from './realm-files.ts';

const DATA_FILE = 'data.mdb';

interface Summary {
  realms: number;
  users: number;
  channels: number;
  groups: number;
  messages: number;
  seq: number;
  snapshots: number;
  replayed: number;
  archive: ArchiveReport;
  problems: string[];
  /** what is not wrong but worth knowing: a tail of the log that was never acknowledged */
  notes: string[];
  /** the files the records name (uploads, avatars, emoji images) and how many of them are missing */
  files: number;
  missingFiles: string[];
}

/**
 * Loads a data directory the way a boot does, checks every realm and the log archive, and that every file
 * the records name is there (taking one that is not from `fileSources`, in order, if one of them has it);
 * lists any problem. `then` runs on the loaded state before it is closed. `readOnly` (verify) writes nothing
 * in the directory: it may be a read-only copy or mount, and a missing file is only reported.
 */
async function loadAndVerify(config: Config, how: { readOnly: true } | { readOnly: false; fileSources: string[]; then: (runtime: Runtime) => Promise<void> }): Promise<Summary> {
  const { store, runtime, recovered } = openRuntime(config, how.readOnly);
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
    const { files, missingFiles } = await checkFiles(config.dataDir, realms.map(fileRecords), how.readOnly ? [] : how.fileSources);
    if (!how.readOnly) await how.then(runtime);
    return {
      realms: realms.length, users: count((r) => r.users.size), channels: count((r) => r.channels.size), groups: count((r) => r.groups.size),
      messages: count((r) => r.messages.byId.size), seq: runtime.logPosition, snapshots, replayed, archive, problems, notes, files, missingFiles,
    };
  } finally {
    await store.close();
  }
}

/** The files the records name that are missing in `dataDir`, after taking those `sources` have. */
async function checkFiles(dataDir: string, records: ReturnType<typeof fileRecords>[], sources: string[]): Promise<{ files: number; missingFiles: string[] }> {
  const here = new RealmFiles(dataDir);
  const there = sources.map((dir) => new RealmFiles(dir));
  let files = 0;
  const missingFiles: string[] = [];
  for (const record of records) {
    for (const [kind, path] of filesNamed(record)) {
      files++;
      if (await here.read(record.realmId, kind, path)) continue;
      let found: Buffer | null = null;
      for (const source of there) {
        found = await source.read(record.realmId, kind, path);
        if (found) break;
      }
      if (found) await here.write(record.realmId, kind, path, found);
      else missingFiles.push(`${kind} ${path}`);
    }
  }
  return { files, missingFiles };
}

const iso = (ms: number) => new Date(ms).toISOString();

function printSummary(summary: Summary): void {
  console.log(`log position ${summary.seq}: ${summary.snapshots} snapshot records, ${summary.replayed} log entries replayed`);
  console.log(`${summary.realms} organizations, ${summary.users} users, ${summary.channels} channels, ${summary.groups} groups, ${summary.messages} messages, ${summary.files} files`);
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
transaction, and the organizations' files (uploads/, avatars/, emoji/) beside it: the server may keep
serving meanwhile. The data directory records the backup (its time, size and log position: /health and
/metrics show them). Restore it with 'chat-server restore SNAPSHOT_DIR'.
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
        let seq = 0;
        const files = await backupFiles(config.dataDir, out, async () => {
          ({ seq } = await store.backup(out));
        });
        const dataBytes = statSync(join(out, DATA_FILE)).size;
        await store.recordBackup({ at: Date.now(), bytes: dataBytes + files.bytes, seq });
        console.log(`Snapshot written to ${out}: log position ${seq}, data ${dataBytes} bytes, ${files.files} files ${files.bytes} bytes, ` +
          `${Math.round(performance.now() - started)} ms`);
      } finally {
        await store.close();
      }
    },
  },
  restore: {
    summary: 'restore a snapshot into a data directory, optionally up to a point in time',
    exclusive: true,
    help: `Usage: chat-server restore SNAPSHOT_DIR [--until TIME|POSITION [--log DIR]] [--data-dir DIR] [--force]

Restores a snapshot written by 'chat-server snapshot' into the data directory, its data and its files, then
loads and verifies it, and writes the client configuration (zuliprc) for the bare host's organization's
owner. The directory must hold no data unless --force is given (its data and files are then replaced, once
the restored copy has loaded and verified; a failed restore leaves it as it was). A file the restored
records name that the snapshot lacks (snapshots of older versions hold no files) is taken from the --log
directory or from the data directory being replaced, if they have it; any still missing is reported.

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
      const zuliprc = join(config.dataDir, 'zuliprc');
      try {
        copyFileSync(source, join(staging, DATA_FILE));
        // Opened once first: sealed (an older version's compacted copy, see Store.sealFreeList), and its
        // position known, so that a restore that would come out empty is refused.
        const snapshotStore = new Store(staging, { waitForFlush: true });
        const snapshotSeq = snapshotStore.lastSeq();
        await snapshotStore.close();
        const files = await restoreFiles(snapshotDir, staging);
        // The account a replaced directory's zuliprc named stays the one it names (refreshZuliprc).
        if (existsSync(zuliprc)) copyFileSync(zuliprc, join(staging, 'zuliprc'));
        if (until) replayed = await replayInto(stagingConfig, logDir, until);
        const fileSources = [...(logDir ? [logDir] : []), ...(existsSync(target) ? [config.dataDir] : [])];
        summary = await loadAndVerify(stagingConfig, { readOnly: false, fileSources, then: (runtime) =>
          refreshZuliprc(join(staging, 'zuliprc'), runtime, (realm) => realmUrl(configuredExternalUrl(config), realm.stringId)).then(() => {}) });
        if (summary.problems.length) throw new Error(`restored data fails verification:\n${summary.problems.join('\n')}`);
        if (summary.realms === 0 && snapshotSeq > 0) {
          throw new Error(`the restored data holds no organization, though the snapshot reached log position ${snapshotSeq}`);
        }
        renameSync(join(staging, DATA_FILE), target);
        rmSync(join(config.dataDir, 'lock.mdb'), { force: true });
        removeSearchIndex(config.dataDir);
        await replaceFiles(staging, config.dataDir);
        if (existsSync(join(staging, 'zuliprc'))) renameSync(join(staging, 'zuliprc'), zuliprc);
        console.log(`Restored ${source} into ${config.dataDir} in ${Math.round(performance.now() - started)} ms, ${files} files from the snapshot`);
      } finally {
        rmSync(staging, { recursive: true, force: true });
      }
      if (replayed) printReplayed(replayed, logDir);
      printSummary(summary);
      if (summary.missingFiles.length) {
        console.log(`note: ${summary.missingFiles.length} files the records name are in neither the snapshot nor --log: ${summary.missingFiles.join(', ')}`);
      }
      if (existsSync(zuliprc)) console.log(`Client configuration (zuliprc): ${zuliprc}`);
    },
  },
  verify: {
    summary: 'check that every record decodes and every index agrees',
    exclusive: false,
    help: `Usage: chat-server verify [--data-dir DIR]

Loads the data directory as a boot would (every snapshot and log record decoded, the log replayed), checks
that every index agrees with its records and that the log archive (the records 'restore --until' replays)
is readable and without gaps, and prints a summary (and a note of any file the records name that is
missing). Meant for a live directory too. Writes nothing: a read-only copy or mount is checked as well.
Exits 1 when anything is wrong.
  --data-dir DIR        the data directory (CHAT_DATA_DIR, default ./data)`,
    options: {},
    async run(config) {
      if (!existsSync(join(config.dataDir, DATA_FILE))) throw new ConfigError(`no data in ${config.dataDir}`);
      const summary = await loadAndVerify(config, { readOnly: true });
      printSummary(summary);
      for (const note of summary.notes) console.log(`note: ${note}`);
      if (summary.missingFiles.length) console.log(`note: ${summary.missingFiles.length} files the records name are missing: ${summary.missingFiles.join(', ')}`);
      if (summary.problems.length) {
        for (const problem of summary.problems) console.log(`problem: ${problem}`);
        throw new Error(`${summary.problems.length} problems found`);
      }
      console.log('OK');
    },
  },
};
