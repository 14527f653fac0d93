import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Environment } from './lib/env.ts';
import type { MessageMemory } from './messages.ts';
import type { RecoveryResult } from './recovery.ts';
import type { SearchLatency } from './search.ts';
import type { ClusterResult } from './cluster.ts';
import type { GcRow } from './hot.ts';
import { ROOT, type MemoryProbe } from './lib/proc.ts';
import { round } from './lib/stats.ts';

/** One line of the table: an HTTP scenario (medians of its runs) or one side of a fan-out. */
export interface Row {
  scenario: string;
  /** requests per second; for a fan-out, deliveries per second */
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  /** HTTP: req/s over the raw JSON baseline's; fan-out: p99 over the raw long-poll baseline's p99 */
  ratio: number | null;
  /** the baseline's server CPU per request over this one's: per-core throughput relative to raw uWS */
  perCoreRatio: number | null;
  serverCpuUsPerRequest: number;
  /** the part of it on the server's main thread (absent in result files from before it was measured) */
  serverMainThreadUsPerRequest?: number;
  rpsPerCore: number;
  /** how many runs the medians are over */
  runs: number;
}

export interface Memory {
  users: number;
  /** anonymous RSS growth per user between fresh boots of the empty and the seeded data directory */
  bytesPerUser: number;
  /** V8 heap in use (after a full collection) per user, the same way */
  heapBytesPerUser: number;
  idleQueues: number;
  /** anonymous RSS growth per registered idle queue, in one process, each figure after a full collection */
  bytesPerIdleQueue: number;
  heapBytesPerIdleQueue: number;
  /**
   * CPU an idle server uses with the idle queues registered, and an idle raw uWS JSON server beside it, in ms
   * a second (absent in result files from before 2026-11-27)
   */
  idleCpu?: { serverMsPerSecond: number; rawMsPerSecond: number; seconds: number };
  /** growth per stored message, in one process (absent in result files from before it was measured) */
  messages?: MessageMemory;
  /** the raw figures */
  probes: Record<string, MemoryProbe>;
}

export interface Results {
  format: 1;
  startedAt: string;
  mode: 'quick' | 'full';
  environment: Environment;
  rows: Row[];
  memory: Memory | null;
  /** boot times of a data directory with many messages (absent in older result files) */
  recovery?: RecoveryResult | null;
  /** search narrow latencies over a long history (absent in older result files) */
  search?: SearchLatency[] | null;
  /** send latency and GC pauses over two history sizes (hot.ts's measureGc; absent in older result files) */
  gc?: GcRow[] | null;
  /** the cluster bench (cluster.ts), with its single-process baseline: full runs and --cluster (absent in older result files) */
  cluster?: ClusterResult | null;
  /** per-scenario extras: every run, fan-out rounds, CPU of each process */
  details: Record<string, unknown>;
}

const COLUMNS: [string, (row: Row) => string][] = [
  ['scenario', (row) => row.scenario],
  ['req/s', (row) => fmt(row.rps)],
  ['p50 ms', (row) => fmt(row.p50Ms)],
  ['p99 ms', (row) => fmt(row.p99Ms)],
  ['errors', (row) => String(row.errors)],
  ['ratio to baseline', (row) => times(row.ratio)],
  ['server CPU us/req', (row) => fmt(row.serverCpuUsPerRequest)],
  ['main thread us/req', (row) => fmt(row.serverMainThreadUsPerRequest ?? NaN)],
  ['req/s per core', (row) => fmt(row.rpsPerCore)],
  ['per-core ratio', (row) => times(row.perCoreRatio)],
];

function times(ratio: number | null): string {
  return ratio !== null && Number.isFinite(ratio) ? `${fmt(ratio)}x` : '-';
}

function fmt(value: number): string {
  return Number.isFinite(value) ? String(round(value)) : '-';
}

export function table(header: string[], lines: string[][]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...lines.map((line) => line[i]!.length)));
  const render = (cells: string[]) => `| ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' | ')} |`;
  return [render(header), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...lines.map(render)].join('\n');
}

export function printTable(rows: readonly Row[]): void {
  console.log(table(COLUMNS.map(([title]) => title), rows.map((row) => COLUMNS.map(([, cell]) => cell(row)))));
  console.log(
    'ratio to baseline: HTTP = req/s over the raw uWS JSON baseline\'s (both limited by the one-core load generator);\n' +
      '  fanout = server p99 over the raw long-poll baseline\'s p99 (target <= 2x).\n' +
      'req/s per core = 1e6 / server CPU us per request; per-core ratio = baseline CPU per request over this one\'s (the fair figure).\n' +
      'main thread us/req: the part of the server\'s CPU on its event loop; the rest is V8\'s GC helper threads and libuv\'s pool (LMDB commits).\n' +
      'fanout rows: req/s = deliveries/s (N / time to the last completion), latency = trigger sent to each poll answered,\n' +
      '  CPU per delivery (the poll request and its answer).',
  );
}

