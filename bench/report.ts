import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Environment } from './lib/env.ts';
import { ROOT } from './lib/proc.ts';
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
  serverCpuUsPerRequest: number;
  rpsPerCore: number;
  /** how many runs the medians are over */
  runs: number;
}

export interface Memory {
  users: number;
  bytesPerUser: number;
  idleQueues: number;
  bytesPerIdleQueue: number;
  rssBeforeUsersMb: number;
  rssAfterUsersMb: number;
  rssAfterQueuesMb: number;
}

export interface Results {
  format: 1;
  startedAt: string;
  mode: 'quick' | 'full';
  environment: Environment;
  rows: Row[];
  memory: Memory | null;
  /** per-scenario extras: every run, fan-out rounds, CPU of each process */
  details: Record<string, unknown>;
}

const COLUMNS: [string, (row: Row) => string][] = [
  ['scenario', (row) => row.scenario],
  ['req/s', (row) => fmt(row.rps)],
  ['p50 ms', (row) => fmt(row.p50Ms)],
  ['p99 ms', (row) => fmt(row.p99Ms)],
  ['errors', (row) => String(row.errors)],
  ['ratio to baseline', (row) => (row.ratio === null ? '-' : `${fmt(row.ratio)}x`)],
  ['server CPU us/req', (row) => fmt(row.serverCpuUsPerRequest)],
  ['req/s per core', (row) => fmt(row.rpsPerCore)],
];

function fmt(value: number): string {
  return Number.isFinite(value) ? String(round(value)) : '-';
}

function table(header: string[], lines: string[][]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...lines.map((line) => line[i]!.length)));
  const render = (cells: string[]) => `| ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' | ')} |`;
  return [render(header), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...lines.map(render)].join('\n');
}

export function printTable(rows: readonly Row[]): void {
  console.log(table(COLUMNS.map(([title]) => title), rows.map((row) => COLUMNS.map(([, cell]) => cell(row)))));
  console.log(
    'ratio: HTTP = req/s over the raw uWS JSON baseline; fanout = server p99 over raw long-poll p99 (target <= 2x).\n' +
      'fanout rows: req/s = deliveries/s, latency = trigger sent to each poll answered, CPU per delivery.',
  );
}

export function printMemory(memory: Memory): void {
  console.log(
    `Memory (server RSS): ${memory.users} users -> ${fmt(memory.bytesPerUser)} B/user ` +
      `(${fmt(memory.rssBeforeUsersMb)} -> ${fmt(memory.rssAfterUsersMb)} MB); ` +
      `${memory.idleQueues} idle queues -> ${fmt(memory.bytesPerIdleQueue)} B/queue (-> ${fmt(memory.rssAfterQueuesMb)} MB; target < 10 KB)`,
  );
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
    lines.push(['memory B/user', ...side(a.memory?.bytesPerUser, b.memory?.bytesPerUser), '', '', '', '', '', '']);
  }
  console.log(table(header, lines));
}

function side(a: number | undefined, b: number | undefined): string[] {
  const change = a !== undefined && b !== undefined && a !== 0 && Number.isFinite(a) && Number.isFinite(b) ? `${(((b - a) / a) * 100).toFixed(1)}%` : '-';
  return [a === undefined ? '-' : fmt(a), b === undefined ? '-' : fmt(b), change];
}
