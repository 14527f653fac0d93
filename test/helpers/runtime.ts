import { Runtime } from '../../actors/runtime.ts';
import type { Clock } from '../../actors/realm/decide.ts';
import { Store } from '../../snapshots/store.ts';

/** Queue timings for runtimes opened without a server: long enough that no timer fires in a test. */
export const TEST_QUEUE_TIMINGS = { heartbeatMs: 50_000, idleTimeoutMs: 600_000, sweepMs: 1000 };

/**
 * The actors of a data directory without the HTTP server, recovered as a boot would: for tests that
 * rebuild state from snapshots and the log and compare it with the live one.
 */
export function openRuntime(dir: string, clock: Clock) {
  const store = new Store(dir, { waitForFlush: false });
  const runtime = new Runtime(store, { clock, queues: TEST_QUEUE_TIMINGS });
  const recovered = runtime.recover();
  return { store, runtime, recovered };
}