export function printMemory(memory: Memory): void {
  const mb = (bytes: number | undefined) => fmt((bytes ?? NaN) / 1024 / 1024);
  const { empty, seeded, withQueues } = memory.probes;
  console.log(
    `Memory (server, after a full GC; RSS = anonymous RSS, without the LMDB map): per user ${fmt(memory.bytesPerUser)} B RSS, ` +
      `${fmt(memory.heapBytesPerUser)} B heap (${memory.users} users; RSS ${mb(empty?.rssAnon)} -> ${mb(seeded?.rssAnon)} MB ` +
      `between fresh boots${memory.users < 500 ? '; too few users for a steady RSS figure' : ''})`,
  );
  console.log(
    `  per idle queue ${fmt(memory.bytesPerIdleQueue)} B RSS, ${fmt(memory.heapBytesPerIdleQueue)} B heap ` +
      `(${memory.idleQueues} queues; RSS ${mb(seeded?.rssAnon)} -> ${mb(withQueues?.rssAnon)} MB, ` +
      `total VmRSS ${mb(withQueues?.rss)} MB; target < 10 KB, 10,000 queues < 100 MB)`,
  );
  if (memory.idleCpu) {
    const { serverMsPerSecond, rawMsPerSecond, seconds } = memory.idleCpu;
    console.log(`  idle CPU ${fmt(serverMsPerSecond)} ms a second with those queues (raw uWS JSON ${fmt(rawMsPerSecond)}; over ${seconds} s)`);
  }
}

export function printMessageMemory(memory: MessageMemory | undefined): void {
  if (!memory) return;
  console.log(
    `  per stored message ${fmt(memory.bytesPerMessage)} B RSS, ${fmt(memory.heapBytesPerMessage)} B heap ` +
      `(${memory.messages} messages of ${memory.contentLength} characters to ${memory.subscribers} subscribers; ` +
      `heap ${fmt(memory.before.heapUsed / 1024 / 1024)} -> ${fmt(memory.after.heapUsed / 1024 / 1024)} MB; target < 2 KB beyond the text)`,
  );
}

export function printRecovery(recovery: RecoveryResult | null | undefined): void {
  if (!recovery) return;
  const { writer } = recovery;
  console.log(
    `Recovery (${recovery.messages} messages, ${writer.subscribers} subscribers, ${fmt(recovery.diskBytes / 1024 / 1024)} MB on disk; ` +
      `written in-process at ${fmt(writer.messagesPerSecond)} messages/s, a snapshot of ${writer.snapshotAfter} took ${fmt(writer.snapshotMs / 1000)} s; target < 10 s):`,
  );
  for (const boot of recovery.boots) {
    const replay = boot.variant === 'log tail' ? `, ${boot.replayed} log entries replayed` : '';
    console.log(
      `  ${boot.variant.padEnd(8)}: ${fmt(boot.wallMs / 1000)} s spawn to listening (${fmt(boot.cpuMs / 1000)} s of server CPU), ${fmt(boot.recoveredMs / 1000)} s recovery (server's 'recovered' ms${replay}); ` +
        `heap ${fmt(boot.memory.heapUsed / 1024 / 1024)} MB = ${fmt(boot.memory.heapUsed / recovery.messages)} B per message all told; ` +
        `graceful stop ${fmt(boot.stopMs / 1000)} s` +
        // Results written before the history was paged have no cold reads.
        (boot.cold
          ? `; cold GET /messages of 50 p50/p99 ${fmt(boot.cold.allP50)}/${fmt(boot.cold.allP99)} ms, of a topic ${fmt(boot.cold.topicP50)}/${fmt(boot.cold.topicP99)} ms (target p99 < 5 ms)` +
            (boot.cold.allMainCpuP99 !== undefined
              ? `, server main-thread CPU per request p50/p99 ${fmt(boot.cold.allMainCpuP50!)}/${fmt(boot.cold.allMainCpuP99)} ms, of a topic ${fmt(boot.cold.topicMainCpuP50!)}/${fmt(boot.cold.topicMainCpuP99!)} ms`
              : '')
          : ''),
    );
  }
  const inProcess = recovery.coldInProcess;
  if (inProcess) {
    const pass = (p: NonNullable<RecoveryResult['coldInProcess']>['all']) => `${fmt(p.wallP50)}/${fmt(p.wallP99)} ms (CPU ${fmt(p.cpuP50)}/${fmt(p.cpuP99)} ms, ${p.gcPauses} collector pauses)`;
    console.log(`  cold reads in-process (bench/cold-reads.ts), p50/p99: ${pass(inProcess.all)}, of a topic ${pass(inProcess.topic)}`);
  }
}

