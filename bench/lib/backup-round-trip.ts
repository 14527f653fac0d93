/**
 * Backup round trips at scale, for test/backup-scale.test.ts and bench/backup.ts: a data directory written by
 * the server's own code (`Store` and `Runtime` as src/app.ts opens them, the commands the API sends), a
 * backup of it taken with `chat-server snapshot` while it is open, then `restore` (plain, or `--until` a
 * position with `--log`), `verify`, a real server started on the result, and what it serves compared with
 * what was written: the message count, the newest message, a random sample of messages read back, the
 * users, every file by its checksum.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Api, readZuliprc } from './api.ts';
import { writeOrganization } from './organization.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MAIN = join(ROOT, 'src/main.ts');

/** Messages sent per event-loop turn: one group commit each. */
const BATCH = 1000;
const USERS = 10;
const TOPICS = 100;
/** Messages read back one by one from each restored server. */
const SAMPLE = 25;

const content = (n: number) => `Message ${n}: the quick brown fox jumps over the **lazy** dog, then naps.`;

/** Messages n0.. with consecutive ids and log positions (a run breaks where another record came between). */
interface Run {
  n0: number;
  id0: number;
  seq0: number;
  count: number;
}

export interface WrittenFile {
  seq: number;
  url: string;
  sha256: string;
}

/** What a data directory holds, position by position: enough to tell what any point of it must serve. */
export interface History {
  runs: Run[];
  files: WrittenFile[];
  users: number;
  /** the periodic snapshot's position: the backup's base */
  snapshotSeq: number;
  lastSeq: number;
}

export interface WriteOptions {
  /** messages sent before the periodic snapshot */
  base: number;
  /** messages sent after it: the pending log a backup holds */
  pending: number;
  /** uploaded files, half before the snapshot and half at the end of the pending log */
  files: number;
}

/**
 * Writes (or continues) the data directory's organization in this process and keeps it open, as a running
 * server does: `more` sends further messages (after a backup, for `restore --until --log`), `close` stops.
 */
export async function openWriter(dir: string) {
  const { UploadStore } = await import('../../src/uploads.ts');
  const { store, runtime, realm, userIds, channelId } = await writeOrganization(dir, { users: USERS, name: 'backup', channel: 'backups' });
  const history: History = { runs: [], files: [], users: runtime.realmState(realm.realmId).users.size, snapshotSeq: 0, lastSeq: 0 };
  let sent = 0;
  const uploads = new UploadStore(dir);

  async function send(count: number): Promise<void> {
    for (let done = 0; done < count; ) {
      const batch: Promise<unknown>[] = [];
      const end = Math.min(count, done + BATCH);
      for (; done < end; done++, sent++) {
        const n = sent;
        const sending = runtime.execute(realm.realmId, {
          type: 'message.send', caller: { kind: 'user', userId: userIds[n % USERS]! }, kind: 'channel', to: channelId,
          topic: `topic ${n % TOPICS}`, content: content(n), client: 'API',
        });
        // Decided and given its log position before execute's first await.
        const seq = runtime.logPosition;
        batch.push(sending.then((changes) => {
          const change = changes[0];
          if (change?.type !== 'message.sent') throw new Error(`message ${n} was not sent`);
          const last = history.runs.at(-1);
          const id = change.message.id;
          if (last && last.n0 + last.count === n && last.id0 + last.count === id && last.seq0 + last.count === seq) last.count++;
          else history.runs.push({ n0: n, id0: id, seq0: seq, count: 1 });
        }));
      }
      await Promise.all(batch);
    }
    history.lastSeq = runtime.logPosition;
  }

  async function upload(count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const data = Buffer.from(`file ${history.files.length} of the backup round trip\n`.repeat(1 + (history.files.length % 50)));
      const pathId = await uploads.save(realm.realmId, `file-${history.files.length}.txt`, data);
      await runtime.execute(realm.realmId, {
        type: 'attachment.upload', caller: { kind: 'user', userId: userIds[0]! }, pathId, name: `file-${history.files.length}.txt`, size: data.length,
        quota: { userBytes: null, userFiles: null, realmBytes: null },
      });
      history.files.push({ seq: runtime.logPosition, url: `/user_uploads/${pathId}`, sha256: createHash('sha256').update(data).digest('hex') });
    }
    history.lastSeq = runtime.logPosition;
  }

  return {
    history,
    async write(options: WriteOptions): Promise<void> {
      await upload(Math.floor(options.files / 2));
      await send(options.base);
      await runtime.snapshot();
      history.snapshotSeq = store.snapshotSeq();
      await send(options.pending);
      await upload(options.files - Math.floor(options.files / 2));
      await runtime.settled();
    },
    more: async (messages: number) => {
      await send(messages);
      await runtime.settled();
    },
    close: () => store.close(),
  };
}

/** What the directory restored up to `seq` must serve. */
function expectedAt(history: History, seq: number) {
  let count = 0;
  let newest = 0;
  const within: Run[] = [];
  for (const run of history.runs) {
    const taken = Math.max(0, Math.min(run.count, seq - run.seq0 + 1));
    if (taken === 0) continue;
    within.push({ ...run, count: taken });
    count += taken;
    newest = Math.max(newest, run.id0 + taken - 1);
  }
  return { count, newest, within, files: history.files.filter((file) => file.seq <= seq) };
}

function pick(runs: Run[], count: number): { id: number; n: number }[] {
  const total = runs.reduce((sum, run) => sum + run.count, 0);
  const picked: { id: number; n: number }[] = [];
  for (let i = 0; i < Math.min(count, total); i++) {
    let index = Math.floor(Math.random() * total);
    for (const run of runs) {
      if (index < run.count) {
        picked.push({ id: run.id0 + index, n: run.n0 + index });
        break;
      }
      index -= run.count;
    }
  }
  return picked;
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** `chat-server ARGS` in its own process. */
export function cli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('exit', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr, ms: performance.now() - started }));
  });
}

