import { spawn } from 'node:child_process';
import { readFileSync, readlinkSync, rmSync, utimesSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { buildServer, ENTRY_FILE, ensureBuilt, staleReason } from '../src/production-build.ts';
import { ApiClient, readZuliprc, tempDir } from './helpers/server.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const START_TIMEOUT_MS = 60_000;

interface Npm {
  output(): string;
  exited: Promise<number | string>;
  /** signals npm, which passes the signal on to the script it runs */
  kill(): void;
}

/**
 * Runs `npm ARGS` from the repository as an operator would: without the tap runner's NODE_OPTIONS, which
 * would preload its own modules into the server.
 */
function npm(args: string[], env: Record<string, string> = {}): Npm {
  const { NODE_OPTIONS: _, ...inherited } = process.env;
  const child = spawn('npm', args, { cwd: ROOT, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | string>((done) => child.once('exit', (code, signal) => done(code ?? signal ?? -1)));
  return { output: () => output, exited, kill: () => child.kill('SIGTERM') };
}

async function waitForOutput(run: Npm, pattern: RegExp): Promise<RegExpExecArray> {
  let ended = false;
  void run.exited.then(() => (ended = true));
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const match = pattern.exec(run.output());
    if (match) return match;
    if (ended || Date.now() > deadline) throw new Error(`no ${pattern} in the output:\n${run.output()}`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

/** A process's command line and environment, as the kernel has them. */
function processInfo(pid: number): { argv: string[]; cwd: string; environment: string[] } {
  const fields = (file: string) => readFileSync(`/proc/${pid}/${file}`, 'utf8').split('\0').filter((field) => field !== '');
  return { argv: fields('cmdline'), cwd: readlinkSync(`/proc/${pid}/cwd`), environment: fields('environ') };
}

t.test('npm start compiles an edited source, then runs the compiled server with plain node', async (t) => {
  const dataDir = tempDir();
  // An edit (its time, not its content): the next start must not run the bundle built before it.
  const now = new Date();
  utimesSync(join(ROOT, 'src/version.ts'), now, now);
  const server = npm(['start', '--', '--port', '0', '--data-dir', dataDir], {
    CHAT_LOG_LEVEL: 'warn',
    CHAT_OWNER_PASSWORD: 'prod-owner-Passw0rd-long',
    CHAT_RATE_LIMIT: 'off',
  });
  let pid: number | null = null;
  t.teardown(async () => {
    try {
      if (pid !== null) process.kill(pid, 'SIGKILL');
      else server.kill();
    } catch {
      // already stopped
    }
    await server.exited;
    rmSync(dataDir, { recursive: true, force: true });
  });
  const url = (await waitForOutput(server, /Listening on (http:\/\/\S+)/))[1]!;
  // It names the first source newer than the bundle: version.ts, or another file a developer edited since the last build.
  t.match(server.output(), /Compiled \.build\/main\.js \(\S+\.ts changed\)/, 'the stale bundle was rebuilt first');

  pid = Number(readFileSync(join(dataDir, 'server.pid'), 'utf8'));
  const info = processInfo(pid);
  const script = info.argv.findIndex((arg) => !arg.startsWith('-') && arg !== info.argv[0]);
  t.equal(resolve(info.cwd, info.argv[script] ?? ''), join(ROOT, '.build', ENTRY_FILE), 'the server runs the compiled bundle');
  t.same(info.argv.slice(1, script), [], 'with no Node flags: no --import or --require of a loader');
  t.notOk(info.argv.some((arg) => arg.includes('tsx')), `nothing of tsx on its command line: ${info.argv.join(' ')}`);
  t.notOk(info.environment.some((entry) => entry.startsWith('NODE_OPTIONS=') && entry.includes('tsx')), 'nor in NODE_OPTIONS');
  t.notOk(readFileSync(join(ROOT, '.build', ENTRY_FILE), 'utf8').includes('__name('), "compiled without esbuild's keepNames wrappers");

  // A real round trip: an event queue, a message sent, then fetched and delivered.
  const owner = readZuliprc(join(dataDir, 'zuliprc'));
  const api = new ApiClient(url, { email: owner.email, key: owner.key });
  const queue = await api.post('/register', { event_types: ['message'] });
  t.equal(queue.status, 200, JSON.stringify(queue.body));
  const sent = await api.post('/messages', { type: 'direct', to: [owner.email], content: 'compiled hello' });
  t.equal(sent.status, 200, JSON.stringify(sent.body));
  const fetched = await api.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0 });
  t.equal(fetched.body.messages?.[0]?.id, sent.body.id, 'GET /messages returns the message');
  const events = await api.get('/events', { queue_id: queue.body.queue_id, last_event_id: -1 });
  t.ok(events.body.events?.some((event: { message?: { id: number } }) => event.message?.id === sent.body.id), 'the queue got the message');
  // The web client is bundled at run time from src/web/client, found relative to its source file.
  const page = await fetch(`${url}/`);
  t.equal(page.status, 200, 'the web client is served');
  const scriptPath = /src="(\/static\/[^"]+\.js)"/.exec(await page.text())?.[1];
  t.equal((await fetch(`${url}${scriptPath}`)).status, 200, `its script ${scriptPath} too`);

  process.kill(pid, 'SIGTERM');
  t.equal(await server.exited, 0, 'a graceful stop ends npm start with 0');
  pid = null;

  const verify = npm(['run', 'cli', '--', 'verify', '--data-dir', dataDir]);
  t.equal(await verify.exited, 0, verify.output());
  t.match(verify.output(), /1 organizations, 1 users[\s\S]*\nOK\n/, 'the compiled CLI verifies the data directory');
  t.notMatch(verify.output(), /Compiled /, 'the CLI reused the current bundle');
});

t.test('a build directory is stale until built, and current after', async (t) => {
  const outDir = tempDir('chat-build-');
  t.teardown(() => rmSync(outDir, { recursive: true, force: true }));
  t.match(staleReason(outDir), /holds no complete build/);
  t.match(await ensureBuilt(outDir), /holds no complete build/, 'ensureBuilt builds it');
  t.equal(staleReason(outDir), null, 'then it is current');
  t.equal(await ensureBuilt(outDir), null, 'and is not built again');
  rmSync(join(outDir, ENTRY_FILE));
  t.match(staleReason(outDir), /holds no complete build/, 'a missing bundle is stale');
  await buildServer(outDir);
  t.equal(staleReason(outDir), null);
});
