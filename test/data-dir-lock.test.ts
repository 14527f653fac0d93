import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { claimDataDir } from '../src/data-dir-lock.ts';
import { startChild, type ChildServer } from './helpers/child.ts';
import { cli } from './helpers/cli.ts';
import { serverProgram } from './helpers/server-program.ts';
import { tempDir } from './helpers/server.ts';

// Each case starts servers or commands as processes of their own (tsx, about a second of CPU each): with
// the CPU shared (the suite's other file, or a loaded machine) the file takes minutes, beyond the suite's 120 s.
t.setTimeout(600_000);

/**
 * One process owns a data directory, by a lock the kernel drops when the owner dies: a restart is never
 * refused because of a dead owner (even one nobody has reaped) or a pid some other process now has, and of
 * processes racing for a directory exactly one gets it.
 */

const MAIN = await serverProgram();
const LOCK_MODULE = join(fileURLToPath(new URL('..', import.meta.url)), 'src/data-dir-lock.ts');

async function stop(server: ChildServer): Promise<void> {
  server.process.kill('SIGTERM');
  await server.exited;
}

function processState(pid: number): string | null {
  try {
    // /proc/PID/stat: "pid (comm) S ..."; comm may hold spaces and parentheses, the state follows the last ')'
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return null;
  }
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A server whose parent does not reap it until told to: Python (which, unlike Node and bash, reaps nothing
 * on its own) starts it and waits for a line on its stdin before it waits for the server. Once killed, the
 * server stays a zombie (state Z) until then; the teardown lets the parent reap it, so no zombie is left
 * for an init that may not reap orphans.
 */
async function startUnreaped(t: Test, dataDir: string): Promise<number> {
  const parent = spawn('python3', ['-c', 'import subprocess, sys\nchild = subprocess.Popen(sys.argv[1:])\nprint("server pid", child.pid, flush=True)\nsys.stdin.readline()\nchild.wait()',
    process.execPath, MAIN, 'serve', '--port', '0', '--data-dir', dataDir], {
    env: { ...process.env, CHAT_LOG_LEVEL: 'warn', CHAT_OWNER_PASSWORD: 'child-owner-Passw0rd-long', CHAT_RATE_LIMIT: 'off' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise((resolve) => parent.once('exit', resolve));
  t.teardown(async () => {
    const pid = Number(/server pid (\d+)/.exec(output)?.[1]);
    if (pid) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    parent.stdin!.end('\n');
    await exited;
  });
  parent.stdout!.on('data', (chunk) => (output += chunk));
  parent.stderr!.on('data', (chunk) => (output += chunk));
  await until(() => /Listening on/.test(output), `the server to listen:\n${output}`);
  return Number(/server pid (\d+)/.exec(output)![1]);
}

t.test('a restart right after a kill works while the killed server is an unreaped zombie', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const pid = await startUnreaped(t, dataDir);
  t.equal(readFileSync(join(dataDir, 'server.pid'), 'utf8').trim(), String(pid), 'server.pid names the server for operators');
  process.kill(pid, 'SIGKILL');
  await until(() => processState(pid) === 'Z', 'the killed server to be a zombie');

  const restarted = await startChild(dataDir);
  t.teardown(() => stop(restarted));
  t.equal(processState(pid), 'Z', 'the old server was still an unreaped zombie when the new one started');
  t.equal((await restarted.api.get('/users/me')).status, 200, 'the restarted server serves the organization');
  t.equal(readFileSync(join(dataDir, 'server.pid'), 'utf8').trim(), String(restarted.process.pid), 'server.pid names the new owner');
});

t.test('a server.pid naming a live process that is not a server does not block the start', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  // as after a container restart, when the pid the old server had belongs to another process (pid 1, say)
  writeFileSync(join(dataDir, 'server.pid'), `${process.pid}\n`);
  const server = await startChild(dataDir);
  t.teardown(() => stop(server));
  t.equal((await server.api.get('/users/me')).status, 200);
});

/**
 * A process that claims each of `dirs` at an agreed moment (the moments come on stdin once both racers
 * have loaded; it spins until each, so two racers on two cores reach the claim within microseconds of each
 * other), prints one JSON line per claim, and holds what it won until its stdin closes.
 */
const RACER = `
const { claimDataDir } = await import(process.argv[1]);
const dirs = JSON.parse(process.argv[2]);
console.log('ready');
let input = '';
for await (const chunk of process.stdin) {
  input += chunk;
  if (!input.includes('\\n')) continue;
  const moments = JSON.parse(input);
  for (const [i, dir] of dirs.entries()) {
    while (performance.timeOrigin + performance.now() < moments[i]);
    try {
      claimDataDir(dir);
      console.log(JSON.stringify({ i, won: true }));
    } catch (error) {
      console.log(JSON.stringify({ i, won: false, message: error.message }));
    }
  }
  console.log('done');
}
`;

interface Racer {
  process: ChildProcess;
  lines: string[];
}

function startRacer(dirs: string[]): Racer {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', RACER, LOCK_MODULE, JSON.stringify(dirs)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const racer: Racer = { process: child, lines: [] };
  let buffered = '';
  child.stdout!.on('data', (chunk) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    racer.lines.push(...lines);
  });
  return racer;
}

t.test('claims made at the same moment: exactly one process gets the directory', async (t) => {
  const TRIALS = 20;
  const dirs = Array.from({ length: TRIALS }, () => tempDir());
  t.teardown(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const racers = [startRacer(dirs), startRacer(dirs)];
  t.teardown(() => racers.forEach((racer) => racer.process.kill('SIGKILL')));
  await until(() => racers.every((racer) => racer.lines.includes('ready')), 'both racers to load');
  const first = Date.now() + 200;
  const moments = dirs.map((_, i) => first + i * 20);
  for (const racer of racers) racer.process.stdin!.write(`${JSON.stringify(moments)}\n`);
  await until(() => racers.every((racer) => racer.lines.includes('done')), 'both racers to finish');

  const outcomes = racers.map((racer) => racer.lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { i: number; won: boolean; message?: string }));
  let doubleClaims = 0;
  for (let i = 0; i < TRIALS; i++) {
    const [a, b] = outcomes.map((list) => list.find((outcome) => outcome.i === i)!);
    if (a!.won && b!.won) doubleClaims++;
    const loser = a!.won ? b! : a!;
    const winner = racers[a!.won ? 0 : 1]!.process.pid;
    if (!a!.won && !b!.won) t.fail(`trial ${i}: nobody got ${dirs[i]}: ${a!.message}`);
    // the winner may not have written server.pid yet: the kernel's lock table names it all the same
    else if (!loser.won) t.match(loser.message, `the data directory ${dirs[i]} is in use by process ${winner};`, `trial ${i}: the loser is told which directory and who holds it`);
  }
  t.equal(doubleClaims, 0, `no directory was claimed by both (${TRIALS} trials)`);

  // The same with whole servers: one runs, the other says which directory and exits.
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const results = await Promise.allSettled([startChild(dataDir), startChild(dataDir)]);
  const running = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  for (const server of running) t.teardown(() => stop(server));
  const refused = results.flatMap((result) => (result.status === 'rejected' ? [String(result.reason)] : []));
  t.equal(running.length, 1, 'one server runs');
  t.equal(refused.length, 1, 'the other does not');
  t.match(refused[0], /exited \(1\) before listening/, 'it exits with an error');
  t.match(refused[0], `error: the data directory ${dataDir} is in use by process ${running[0]?.process.pid}`, 'naming the directory and its owner');
});

t.test('operator commands that write take the same lock, whatever became of server.pid; snapshot and verify do not need it', async (t) => {
  const dataDir = tempDir();
  const work = tempDir();
  t.teardown(() => {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });
  const created = await cli('create-realm', '--data-dir', dataDir, '--subdomain', '', '--name', 'Locked Org',
    '--owner-email', 'boss@lock.test', '--owner-password', 'boss-Long-passw0rd');
  t.equal(created.code, 0, created.stderr);
  t.notOk(existsSync(join(dataDir, 'server.pid')), 'a finished command leaves no server.pid');
  const backup = join(work, 'backup');
  const exported = join(work, 'org.tar');
  t.equal((await cli('export-realm', '--data-dir', dataDir, '--out', exported)).code, 0);

  // This process holds the directory, as a running server would, and an operator took its server.pid for
  // a leftover and deleted it: the lock does not depend on that file.
  const release = claimDataDir(dataDir);
  t.teardown(release);
  rmSync(join(dataDir, 'server.pid'));
  // the kernel's lock table still names the holder
  const busy = new RegExp(`the data directory ${dataDir} is in use by process ${process.pid};`);
  const snapshot = await cli('snapshot', '--data-dir', dataDir, '--out', backup);
  t.equal(snapshot.code, 0, snapshot.stderr);
  const verified = await cli('verify', '--data-dir', dataDir);
  t.equal(verified.code, 0, verified.stderr);
  t.match(verified.stdout, /^OK$/m);
  for (const args of [
    ['create-user', '--email', 'late@lock.test', '--full-name', 'Late', '--password', 'late-Long-passw0rd'],
    ['import-realm', exported, '--subdomain', 'copy'],
    ['restore', backup, '--force'],
  ]) {
    const result = await cli(args[0]!, '--data-dir', dataDir, ...args.slice(1));
    t.equal(result.code, 1, `${args[0]} is refused`);
    t.match(result.stderr, busy, `${args[0]} names the directory`);
  }
  const refused = await startChild(dataDir).then(async (server) => (await stop(server), 'started'), (error: unknown) => String(error));
  t.match(refused, busy, 'a server is refused too');

  release();
  const user = await cli('create-user', '--data-dir', dataDir, '--email', 'late@lock.test', '--full-name', 'Late', '--password', 'late-Long-passw0rd');
  t.equal(user.code, 0, `once released, the command runs: ${user.stderr}`);
});

t.test('a start that fails leaves nothing that blocks the next one', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  // 192.0.2.1 is TEST-NET-1 (RFC 5737): no interface has it, so listening fails after the directory is claimed
  const failed = await cli('serve', '--host', '192.0.2.1', '--port', '0', '--data-dir', dataDir);
  t.equal(failed.code, 1, 'the start fails');
  t.match(failed.stderr, /cannot listen on 192\.0\.2\.1/);
  t.notOk(existsSync(join(dataDir, 'server.pid')), 'no server.pid is left behind');
  const server = await startChild(dataDir);
  t.teardown(() => stop(server));
  t.equal((await server.api.get('/users/me')).status, 200, 'the next start works');
});

t.test('the data directory and what the server writes in it are readable by its owner alone', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  // as an older server left it: open to everyone
  chmodSync(dataDir, 0o755);
  const server = await startChild(dataDir);
  t.teardown(() => stop(server));
  t.equal((await server.api.get('/users/me')).status, 200);
  t.equal(statSync(dataDir).mode & 0o777, 0o700, 'the directory: its owner only');
  for (const file of ['data.mdb', 'zuliprc']) {
    t.equal(statSync(join(dataDir, file)).mode & 0o077, 0, `${file}: nothing for group or others`);
  }
});
