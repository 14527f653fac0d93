import { UploadLinks } from './http/upload-links.ts';
import { EmojiImageStore } from './emoji-images.ts';
import { UploadStore } from './uploads.ts';
import { Runtime } from '../actors/runtime.ts';
import type { RealmState } from '../actors/realm/state.ts';
import { Store } from '../snapshots/store.ts';
import { SqliteSearchIndex } from '../snapshots/search-index.ts';
import { bootstrap, configuredExternalUrl, listenHostOf, realmHost, realmUrl } from './bootstrap.ts';
import type { Config } from './config.ts';
import { createDispatch, type Dispatch } from './http/dispatch.ts';
import { ClientBudgets } from './http/client-budgets.ts';
import { RateLimiter } from './http/rate-limit.ts';
import { SocketTickets } from './http/socket-tickets.ts';
import { withWebClient } from './http/static.ts';
import { createLogger, type Logger } from './log.ts';
import { DiskSpace, megabytes } from './disk-space.ts';
import { Mailer } from './mail.ts';
import { Metrics } from './metrics.ts';
import { PasswordQueue } from './password-queue.ts';
import { allRoutes } from './routes/index.ts';
import { eventSocketEndpoint } from './event-socket.ts';
import { listen } from './server.ts';
import { RealmExportJobs } from './realm-export-jobs.ts';
import { followDroppingCopies } from './replica-files.ts';
import type { AppServices } from './services.ts';
import { uwsBinary } from './uws-native.ts';
import { FEATURE_LEVEL, MERGE_BASE, VERSION } from './version.ts';
import { buildWebClient } from './web/build.ts';
import { servedWebClient } from './web/served-version.ts';
import { join } from 'node:path';

export interface RunningServer {
  port: number;
  url: string;
  externalUrl: string;
  runtime: Runtime;
  diskSpace: DiskSpace;
  dispatch: Dispatch;
  zuliprc: string;
  /** graceful stop: no new requests, answer those in flight, final snapshot, close the data directory */
  stop(): Promise<void>;
}