export function writeResults(results: Results): string {
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${results.startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  return file;
}

/** `--compare A.json B.json`: the two runs side by side, with B's change over A in percent. */
export function compare(fileA: string, fileB: string): void {
  const a = JSON.parse(readFileSync(fileA, 'utf8')) as Results;
  const b = JSON.parse(readFileSync(fileB, 'utf8')) as Results;
  console.log(`A: ${fileA} (${a.mode}, ${a.startedAt}, node ${a.environment.node})`);
  console.log(`B: ${fileB} (${b.mode}, ${b.startedAt}, node ${b.environment.node})`);
  const metrics: [string, (row: Row) => number][] = [
    ['req/s', (row) => row.rps],
    ['p99 ms', (row) => row.p99Ms],
    ['us/req', (row) => row.serverCpuUsPerRequest],
  ];
  const header = ['scenario', ...metrics.flatMap(([name]) => [`A ${name}`, `B ${name}`, 'change'])];
  const names = [...new Set([...a.rows, ...b.rows].map((row) => row.scenario))];
  const lines = names.map((name) => {
    const rowA = a.rows.find((row) => row.scenario === name);
    const rowB = b.rows.find((row) => row.scenario === name);
    return [name, ...metrics.flatMap(([, pick]) => side(rowA && pick(rowA), rowB && pick(rowB)))];
  });
  if (a.memory || b.memory) {
    lines.push(['memory B/idle queue', ...side(a.memory?.bytesPerIdleQueue, b.memory?.bytesPerIdleQueue), '', '', '', '', '', '']);
    lines.push(['memory heap B/idle queue', ...side(a.memory?.heapBytesPerIdleQueue, b.memory?.heapBytesPerIdleQueue), '', '', '', '', '', '']);
    lines.push(['memory B/user', ...side(a.memory?.bytesPerUser, b.memory?.bytesPerUser), '', '', '', '', '', '']);
    lines.push(['memory heap B/user', ...side(a.memory?.heapBytesPerUser, b.memory?.heapBytesPerUser), '', '', '', '', '', '']);
    lines.push(['memory B/message', ...side(a.memory?.messages?.bytesPerMessage, b.memory?.messages?.bytesPerMessage), '', '', '', '', '', '']);
    lines.push(['memory heap B/message', ...side(a.memory?.messages?.heapBytesPerMessage, b.memory?.messages?.heapBytesPerMessage), '', '', '', '', '', '']);
    lines.push(['idle server CPU ms/s', ...side(a.memory?.idleCpu?.serverMsPerSecond, b.memory?.idleCpu?.serverMsPerSecond), '', '', '', '', '', '']);
  }
  for (const variant of ['log tail', 'snapshot'] as const) {
    const bootOf = (results: Results) => results.recovery?.boots.find((boot) => boot.variant === variant);
    lines.push([`recovery ${variant} s to listening`, ...side(seconds(bootOf(a)?.wallMs), seconds(bootOf(b)?.wallMs)), '', '', '', '', '', '']);
    lines.push([`recovery ${variant} s recovered`, ...side(seconds(bootOf(a)?.recoveredMs), seconds(bootOf(b)?.recoveredMs)), '', '', '', '', '', '']);
    lines.push([`recovery ${variant} cold GET p99 ms`, ...side(bootOf(a)?.cold?.topicP99, bootOf(b)?.cold?.topicP99), '', '', '', '', '', '']);
    lines.push([`recovery ${variant} cold GET server CPU p99 ms`, ...side(bootOf(a)?.cold?.topicMainCpuP99, bootOf(b)?.cold?.topicMainCpuP99), '', '', '', '', '', '']);
  }
  console.log(table(header, lines));
}

const seconds = (ms: number | undefined) => (ms === undefined ? undefined : ms / 1000);

function side(a: number | undefined, b: number | undefined): string[] {
  const change = a !== undefined && b !== undefined && a !== 0 && Number.isFinite(a) && Number.isFinite(b) ? `${(((b - a) / a) * 100).toFixed(1)}%` : '-';
  return [a === undefined ? '-' : fmt(a), b === undefined ? '-' : fmt(b), change];
}
