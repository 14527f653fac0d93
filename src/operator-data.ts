import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { verifyRealm } from '../actors/verify.ts';
import { Store } from '../snapshots/store.ts';
import { ConfigError, type Config } from './config.ts';
import type { OperatorCommand } from './operator.ts';
import { openRuntime } from './operator-runtime.ts';

const DATA_FILE = 'data.mdb';

/** Loads a data directory the way a boot does and checks every realm; throws on any problem. */
function loadAndVerify(config: Config): { realms: number; users: number; channels: number; groups: number; seq: number; snapshots: number; replayed: number; problems: string[] } {
  const { store, runtime, recovered } = openRuntime(config);
  try {
    const { snapshots, replayed, tornTail } = recovered;
    const realms = runtime.realmStates();
    const problems = realms.flatMap(verifyRealm);
    if (tornTail) problems.push(`log record ${tornTail.seq} at the end of the log cannot be read (${tornTail.error}); the server drops it at its next start`);
    const count = (pick: (realm: (typeof realms)[number]) => number) => realms.reduce((sum, realm) => sum + pick(realm), 0);
    return {
      realms: realms.length, users: count((r) => r.users.size), channels: count((r) => r.channels.size), groups: count((r) => r.groups.size),
      seq: runtime.logPosition, snapshots, replayed, problems,
    };
  } finally {
    void store.close();
  }
}

function printSummary(summary: ReturnType<typeof loadAndVerify>): void {
  console.log(`log position ${summary.seq}: ${summary.snapshots} snapshot records, ${summary.replayed} log entries replayed`);
  console.log(`${summary.realms} organizations, ${summary.users} users, ${summary.channels} channels, ${summary.groups} groups`);
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
    summary: 'restore a snapshot into a data directory',
    exclusive: true,
    help: `Usage: chat-server restore SNAPSHOT_DIR [--data-dir DIR] [--force]

Restores a snapshot written by 'chat-server snapshot' into the data directory, then loads and verifies it.
The directory must hold no data unless --force is given (its data is then replaced).
  --force               replace existing data
  --data-dir DIR        the data directory (CHAT_DATA_DIR, default ./data); no server may be running on it`,
    options: { force: { type: 'boolean' } },
    async run(config, values, positionals) {
      const source = positionals[0] ? join(resolve(positionals[0]), DATA_FILE) : null;
      if (!source) throw new ConfigError('name the snapshot to restore (see --help)');
      if (!existsSync(source)) throw new ConfigError(`no snapshot at ${positionals[0]}`);
      const target = join(config.dataDir, DATA_FILE);
      if (existsSync(target) && values.force !== true) {
        throw new ConfigError(`${config.dataDir} already holds data; pass --force to replace it`);
      }
      const started = performance.now();
      mkdirSync(config.dataDir, { recursive: true });
      rmSync(join(config.dataDir, 'lock.mdb'), { force: true });
      copyFileSync(source, target);
      const summary = loadAndVerify(config);
      if (summary.problems.length) throw new Error(`restored data fails verification:\n${summary.problems.join('\n')}`);
      console.log(`Restored ${source} into ${config.dataDir} in ${Math.round(performance.now() - started)} ms`);
      printSummary(summary);
    },
  },
  verify: {
    summary: 'check that every record decodes and every index agrees',
    exclusive: false,
    help: `Usage: chat-server verify [--data-dir DIR]

Loads the data directory as a boot would (every snapshot and log record decoded, the log replayed), checks
that every index agrees with its records, and prints a summary. Exits 1 when anything is wrong.
  --data-dir DIR        the data directory (CHAT_DATA_DIR, default ./data)`,
    options: {},
    async run(config) {
      if (!existsSync(join(config.dataDir, DATA_FILE))) throw new ConfigError(`no data in ${config.dataDir}`);
      const summary = loadAndVerify(config);
      printSummary(summary);
      if (summary.problems.length) {
        for (const problem of summary.problems) console.log(`problem: ${problem}`);
        throw new Error(`${summary.problems.length} problems found`);
      }
      console.log('OK');
    },
  },
};
