import { constants, PerformanceObserver } from 'node:perf_hooks';

/**
 * Preloaded into the processes the bench measures (`node --expose-gc --import ./bench/lib/heap-probe.ts`),
 * never imported by them: on SIGUSR2 it runs a full garbage collection and prints one line with the memory
 * figures, so that "bytes per idle queue" counts live objects rather than garbage not yet collected. The
 * line also gives the garbage collections since the previous probe (their count, total and longest pause,
 * from perf_hooks' `gc` entries, and the kind of the longest: minor (scavenge), major (mark-compact),
 * incremental marking, weak callbacks); watching them costs an entry per collection. The probe's own forced
 * collections are left out: their entries arrive after the probe, in the window of the next one, where
 * they once passed for the longest pause of a measurement (a full collection of the whole heap at once).
 */
let gcCount = 0;
let gcTotalMs = 0;
let gcMaxMs = 0;
let gcMaxKind = '';
const KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const detail = (entry as { detail?: { kind: number; flags: number } }).detail;
    if (detail && (detail.flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) !== 0) continue;
    gcCount++;
    gcTotalMs += entry.duration;
    if (entry.duration > gcMaxMs) {
      gcMaxMs = entry.duration;
      gcMaxKind = (detail && KINDS[detail.kind]) ?? 'unknown';
    }
  }
}).observe({ entryTypes: ['gc'] });

process.on('SIGUSR2', () => {
  const since = { gcCount, gcTotalMs, gcMaxMs, gcMaxKind };
  gcCount = gcTotalMs = gcMaxMs = 0;
  gcMaxKind = '';
  const gc = (globalThis as { gc?: () => void }).gc;
  // Twice: the first pass may leave objects that only a finalizer or a weak reference kept.
  gc?.();
  gc?.();
  const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  console.log(`bench-memory ${JSON.stringify({ collected: gc !== undefined, rss, heapUsed, heapTotal, external, arrayBuffers, ...since })}`);
});
