import { PerformanceObserver } from 'node:perf_hooks';

/**
 * Preloaded into the processes the bench measures (`node --expose-gc --import ./bench/lib/heap-probe.ts`),
 * never imported by them: on SIGUSR2 it runs a full garbage collection and prints one line with the memory
 * figures, so that "bytes per idle queue" counts live objects rather than garbage not yet collected. The
 * line also gives the garbage collections since the previous probe (their count, total and longest pause,
 * from perf_hooks' `gc` entries, before the probe's own); watching them costs an entry per collection.
 */
let gcCount = 0;
let gcTotalMs = 0;
let gcMaxMs = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gcCount++;
    gcTotalMs += entry.duration;
    gcMaxMs = Math.max(gcMaxMs, entry.duration);
  }
}).observe({ entryTypes: ['gc'] });

process.on('SIGUSR2', () => {
  const since = { gcCount, gcTotalMs, gcMaxMs };
  gcCount = gcTotalMs = gcMaxMs = 0;
  const gc = (globalThis as { gc?: () => void }).gc;
  // Twice: the first pass may leave objects that only a finalizer or a weak reference kept.
  gc?.();
  gc?.();
  const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  console.log(`bench-memory ${JSON.stringify({ collected: gc !== undefined, rss, heapUsed, heapTotal, external, arrayBuffers, ...since })}`);
});