/** Opens the data directory, recovers the actors, makes the default organization if needed, and listens. */
export async function startServer(
  config: Config,
  log: Logger = createLogger(config.logLevel),
  /** where the first-start facts for the operator go (the owner's password, the zuliprc path) */
  announce: (line: string) => void = console.log,
): Promise<RunningServer> {
  const binary = uwsBinary();
  if (!binary.native) log.warn('uWebSockets.js native binary not loaded: running on the slow pure-JS fallback');

  const bootStarted = performance.now();
  // Cluster mode only: a single process loads no NATS code at all. (Before the data directory opens: an
  // empty one starts from the cluster's stored snapshot.)
  const cluster = config.cluster
    ? await (await import('./cluster/node.ts')).ClusterNode.connect(config.cluster, log, config.dataDir, (reason) => {
        // Memory may hold what the cluster never stored: a restart rebuilds this node from its log and the stream.
        log.error({ reason }, 'cluster: this node stops; restart it to rejoin as a replica');
        process.exit(CLUSTER_EXIT_CODE);
      })
    : null;
  const store = new Store(config.dataDir, { waitForFlush: config.waitForFlush, commitDelayMs: config.commitDelayMs, classicCommit: config.lmdbClassicCommit, archiveRetentionMs: config.logArchiveMs });
  const diskSpace = new DiskSpace(config.dataDir, config.minFreeDiskBytes, (low, free) => {
    if (low) log.error({ freeBytes: free, minFreeBytes: diskSpace.minFreeBytes }, `low disk space (${megabytes(free)} free): writes are refused until there is room`);
    else log.warn({ freeBytes: free }, 'disk space is back above the minimum: writes are taken again');
  });
  let live: Runtime | null = null;
  let serving: AppServices | null = null;
  const metrics = new Metrics(() => live, () => (live ? live.logPosition - store.snapshotSeq() : 0));
  storageGauges(metrics, store, diskSpace, () => live);
  const listenHost = listenHostOf(config);
  const searchIndex = new SqliteSearchIndex(config.dataDir, { prefixTerms: config.searchPrefixTerms });
  const runtime = new Runtime(cluster?.attach(store) ?? store, {
    search: searchIndex,
    clock: { now: Date.now },
    // The port is not part of a host, so the stand-in addresses are known before the server listens.
    realmHost: (stringId) => realmHost(configuredExternalUrl(config), stringId),
    // Asked lazily: without a configured external URL, the port is the one the server picks when it listens.
    organizationUrl: (stringId) => realmUrl(serving?.externalUrl ?? configuredExternalUrl(config), stringId),
    onDelivered: (count, seconds) => metrics.observeDelivery(count, seconds),
    writesRefused: () => diskSpace.refusal(),
    queues: { heartbeatMs: config.heartbeatMs, idleTimeoutMs: config.queueIdleMs, sweepMs: Math.min(config.sweepMs, config.heartbeatMs / 4) },
    queueLimits: config.queueLimits,
    ...(cluster ? { replication: cluster } : {}),
    bodyCache: config.messageBodyCache,
    chunkCache: config.messageChunkCache,
    keyCache: config.messageKeyCache,
    segmentCache: config.messageSegmentCache,
    personalLimits: config.personalLimits,
    realmLimits: config.realmLimits,
  });
  live = runtime;
  if (cluster?.seeded) await (await import('./cluster/snapshot-bucket.ts')).dropQueueRecords(store);
  const recovered = runtime.recover();
  if (recovered.tornTail) {
    // Everything before it is intact and replayed; the unreadable record itself is reported and dropped.
    log.warn({ seq: recovered.tornTail.seq, error: recovered.tornTail.error }, 'discarding a torn record at the end of the log');
    await runtime.discardTornTail();
  }
  const indexing = performance.now();
  const indexed = runtime.repairSearchIndex();
  if (indexed && indexed.how !== 'current') {
    const { built, ...repaired } = indexed;
    log.info({ ...repaired, ms: Math.round(performance.now() - indexing) }, repaired.how === 'building' ? 'search index being built in the background' : 'search index brought up to date');
    built?.then(
      (messages) => log.info({ messages, ms: Math.round(performance.now() - indexing) }, 'search index built'),
      (error: unknown) => log.warn({ err: error }, 'search index not built; the next start builds it again'),
    );
  }
  await runtime.markRunning();
  // Refused writes (a full disk) must not stop the start: the next start tries again. (In a cluster, the
  // primary does it once it is.)
  const adoptEmailVisibility = async () => {
    const adopted = await runtime.adoptEmailVisibility().catch((error: unknown) => {
      log.warn({ err: error }, 'email_address_visibility not yet applied for users who had set it');
      return 0;
    });
    if (adopted > 0) log.info({ users: adopted }, 'email_address_visibility now applied for users who had set it');
  };
  if (!cluster) await adoptEmailVisibility();
  log.info({ ...recovered, ms: Math.round(performance.now() - bootStarted), dataDir: config.dataDir }, 'recovered');

  const realmExports = new RealmExportJobs(runtime, config.dataDir, log);
  // Exports being made when the server stopped will never be finished. (In a cluster: by the primary, once it is.)
  if (!cluster) await realmExports.failInterrupted();
  const passwordQueue = new PasswordQueue(config.passwordHashing.concurrency, config.passwordHashing.queueLength);
  metrics.gauge('chat_password_hashes_queued', 'password hashes waiting for their turn', () => passwordQueue.queued);
  const services: AppServices = {
    runtime,
    config,
    log,
    metrics,
    diskSpace,
    mailer: new Mailer(`noreply@${configuredExternalUrl(config).hostname}`, join(config.dataDir, 'outbox'), config.smtpUrl, log),
    apiLimiter: config.rateLimit ? new RateLimiter(config.rateLimit.limit, config.rateLimit.windowSeconds) : null,
    emailChangeLimiter: config.emailChangeLimit ? new RateLimiter(config.emailChangeLimit.limit, config.emailChangeLimit.windowSeconds) : null,
    clientBudgets: new ClientBudgets(config.clientBudgets, config.loginLimit),
    passwordQueue,
    socketTickets: new SocketTickets(() => runtime.clock.now()),
    uploadLinks: new UploadLinks(() => runtime.clock.now()),
    realmExports,
    generation: Math.floor(Date.now() / 1000),
    externalUrl: configuredExternalUrl(config),
    realmUrl: (realm: RealmState) => realmUrl(services.externalUrl, realm.stringId),
    persistence: () => ({ snapshotSeq: store.snapshotSeq(), backup: store.lastBackup() }),
    files: {
      uploads: new UploadStore(config.dataDir, 'uploads', cluster?.files ?? null),
      avatars: new UploadStore(config.dataDir, 'avatars', cluster?.files ?? null),
      emoji: new EmojiImageStore(config.dataDir, cluster?.files ?? null),
    },
    ...(cluster ? { cluster } : {}),
  };
  serving = services;
  cluster?.registerMetrics(metrics);
  // The web client at / and /static/ in front of the API.
  const dispatch = withWebClient(createDispatch(services, allRoutes), buildWebClient, log);
  const http = await listen(dispatch, config.host, config.port, config.maxBodyBytes, {
    endpoint: eventSocketEndpoint(services),
    maxBufferedBytes: config.socketMaxBufferedBytes,
  }, new Set(config.trustedProxies));
  if (!config.externalUrl) services.externalUrl = new URL(`http://${listenHost}:${http.port}`);
  // In a cluster only the primary writes, the first organization too: once it is the primary.
  const zuliprc = cluster ? join(config.dataDir, 'zuliprc') : await bootstrap(services, announce);
  await cluster?.start(runtime, `http://${listenHost}:${http.port}`, async () => {
    await bootstrap(services, announce);
    await adoptEmailVisibility();
    await realmExports.failInterrupted();
  }, (record) => followDroppingCopies(runtime, services.files, record, () => runtime.follow(record), (error, pathId) => {
    log.warn({ err: error, pathId }, 'cluster: the local copy of a removed file could not be removed');
  }));
  const webClient = await servedWebClient(config.dataDir);
  if (recovered.queues > 0) {
    // Queues kept across a restart learn of it, as from the original server, and may reload what they cache.
    runtime.queues.deliver(runtime.queues.all(), {
      type: 'restart', svc_version: VERSION, svc_merge_base: MERGE_BASE, svc_feature_level: FEATURE_LEVEL, server_generation: services.generation,
    });
    // Web clients of another version than the one now served reload the page (after a random delay of theirs).
    if (webClient.changed) runtime.queues.deliver(runtime.queues.all(), { type: 'web_reload_client', immediate: false });
  }
  runtime.queues.startSweeping();
  // Due messages (those that fell due while the server was down too) go on the next turn.
  runtime.scheduled.start((error, key) => log.error({ err: error, scheduledMessage: key }, 'scheduled message delivery failed'));
  const snapshots = startSnapshotting(runtime, store, config, log, () => (metrics.lastSnapshotAt = Date.now()));
  // Without traffic too, so that the log and /health tell when space runs low or comes back.
  const diskWatch = setInterval(() => diskSpace.refusal(), DISK_CHECK_MS);
  diskWatch.unref();
  log.info({ host: config.host, port: http.port, externalUrl: services.externalUrl.origin, native: binary.native }, 'listening');

  let stopping: Promise<void> | null = null;
  return {
    port: http.port,
    url: `http://${listenHost}:${http.port}`,
    externalUrl: services.externalUrl.origin,
    runtime,
    diskSpace,
    dispatch,
    zuliprc,
    stop() {
      stopping ??= (async () => {
        clearInterval(snapshots);
        clearInterval(diskWatch);
        runtime.scheduled.stop();
        // Held long-polls are answered with what they have, so the drain does not wait a heartbeat.
        const drained = http.drain();
        runtime.queues.stop();
        await drained;
        await realmExports.stop();
        await cluster?.stop();
        await runtime.settled();
        await runtime.snapshot(true);
        await store.close();
        await searchIndex.close();
        log.info('stopped');
      })();
      return stopping;
    },
  };
}