function ok(run: CliRun, what: string): CliRun {
  if (run.code !== 0) throw new Error(`${what} failed (${run.code}):\n${run.stdout}\n${run.stderr}`);
  return run;
}

/** `chat-server snapshot` of a directory (open elsewhere, as under a running server); its log position. */
export async function backup(dir: string, out: string): Promise<{ seq: number; ms: number; stdout: string }> {
  const run = ok(await cli(['snapshot', '--data-dir', dir, '--out', out]), 'snapshot');
  const seq = Number(/log position (\d+)/.exec(run.stdout)?.[1] ?? NaN);
  return { seq, ms: run.ms, stdout: run.stdout };
}

export interface RoundTrip {
  /** the position restored */
  seq: number;
  restoreMs: number;
  verifyMs: number;
  /** spawn to "Listening on" */
  startMs: number;
  messages: number;
  newest: number;
  /** what differs from what the history says (empty: all served as written) */
  differences: string[];
}

/**
 * Restores `backupDir` into `target` (up to `until` with `--log logDir`, if given), verifies it, starts a
 * server on it and compares what it serves with `history` at the position restored (`backupSeq` without
 * `until`).
 */
export async function roundTrip(history: History, backupDir: string, backupSeq: number, target: string, until?: { seq: number; logDir: string }): Promise<RoundTrip> {
  const args = ['restore', backupDir, '--data-dir', target, ...(until ? ['--until', String(until.seq), '--log', until.logDir] : [])];
  const restored = ok(await cli(args), 'restore');
  const seq = until?.seq ?? backupSeq;
  const expected = expectedAt(history, seq);
  const differences: string[] = [];
  if (/note:/.test(restored.stdout)) differences.push(`restore: ${restored.stdout}`);
  const verified = ok(await cli(['verify', '--data-dir', target]), 'verify');
  const counted = /(\d+) users, \d+ channels, \d+ groups, (\d+) messages, (\d+) files/.exec(verified.stdout);
  if (!/^OK$/m.test(verified.stdout)) differences.push(`verify: ${verified.stdout}`);
  if (Number(counted?.[1]) !== history.users) differences.push(`verify counts ${counted?.[1]} users, not ${history.users}`);
  if (Number(counted?.[2]) !== expected.count) differences.push(`verify counts ${counted?.[2]} messages, not ${expected.count}`);
  if (Number(counted?.[3]) !== expected.files.length) differences.push(`verify counts ${counted?.[3]} files, not ${expected.files.length}`);
  if (!new RegExp(`log position ${seq}:`).test(verified.stdout)) differences.push(`verify is not at position ${seq}: ${verified.stdout}`);

  const started = performance.now();
  const server = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve', '--port', '0', '--data-dir', target], {
    cwd: ROOT, env: { ...process.env, CHAT_LOG_LEVEL: 'warn', CHAT_RATE_LIMIT: 'off' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  server.stdout.on('data', (chunk) => (output += chunk));
  server.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | string>((resolve) => server.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const check = () => {
        const match = /Listening on (http:\/\/\S+)/.exec(output);
        if (match) resolve(match[1]!);
      };
      server.stdout.on('data', check);
      void exited.then((code) => reject(new Error(`the restored server exited (${code}) before listening:\n${output}`)));
    });
    const startMs = performance.now() - started;
    const owner = readZuliprc(join(target, 'zuliprc'));
    const api = new Api(url);
    const newestAnswer = await api.ok('GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: '[]', apply_markdown: 'false' }, owner);
    const newest = ((newestAnswer.messages as { id: number }[]).at(-1)?.id) ?? 0;
    if (newest !== expected.newest) differences.push(`the newest message served is ${newest}, not ${expected.newest}`);
    for (const { id, n } of pick(expected.within, SAMPLE)) {
      const answer = await api.call('GET', `/messages/${id}`, { apply_markdown: 'false' }, owner);
      const raw = (answer.body.message as { content?: string } | undefined)?.content;
      if (answer.status !== 200 || raw !== content(n)) differences.push(`message ${id}: ${answer.status} ${raw}`);
    }
    const users = await api.ok('GET', '/users', {}, owner);
    const people = (users.members as { is_bot: boolean }[]).length;
    if (people < USERS) differences.push(`the server lists ${people} users`);
    for (const file of expected.files) {
      const response = await fetch(`${url}${file.url}`, { headers: { Authorization: `Basic ${Buffer.from(`${owner.email}:${owner.key}`).toString('base64')}` } });
      const body = Buffer.from(await response.arrayBuffer());
      const sha = createHash('sha256').update(body).digest('hex');
      if (response.status !== 200 || sha !== file.sha256) differences.push(`file ${file.url}: ${response.status}, sha256 ${sha}`);
    }
    server.kill('SIGTERM');
    const code = await exited;
    if (code !== 0) differences.push(`the restored server stopped with ${code}:\n${output}`);
    return { seq, restoreMs: restored.ms, verifyMs: verified.ms, startMs, messages: Number(counted?.[2]), newest, differences };
  } finally {
    if (server.exitCode === null && server.signalCode === null) {
      server.kill('SIGKILL');
      await exited;
    }
  }
}

/** A position to restore to, at random, from the backup's base (its periodic snapshot) to the last record. */
export function randomPoint(history: History): number {
  return history.snapshotSeq + Math.floor(Math.random() * (history.lastSeq - history.snapshotSeq + 1));
}
