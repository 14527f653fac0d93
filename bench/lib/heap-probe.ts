/**
 * Preloaded into the processes the bench measures (`node --expose-gc --import ./bench/lib/heap-probe.ts`),
 * never imported by them: on SIGUSR2 it runs a full garbage collection and prints one line with the memory
 * figures, so that "bytes per idle queue" counts live objects rather than garbage not yet collected.
 * Costs nothing until the signal comes.
 */
process.on('SIGUSR2', () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  // Twice: the first pass may leave objects that only a finalizer or a weak reference kept.
  gc?.();
  gc?.();
  const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  console.log(`bench-memory ${JSON.stringify({ collected: gc !== undefined, rss, heapUsed, heapTotal, external, arrayBuffers })}`);
});
