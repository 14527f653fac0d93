import { ChatError } from '../actors/errors.ts';
import { Runtime } from '../actors/runtime.ts';
import { Store } from '../snapshots/store.ts';
import { ConfigError, type Config } from './config.ts';

/**
 * A data directory's actors, recovered as a boot would, without the HTTP server (operator commands);
 * `readOnly` opens it without writing anything (see StoreOptions.readOnly).
 */
export function openRuntime(config: Config, readOnly = false): { store: Store; runtime: Runtime; recovered: ReturnType<Runtime['recover']> } {
  const store = new Store(config.dataDir, { waitForFlush: true, archiveRetentionMs: config.logArchiveMs, readOnly });
  const runtime = new Runtime(store, {
    clock: { now: Date.now },
    queues: { heartbeatMs: config.heartbeatMs, idleTimeoutMs: config.queueIdleMs, sweepMs: config.sweepMs },
    // The same bounds as the server's: an operator's command may not make what the server would refuse.
    personalLimits: config.personalLimits,
    realmLimits: config.realmLimits,
  });
  try {
    return { store, runtime, recovered: runtime.recover() };
  } catch (error) {
    void store.close();
    throw error;
  }
}

/**
 * Recovers the data directory the caller holds exclusively, runs `work`, snapshots, closes. A log that
 * ends in an unreadable record is refused: appending after it would leave it in the middle of the log.
 */
export async function withRuntime<T>(config: Config, work: (runtime: Runtime) => Promise<T> | T): Promise<T> {
  let store: Store | null = null;
  try {
    const opened = openRuntime(config);
    store = opened.store;
    const { tornTail } = opened.recovered;
    if (tornTail) throw new ConfigError(`the log ends with an unreadable record (${tornTail.error}); start the server once to drop it`);
    const result = await work(opened.runtime);
    await opened.runtime.snapshot();
    return result;
  } catch (error) {
    if (error instanceof ChatError) throw new ConfigError(error.message);
    throw error;
  } finally {
    await store?.close();
  }
}
