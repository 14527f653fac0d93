import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: children run from here so that `--import tsx` (runNode) and node_modules resolve. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The core the server and the baselines run on; the load generator (this process) takes the next one. */
export const SERVER_CPU = 0;
export const BENCH_CPU = 1;

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;

export const tasksetAvailable: boolean = (() => {
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const CLOCK_TICKS: number = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * Pins every thread of this process to the load generator's core, so that it does not steal the server's.
 * Needs two cores; on one core nothing is pinned and the figures say so.
 */
export function pinSelf(): boolean {
  if (!tasksetAvailable || cpuCount() < 2) return false;
  try {
    execFileSync('taskset', ['-a', '-cp', String(BENCH_CPU), String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Cores this process may use, read once at start: after `pinSelf` the affinity mask says 1. */
const CORES = availableParallelism();

export function cpuCount(): number {
  return CORES;
}

/** CPU seconds (user + system, every thread) a process has used so far, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  return statCpuSeconds(`/proc/${pid}/stat`);
}

/**
 * CPU seconds of a process's main thread alone: a Node server's event loop. The rest of `cpuSeconds` is
 * other threads: V8's garbage collection helpers, libuv's pool (where lmdb-js commits and syncs).
 */
export function mainThreadCpuSeconds(pid: number): number {
  return statCpuSeconds(`/proc/${pid}/task/${pid}/stat`);
}

function statCpuSeconds(path: string): number {
  const stat = readFileSync(path, 'utf8');
  // The command name may hold spaces and parentheses: the fields we want follow the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Nanoseconds the main thread has run, from /proc/<pid>/schedstat: fine-grained, for idle detection. */
export function mainThreadRunNs(pid: number): number {
  return schedstatField(pid, 0);
}

/**
 * Nanoseconds the main thread has waited, runnable, for a core (the second field of /proc/<pid>/schedstat):
 * what a pinned server loses to whatever else runs on its core.
 */
export function mainThreadQueuedNs(pid: number): number {
  return schedstatField(pid, 1);
}

function schedstatField(pid: number, field: 0 | 1): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[field]);
}

/**
 * Nanoseconds every thread of a process has run, from each /proc/<pid>/task/<tid>/schedstat: the main
 * thread and V8's collector helpers (concurrent marking, parallel scavenges), at the resolution of a
 * nanosecond where /proc/<pid>/stat counts ticks of 10 ms.
 */
export function allThreadsRunNs(pid: number): number {
  let total = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return total;
}

/**
 * What a process costs to keep running while nothing is asked of it: its CPU time (every thread) over `ms`
 * once it has gone quiet, in milliseconds a second. Its timers, and each time they wake its event loop.
 */
export async function idleCpuMsPerSecond(pid: number, ms: number): Promise<number> {
  await waitForIdle(pid);
  const before = allThreadsRunNs(pid);
  await sleep(ms);
  return (allThreadsRunNs(pid) - before) / 1e6 / (ms / 1000);
}

/** Each thread's run time in nanoseconds (/proc/<pid>/task/<tid>/schedstat) by thread id, with its name (comm). */
export function threadRunNs(pid: number): Map<number, { name: string; ns: number }> {
  const threads = new Map<number, { name: string; ns: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      threads.set(Number(tid), { name: readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim(), ns });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return threads;
}

/** A size field of /proc/<pid>/status in bytes: VmRSS (resident set) or RssAnon (without mapped files). */
export function statusBytes(pid: number, field: 'VmRSS' | 'RssAnon'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : NaN;
}

/** CPU seconds this process has used (user + system). */
export function selfCpuSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

export interface Child {
  name: string;
  pid: number;
  url: string;
  port: number;
  process: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

const children = new Set<Child>();
/** every process spawned and not yet exited, listening or not: what `killAll` ends */
const spawned = new Set<ChildProcess>();

/** CPU seconds of a target process (all threads, main thread) and of the bench itself, summed over measured spans. */
export class CpuTally {
  serverCpu = 0;
  serverMain = 0;
  benchCpu = 0;

  constructor(private readonly pid: number) {}

  /** Where a span starts; pass it to `add` when the span ends. */
  mark(): { server: number; main: number; bench: number } {
    return { server: cpuSeconds(this.pid), main: mainThreadCpuSeconds(this.pid), bench: selfCpuSeconds() };
  }

  add(start: { server: number; main: number; bench: number }): void {
    this.serverCpu += cpuSeconds(this.pid) - start.server;
    this.serverMain += mainThreadCpuSeconds(this.pid) - start.main;
    this.benchCpu += selfCpuSeconds() - start.bench;
  }
}

/**
 * Starts a compiled Node program (see compiled.ts: no tsx in what the bench measures) as its own process on
 * the server's core and waits for its "Listening on http://..." line. Every child is remembered so that
 * `killAll` can end it whatever happens to this process.
 */
export function startNode(name: string, nodeArgs: string[], env: Record<string, string> = {}, startTimeoutMs = START_TIMEOUT_MS): Promise<Child> {
  const pinned = tasksetAvailable && cpuCount() >= 2;
  // taskset execs node in place, so the pid we get is the node process's pid.
  const [command, commandArgs] = pinned
    ? ['taskset', ['-c', String(SERVER_CPU), process.execPath, ...nodeArgs]]
    : [process.execPath, nodeArgs];
  const proc = spawn(command as string, commandArgs as string[], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  spawned.add(proc);
  proc.once('exit', () => spawned.delete(proc));
  let output = '';
  proc.stdout!.on('data', (chunk) => (output += chunk));
  proc.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`${name} did not start within ${startTimeoutMs} ms:\n${output}`)), startTimeoutMs);
    const fail = (error: Error) => {
      clearTimeout(timer);
      proc.kill('SIGKILL');
      reject(error);
    };
    void exited.then(() => fail(new Error(`${name} exited before listening:\n${output}`)));
    const check = () => {
      const match = /Listening on (http:\/\/[^\s]+)/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      proc.stdout!.off('data', check);
      const url = match[1]!;
      const child: Child = {
        name,
        pid: proc.pid!,
        url,
        port: Number(new URL(url).port),
        process: proc,
        output: () => output,
        stop: async () => {
          children.delete(child);
          if (proc.exitCode !== null || proc.signalCode !== null) return;
          proc.kill('SIGTERM');
          const timeout = new Promise<'timeout'>((done) => setTimeout(() => done('timeout'), STOP_TIMEOUT_MS).unref());
          if ((await Promise.race([exited, timeout])) === 'timeout') {
            proc.kill('SIGKILL');
            await exited;
          }
        },
      };
      children.add(child);
      resolve(child);
    };
    proc.stdout!.on('data', check);
  });
}

/**
 * Runs a Node program (with tsx) to completion, unpinned beyond this process's own affinity, and resolves
 * with its output; a non-zero exit or `timeoutMs` passing (the child is then killed) is an error. The child
 * is tracked like the servers, so `killAll` ends it whatever happens to this process.
 */
export function runNode(
  name: string,
  args: string[],
  timeoutMs: number,
  env: Record<string, string> = {},
  /** told each complete line the child prints, as it prints it (progress) */
  onLine: (line: string) => void = () => {},
): Promise<string> {
  const proc = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  spawned.add(proc);
  let output = '';
  let partial = '';
  proc.stdout!.on('data', (chunk: Buffer) => {
    output += chunk;
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines) onLine(line);
  });
  proc.stderr!.on('data', (chunk) => (output += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
    // 'close', not 'exit': the child's output may still be in the pipe when it has exited (a 10,000-user
    // writer's line of credentials was cut at 256 KB).
    proc.once('close', (code, signal) => {
      clearTimeout(timer);
      spawned.delete(proc);
      if (code === 0) resolve(output);
      else reject(new Error(`${name} ${signal === 'SIGKILL' ? `was killed (limit ${timeoutMs} ms)` : `exited with ${code ?? signal}`}:\n${output.slice(-4000)}`));
    });
  });
}

const tempDirs = new Set<string>();

/** A fresh temporary directory, removed by `removeTempDir` or, at the latest, by `killAll`. */
export function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/** Ends every child still running, at once, and removes the temporary directories (for errors and signals). */
export function killAll(): void {
  for (const proc of spawned) if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  spawned.clear();
  children.clear();
  for (const dir of tempDirs) removeTempDir(dir);
}

/** Stops every child still running, gracefully. */
export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((child) => child.stop()));
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Main-thread CPU share below which a process counts as quiet (a profiler's sampling alone costs ~1%). */
const QUIET_SHARE = 0.03;

/**
 * Waits until a process's main thread has been quiet (under 3% of a core) for `quietMs`: by then it has read
 * and handled everything sent to it. Gives up after `maxMs` and says so.
 */
export async function waitForIdle(pid: number, quietMs = 100, maxMs = 15_000): Promise<boolean> {
  const started = performance.now();
  let since = mainThreadRunNs(pid);
  let quietSince = performance.now();
  for (let i = 0; i < maxMs / 10 && performance.now() - started < maxMs; i++) {
    await sleep(10);
    const elapsedMs = performance.now() - quietSince;
    const busyMs = (mainThreadRunNs(pid) - since) / 1e6;
    if (busyMs > Math.max(1, elapsedMs * QUIET_SHARE)) {
      since = mainThreadRunNs(pid);
      quietSince = performance.now();
    } else if (elapsedMs >= quietMs) {
      return true;
    }
  }
  console.error(`  warning: process ${pid} did not go quiet within ${maxMs} ms`);
  return false;
}

/** What bench/lib/heap-probe.ts prints: process.memoryUsage() after a full garbage collection. */
export interface MemoryProbe {
  collected: boolean;
  rss: number;
  /** RSS without file mappings (the LMDB map, code): read from /proc by the bench right after the probe */
  rssAnon: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** garbage collections since the previous probe, before this one's (absent in older result files) */
  gcCount?: number;
  gcTotalMs?: number;
  /** the longest of their pauses, and its kind (minor, major, incremental, weak callbacks) */
  gcMaxMs?: number;
  gcMaxKind?: string;
}

const PROBE_MARK = 'bench-memory ';

/** Asks a child started with the heap probe preloaded (compiled.ts, `measuredServerArgs`) for its memory after a full collection. */
export async function probeMemory(child: Child, timeoutMs = 10_000): Promise<MemoryProbe> {
  const seen = child.output().split(PROBE_MARK).length;
  child.process.kill('SIGUSR2');
  for (let i = 0; i < timeoutMs / 10; i++) {
    await sleep(10);
    const parts = child.output().split(PROBE_MARK);
    const line = parts.length > seen ? parts[seen]!.split('\n') : null;
    if (line && line.length > 1) return { ...(JSON.parse(line[0]!) as MemoryProbe), rssAnon: statusBytes(child.pid, 'RssAnon') };
  }
  throw new Error(`${child.name} did not answer the memory probe within ${timeoutMs} ms`);
}

/** Memory once the process has gone quiet (boot, or the requests just sent, are done with) and collected. */
export async function settledMemory(child: Child): Promise<MemoryProbe> {
  await waitForIdle(child.pid, 300);
  return probeMemory(child);
}