const DISK_CHECK_MS = 5_000;
/** A cluster node that must restart exits with this (EX_TEMPFAIL): a supervisor restarts it. */
const CLUSTER_EXIT_CODE = 75;

/** What /metrics says of the data directory: free space, whether writes are refused, the log archive. */
function storageGauges(metrics: Metrics, store: Store, diskSpace: DiskSpace, runtime: () => Runtime | null): void {
  metrics.gauge('chat_disk_free_bytes', "free space on the data directory's disk", () => diskSpace.freeBytes() ?? -1);
  metrics.gauge('chat_disk_min_free_bytes', 'below this much free space writes are refused (CHAT_MIN_FREE_DISK)', () => diskSpace.minFreeBytes);
  metrics.gauge('chat_read_only', '1 while writes are refused (storage failure or low disk space)', () =>
    (runtime()?.readOnlyReason ?? diskSpace.refusal()) === null ? 0 : 1);
  metrics.gauge('chat_log_archive_entries', 'log records kept in the archive for point-in-time restore', () => store.archiveStats().entries);
  metrics.gauge('chat_log_archive_oldest_seconds', 'age of the oldest archived log record', () => {
    const { oldestAt } = store.archiveStats();
    return oldestAt === null ? 0 : (Date.now() - oldestAt) / 1000;
  });
  metrics.gauge('chat_snapshot_log_position', 'log position the last periodic snapshot covers', () => store.snapshotSeq());
  // -1 while no backup was taken of the data directory.
  metrics.gauge('chat_last_backup_age_seconds', "seconds since the last backup ('chat-server snapshot'), -1 if none", () => {
    const backup = store.lastBackup();
    return backup ? (Date.now() - backup.at) / 1000 : -1;
  });
  metrics.gauge('chat_last_backup_bytes', 'size of the last backup (data and files), -1 if none', () => store.lastBackup()?.bytes ?? -1);
  metrics.gauge('chat_last_backup_log_position', 'log position the last backup holds, -1 if none', () => store.lastBackup()?.seq ?? -1);
}

/** Snapshots on a timer, and sooner when the log has grown long, so that the log never grows unbounded. */
function startSnapshotting(runtime: Runtime, store: Store, config: Config, log: Logger, onWritten: () => void): NodeJS.Timeout {
  let running = false;
  let last = Date.now();
  const timer = setInterval(async () => {
    if (running) return;
    const due = Date.now() - last >= config.snapshotIntervalMs || runtime.logPosition - store.snapshotSeq() >= config.snapshotEveryEntries;
    if (!due) return;
    running = true;
    try {
      const written = await runtime.snapshot();
      last = Date.now();
      onWritten();
      if (written) log.debug({ actors: written, seq: runtime.logPosition }, 'snapshot written');
    } catch (error) {
      log.error({ err: error }, 'snapshot failed');
    } finally {
      running = false;
    }
  }, Math.min(1000, config.snapshotIntervalMs));
  timer.unref();
  return timer;
}
