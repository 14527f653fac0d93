/**
 * The event queues' sweep in-process: what the once-a-second look for due heartbeats and idle queues costs
 * the event loop at the queue counts a server reaches (an organization may hold 20,000; several of them more).
 *
 *   npx tsx bench/sweep.ts [--queues 20000,100000] [--sweeps 30]
 *
 * For each count, queues are opened in one registry with the server's default timings (heartbeat 50 s, idle
 * lifespan 10 minutes) and some garbage allocated between them, as a live heap has; then the clock moves a
 * second before each sweep (after a few untimed ones), with nothing due, which is what almost every sweep of a server finds. Beside it,
 * in the same run, the baseline: one walk over every queue object reading the fields the sweep decides on,
 * what a sweep that looks at every queue (as it did until 2026-11-27) pays at least.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_QUEUE_LIMITS } from '../actors/queue/limits.ts';
import { QueueRegistry, type Queue } from '../actors/queue/registry.ts';
import { percentile } from './lib/stats.ts';

const { values } = parseArgs({ options: { queues: { type: 'string', default: '20000,100000' }, sweeps: { type: 'string', default: '30' } } });
const counts = values.queues.split(',').map(Number);
const sweeps = Number(values.sweeps);

let now = Date.now();
const registry = new QueueRegistry({
  timings: { heartbeatMs: 50_000, idleTimeoutMs: 600_000, sweepMs: 1_000 },
  limits: { ...DEFAULT_QUEUE_LIMITS, perRealm: Math.max(...counts) },
  now: () => now,
});
const queues: Queue[] = [];
let garbage: unknown = null;

/** Sweeps untimed first: V8 compiles the loop during its first few calls. */
const WARMUP = 5;

const timed = (run: () => void): number[] => {
  const times: number[] = [];
  for (let i = 0; i < WARMUP; i++) {
    now += 1_000;
    run();
  }
  for (let i = 0; i < sweeps; i++) {
    now += 1_000;
    const started = performance.now();
    run();
    times.push(performance.now() - started);
  }
  return times;
};

console.log('queues | sweep p50 / p99 ms | every queue walked (baseline) p50 / p99 ms');
for (const count of [...counts].sort((a, b) => a - b)) {
  while (queues.length < count) {
    const i = queues.length;
    queues.push(registry.open({
      queueId: `bench-${i}`, realmId: 1 + Math.floor(i / 20_000), userId: i % 5_000, createdAt: now,
      spec: { eventTypes: ['message'], allPublicStreams: false, narrow: [], capabilities: {}, applyMarkdown: true, clientExtavatar: true, idleTimeoutMs: 600_000 },
    }));
    garbage = Array.from({ length: 20 }, (_, j) => ({ j, text: `garbage ${j}` }));
  }
  const sweep = timed(() => registry.sweep());
  let seen = 0;
  const walk = timed(() => {
    for (const queue of queues) if (queue.held || queue.subscriber || now - queue.lastPollStartedAt >= queue.context.spec.idleTimeoutMs) seen++;
  });
  const ms = (times: number[], p: number) => percentile(times, p).toFixed(3);
  console.log(`${count} | ${ms(sweep, 50)} / ${ms(sweep, 99)} | ${ms(walk, 50)} / ${ms(walk, 99)}${seen > 0 ? ' (some queue was due)' : ''}`);
}
void garbage;
