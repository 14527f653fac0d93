import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { release } from 'node:os';
import { cpuCount, tasksetAvailable } from './proc.ts';

export interface Environment {
  node: string;
  kernel: string;
  cpuModel: string;
  cores: number;
  taskset: boolean;
  pinned: boolean;
  openFilesLimit: number;
  /** /proc/loadavg when the run started: other work on a shared machine shows here */
  loadAverage: string;
  uws: string;
  autocannon: string;
}

function packageVersion(name: string): string {
  try {
    const require = createRequire(import.meta.url);
    return (require(`${name}/package.json`) as { version?: string }).version ?? '?';
  } catch {
    return '?';
  }
}

/** The soft limit on open files, which bounds how many long-poll sockets the harness may hold (never raised here). */
export function openFilesLimit(): number {
  try {
    const text = execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim();
    return text === 'unlimited' ? Infinity : Number(text);
  } catch {
    return NaN;
  }
}

/** The 1, 5 and 15 minute load averages. */
export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

export function environment(pinned: boolean): Environment {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  return {
    node: process.version,
    kernel: release(),
    cpuModel: /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? 'unknown',
    cores: cpuCount(),
    taskset: tasksetAvailable,
    pinned,
    openFilesLimit: openFilesLimit(),
    loadAverage: loadAverage(),
    uws: packageVersion('uWebSockets.js'),
    autocannon: packageVersion('autocannon'),
  };
}

export function printEnvironment(env: Environment): void {
  console.log('Environment');
  console.log(`  node ${env.node}, Linux ${env.kernel}`);
  console.log(`  CPU: ${env.cpuModel}, ${env.cores} core(s)`);
  console.log(
    `  taskset: ${env.taskset ? 'available' : 'missing'}; ` +
      (env.pinned ? 'server and baselines on CPU 0, load generator on CPU 1' : 'NOT pinned (server and load generator share cores)'),
  );
  console.log(`  open files limit (ulimit -n): ${env.openFilesLimit}; load average ${env.loadAverage}`);
  console.log(`  uWebSockets.js ${env.uws}, autocannon ${env.autocannon}`);
  if (Number(env.loadAverage.split(' ')[0]) >= env.cores / 2) {
    console.log('  WARNING: other work is running on this machine (see the load average): expect noisy figures;');
    console.log('  the CPU-per-request columns and the ratios measured in this same run hold up best.');
  }
}
