import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import { serverProgram } from './server-program.ts';
import { ApiClient, readZuliprc, type Credentials } from './server.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ChildServer {
  process: ChildProcess;
  url: string;
  owner: Credentials;
  api: ApiClient;
  output(): string;
  /** resolves with the exit code or signal once the process has exited */
  exited: Promise<number | string>;
}

export interface ChildOptions {
  /**
   * The largest file the server may write, in KiB (RLIMIT_FSIZE, set by bash's ulimit): writes past it fail
   * as on a full disk (EFBIG instead of ENOSPC), with no privileges needed.
   */
  fileSizeLimitKiB?: number;
  /** how long the server may take to listen (default 30 s): a cluster node first waits for JetStream */
  startTimeoutMs?: number;
}

/** Ends a child server that is still running, at once (a test's teardown). */
export async function killChild(server: ChildServer | null): Promise<void> {
  if (server && server.process.exitCode === null && server.process.signalCode === null) {
    server.process.kill('SIGKILL');
    await server.exited;
  }
}

/**
 * Child servers for one test: `start` starts one, `stop` stops one cleanly (and checks it did); at the test's
 * end any still running is killed and `dirs` are removed.
 */
export function childServers(t: Test, dirs: string[], options: ChildOptions = {}) {
  const servers: ChildServer[] = [];
  t.teardown(async () => {
    for (const server of servers) await killChild(server);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  return {
    async start(dataDir: string, env: Record<string, string> = {}): Promise<ChildServer> {
      const server = await startChild(dataDir, env, options);
      servers.push(server);
      return server;
    },
    async stop(server: ChildServer): Promise<void> {
      server.process.kill('SIGTERM');
      t.equal(await server.exited, 0, 'the server stops cleanly');
    },
  };
}

/** Starts the server as its own process, exactly as `npm start` does, and waits until it listens. */
export async function startChild(dataDir: string, env: Record<string, string> = {}, options: ChildOptions = {}): Promise<ChildServer> {
  const args = [await serverProgram(), 'serve', '--port', '0', '--data-dir', dataDir];
  // bash replaces itself with node (exec), so the child's pid is the server's. SIGXFSZ is ignored, so a
  // write past the limit fails with an error rather than ending the process.
  const [command, commandArgs] = options.fileSizeLimitKiB === undefined
    ? [process.execPath, args]
    : ['bash', ['-c', 'trap "" XFSZ; ulimit -S -f "$0" && exec "$@"', String(options.fileSizeLimitKiB), process.execPath, ...args]];
  const child = spawn(command, commandArgs, {
    cwd: ROOT,
    env: { ...process.env, CHAT_LOG_LEVEL: 'warn', CHAT_OWNER_PASSWORD: 'child-owner-Passw0rd-long', CHAT_RATE_LIMIT: 'off', CHAT_STARTER_CHANNELS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      // No one holds it to stop it later: a server still starting must not outlive the test.
      child.kill('SIGKILL');
      reject(new Error(`server did not start:\n${output}`));
    }, options.startTimeoutMs ?? 30_000);
    const check = () => {
      const match = /Listening on (http:\/\/\S+)/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.stdout!.off('data', check);
      // No zuliprc when the organization was made by an operator command rather than the first start.
      const rcFile = join(dataDir, 'zuliprc');
      const rc = existsSync(rcFile) ? readZuliprc(rcFile) : { email: '', key: '' };
      const owner = { email: rc.email, key: rc.key };
      resolve({ process: child, url: match[1]!, owner, api: new ApiClient(match[1]!, owner), output: () => output, exited });
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}) before listening:\n${output}`));
    });
  });
}

/** Resolves once the server's output matches `pattern` (a log line it writes later); fails if it exits first. */
export function outputMatching(server: ChildServer, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const streams = [server.process.stdout!, server.process.stderr!];
    const check = () => {
      const match = pattern.exec(server.output());
      if (!match) return;
      for (const stream of streams) stream.off('data', check);
      resolve(match);
    };
    for (const stream of streams) stream.on('data', check);
    void server.exited.then((code) => reject(new Error(`server exited (${code}) before writing ${pattern}:\n${server.output()}`)));
    check();
  });
}
