import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, cpSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { open } from 'lmdb';
import t, { type Test } from 'tap';
import { FORMAT_VERSION } from '../snapshots/codec.ts';
import { Store } from '../snapshots/store.ts';
import { childServers } from './helpers/child.ts';
import { channel, sendToChannel } from './helpers/messages.ts';
import { serverProgram } from './helpers/server-program.ts';
import { tempDir } from './helpers/server.ts';

// Each case starts servers or commands as processes of their own (tsx, about a second of CPU each): with
// the CPU shared (the suite's other file, or a loaded machine) the file takes minutes, beyond the suite's 120 s.
t.setTimeout(600_000);

/**
 * `verify` reads a data directory it may not write: a read-only copy (chmod -R a-w) or a read-only mount.
 * It opens LMDB read-only and writes nothing, so it also leaves a directory it could write exactly as it was.
 *
 * The tests may run as root, which no file mode stops: there the read-only copy is given to the unprivileged
 * `nobody` and verify runs as that user (setpriv), and the read-only mount, which stops root too, is a bind
 * mount in a mount namespace of its own (unshare). Either way each check also compares every file's bytes,
 * size, mode and mtime before and after.
 */

const MAIN = await serverProgram();
const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `command args` to its end (without the test runner's NODE_OPTIONS, whose hooks write beside the tests). */
function run(command: string, args: string[]): Promise<Run> {
  const { NODE_OPTIONS: _, ...env } = process.env;
  return new Promise((resolve) => {
    execFile(command, args, { env: { ...env, HOME: '/tmp' } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

const verifyArgs = (dataDir: string) => [MAIN, 'verify', '--data-dir', dataDir];

/** Every entry under `dir` with what a write would change: type, mode, size, mtime and the bytes' hash. */
function fingerprint(dir: string): Record<string, string> {
  const entries: Record<string, string> = {};
  const walk = (path: string) => {
    const stat = lstatSync(path);
    const bytes = stat.isFile() ? createHash('sha256').update(readFileSync(path)).digest('hex') : '';
    entries[relative(dir, path) || '.'] = `${stat.mode.toString(8)} ${stat.size} ${stat.mtimeMs} ${bytes}`;
    if (stat.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dir);
  return entries;
}

/** Whether this machine can run a command in a mount namespace of its own (root, or user namespaces). */
function mountNamespaceArgs(): string[] | null {
  for (const args of isRoot ? [['-m']] : [['-r', '-m']]) {
    if (spawnSync('unshare', [...args, 'true']).status === 0) return args;
  }
  return null;
}

/** Runs verify on `dir` mounted read-only at `mountPoint` (a bind mount only this command sees). */
function verifyOnReadOnlyMount(unshareArgs: string[], dir: string, mountPoint: string): Promise<Run> {
  return run('unshare', [...unshareArgs, 'sh', '-c', 'mount --bind -o ro "$1" "$2" && shift 2 && exec "$@"', 'sh', dir, mountPoint,
    process.execPath, ...verifyArgs(mountPoint)]);
}

/** Makes `dir` read-only for the one who will verify it and returns how to run verify as that one (see the file's comment). */
function readOnlyCopy(t: Test, dir: string): () => Promise<Run> {
  const walk = (path: string, visit: (path: string) => void) => {
    if (statSync(path).isDirectory()) for (const name of readdirSync(path)) walk(join(path, name), visit);
    visit(path);
  };
  if (isRoot) {
    chmodSync(join(dir, '..'), 0o755); // nobody must reach the directory
    walk(dir, (path) => chownSync(path, NOBODY, NOBODY));
  }
  walk(dir, (path) => chmodSync(path, statSync(path).mode & 0o555));
  return isRoot
    ? () => run('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', process.execPath, ...verifyArgs(dir)])
    : () => run(process.execPath, verifyArgs(dir));
}

/**
 * A data directory as a crash leaves it: an organization with messages in the log after the last snapshot,
 * LMDB's lock file, the search index. Returns a folder holding it as `data`.
 */
async function crashedDirectory(t: Test): Promise<string> {
  const work = tempDir();
  // Writable again first: without root, the read-only copies inside could not be removed.
  t.teardown(() => {
    spawnSync('chmod', ['-R', 'u+w', work]);
    rmSync(work, { recursive: true, force: true });
  });
  const dataDir = join(work, 'data');
  const { start } = childServers(t, []);
  const server = await start(dataDir);
  await channel(server.api, 'verified', []);
  for (let i = 0; i < 20; i++) await sendToChannel(server.api, 'verified', 'read only', `message ${i}`);
  server.process.kill('SIGKILL');
  await server.exited;
  return work;
}

/** As root, a read-only copy needs another user to verify it as. */
const noUnprivilegedUser = isRoot && spawnSync('setpriv', ['--help']).status !== 0 ? 'running as root without setpriv: no unprivileged user to verify as' : false;
const unshareArgs = mountNamespaceArgs();

t.test('verify reads a copy made read-only with chmod, as a user who may not write it', { skip: noUnprivilegedUser }, async (t) => {
  const work = await crashedDirectory(t);
  const copy = join(work, 'copy');
  cpSync(join(work, 'data'), copy, { recursive: true });
  const verify = readOnlyCopy(t, copy);
  const before = fingerprint(copy);
  const result = await verify();
  t.equal(result.code, 0, `verify succeeds: ${result.stderr}`);
  t.match(result.stdout, /log position \d+: \d+ snapshot records, [1-9]\d* log entries replayed/, 'it replays the log the crash left');
  t.match(result.stdout, /1 organizations, \d+ users, \d+ channels, \d+ groups, 2\d messages/);
  t.match(result.stdout, /^OK$/m);
  t.same(fingerprint(copy), before, 'nothing in the directory changed');
});

t.test('verify reads a read-only mount, which stops root too, and writes nothing',
  { skip: unshareArgs ? false : 'no mount namespace here (unshare -m needs root or user namespaces)' }, async (t) => {
  const work = await crashedDirectory(t);
  const dataDir = join(work, 'data');
  const mountPoint = join(work, 'mount');
  mkdirSync(mountPoint);
  const before = fingerprint(dataDir);
  const result = await verifyOnReadOnlyMount(unshareArgs!, dataDir, mountPoint);
  t.equal(result.code, 0, `verify succeeds: ${result.stderr}`);
  t.match(result.stdout, /[1-9]\d* log entries replayed/);
  t.match(result.stdout, /^OK$/m);
  t.same(fingerprint(dataDir), before, 'nothing in the directory changed');

  // A backup's layout: data.mdb alone, no lock file (one cannot be made on the mount).
  const bare = join(work, 'bare');
  mkdirSync(bare);
  cpSync(join(dataDir, 'data.mdb'), join(bare, 'data.mdb'));
  const bareResult = await verifyOnReadOnlyMount(unshareArgs!, bare, mountPoint);
  t.equal(bareResult.code, 0, `verify succeeds without a lock file: ${bareResult.stderr}`);
  t.match(bareResult.stdout, /^OK$/m);
  t.same(readdirSync(bare), ['data.mdb'], 'and makes none');
});

t.test('verify reports the problem of a damaged read-only copy', { skip: noUnprivilegedUser }, async (t) => {
  const work = await crashedDirectory(t);
  const copy = join(work, 'copy');
  cpSync(join(work, 'data'), copy, { recursive: true });
  // A log record in the middle of the log that no longer decodes: corruption, not a torn tail.
  const root = open({ path: copy, noSubdir: false, encoding: 'binary', compression: false } as Parameters<typeof open>[0]);
  const log = root.openDB<Buffer, number>({ name: 'log', encoding: 'binary' });
  const keys = [...log.getKeys({})];
  t.ok(keys.length > 2, 'the log holds records after the snapshot');
  const damaged = keys[keys.length >> 1]!;
  await log.put(damaged, Buffer.from([0xc1]));
  await root.close();
  rmSync(join(copy, 'lock.mdb'));
  const verify = readOnlyCopy(t, copy);
  const result = await verify();
  t.equal(result.code, 1, 'verify fails');
  t.match(result.stderr, new RegExp(`log record ${damaged} is corrupt`), 'naming the problem, not a refusal to open the directory');
});

t.test('a store opened read-only writes nothing: no free-list seal on a compacted copy, and a write throws', async (t) => {
  const work = tempDir();
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  const source = new Store(join(work, 'source'), { waitForFlush: true });
  await source.append({ v: FORMAT_VERSION, seq: 1, at: Date.now(), realmId: 1, changes: [] });
  await source.close();
  // A compacted copy (lmdb-js alone: Store.backup seals its copy at once) has an empty free list, which a
  // writable open seals with a write of its own (Store.sealFreeList).
  const copy = join(work, 'copy');
  mkdirSync(copy);
  const root = open({ path: join(work, 'source'), noSubdir: false } as Parameters<typeof open>[0]);
  await root.backup(copy, true);
  await root.close();
  const before = fingerprint(copy);

  const store = new Store(copy, { readOnly: true });
  t.equal(store.lastSeq(), 1, 'it reads');
  t.equal([...store.readLog(0)].length, 1);
  t.throws(() => store.append({ v: FORMAT_VERSION, seq: 2, at: Date.now(), realmId: 1, changes: [] }), 'a write throws');
  await store.close();
  const after = fingerprint(copy);
  t.equal(after['data.mdb'], before['data.mdb'], 'data.mdb is unchanged (no seal was written)');
});
