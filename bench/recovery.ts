/**
 * Recovery: how long the server takes to boot a data directory that holds many messages.
 *
 *   npx tsx bench/recovery.ts [--messages 1000000] [--log-tail 0.1]    this measurement on its own
 *   node --import tsx bench/recovery.ts write --dir D --messages N --log-tail F   the writer (the bench runs it)
 *   npx tsx bench/recovery.ts boot --dir D [--cpu-prof P]   one boot of a directory the writer wrote, kept, and its cold
 *                                             reads (50,000,000 messages take the writer one to two hours: write once, boot often)
 *
 * Seeding a million messages through HTTP would take longer than the rest of the bench, so the directory
 * is written by the server's own code in a process of its own: `Store` and `Runtime` as src/app.ts opens
 * them (durable group commits included), the organization, users and channel made with the commands the
 * API sends, and the messages sent with the command of POST /messages (src/routes/messages.ts), a thousand
 * per event-loop turn so that group commit batches them. A snapshot is written once all but the last
 * `logTail` share are sent: those stay in the log, as after a crash between two snapshots.
 *
 * Then the real server, compiled as `npm start` runs it (`.build/main.js serve --port 0 --data-dir D`,
 * pinned like the bench's server), boots that directory twice: first with the log tail to replay (its boot
 * ends with a snapshot of everything it replayed, as every boot does), then, after a graceful stop, from the
 * snapshot alone. Each boot reports the wall time from spawn to "Listening on" (Node startup and module
 * loading included) and the server's own
 * 'recovered' log line (`ms`: open, load, replay, the boot snapshot), then reads the newest message back
 * over HTTP and probes its memory.
 */
import { statSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Api, basicAuth, formEncode, readZuliprc } from './lib/api.ts';
import { measuredServerArgs } from './lib/compiled.ts';
import { writeOrganization } from './lib/organization.ts';
import { allThreadsRunNs, cpuSeconds, mainThreadQueuedNs, threadRunNs, killAll, mainThreadRunNs, makeTempDir, pinSelf, removeTempDir, runNode, settledMemory, startNode, stopAll, type Child, type MemoryProbe } from './lib/proc.ts';
import { openConnection, requestText, type RawResponse } from './lib/raw-http.ts';
import { percentile, round } from './lib/stats.ts';

export interface RecoveryOptions {
  messages: number;
  /** the share of the messages sent after the last snapshot, left for the boot to replay from the log */
  logTailShare: number;
  /** bounds on the writer and on each boot (spawn to listening) */
  writeTimeoutMs: number;
  bootTimeoutMs: number;
}

/** Messages sent per event-loop turn by the writer: one group commit each. */
const BATCH = 1000;
/**
 * The writer snapshots every this many messages, as the server's snapshot timer would: each snapshot lets
 * the chunks and bodies it stored leave memory (paged.ts, bodies.ts), so the writer's heap holds the
 * indexes and flags of the history, not the history, and 10,000,000 or 50,000,000 messages fit.
 */
const SNAPSHOT_EVERY = 250_000;
/** The channel's subscribers (the owner and nine users) and its topics, which the messages cycle through. */
const SUBSCRIBERS = 10;
const TOPICS = 100;
const WRITER_MARK = 'recovery-writer ';
const MB = 1024 * 1024;

export interface WriterResult {
  messages: number;
  subscribers: number;
  /** in-process sends, decide to durable commit, without HTTP */
  sendSeconds: number;
  messagesPerSecond: number;
  /** the writer's snapshot (all but the log tail), as the server's snapshot timer would write it */
  snapshotMs: number;
  snapshotAfter: number;
  logEntries: number;
  lastMessageId: number;
}

export interface Boot {
  variant: 'log tail' | 'snapshot';
  /** spawn to the "Listening on" line */
  wallMs: number;
  /** the server's CPU time (every thread) from spawn to listening: steadier than wallMs on a shared machine */
  cpuMs: number;
  /** the server's own 'recovered' line: open, snapshots, replay and the boot snapshot */
  recoveredMs: number;
  snapshots: number;
  replayed: number;
  /** graceful stop: drain, final snapshot, close */
  stopMs: number;
  memory: MemoryProbe;
  /** GET /messages of 50 around random anchors over the whole history, one at a time: nearly all cold */
  /** absent in results written before the history was paged */
  cold?: ColdReads;
}

/** Client latencies in milliseconds of COLD_READS requests of each kind, and the server's CPU time per request. */
export interface ColdReads {
  /** no narrow: 50 consecutive ids, one or two chunks */
  allP50: number;
  allP99: number;
  /** channel and topic: 50 messages of one of TOPICS topics, a few chunks */
  topicP50: number;
  topicP99: number;
  /**
   * The server's main thread's CPU time per request (/proc schedstat, read while the server waits for the
   * next request: in nanoseconds, without the client's scheduling on a loaded machine), and every thread's
   * (the collector's helpers too). Absent in results written before 2026-11-26 12:00.
   */
  allMainCpuP50?: number;
  allMainCpuP99?: number;
  topicMainCpuP50?: number;
  topicMainCpuP99?: number;
  allCpuP99?: number;
  topicCpuP99?: number;
  /**
   * Where the server's CPU went beyond its main thread, per kind: each thread name's run time over the 200
   * reads, and that of the three reads with the most CPU of every thread (what sets the p99), in ms.
   */
  allThreads?: string;
  topicThreads?: string;
  /**
   * The same reads again once the server has served the first ones (its code compiled, the index segments
   * that fit the cache read), at anchors of another sequence: a running server's cold history. Latencies
   * and every thread's CPU p99, in ms; absent before 2026-11-26 14:30.
   */
  running?: {
    allP50: number; allP99: number; topicP50: number; topicP99: number; allCpuP99: number; topicCpuP99: number;
    /** the main thread's CPU p50/p99 and each kind's threads (as allThreads), with its slowest reads: absent before 2026-11-26 17:00 */
    allMainCpuP50?: number; allMainCpuP99?: number; topicMainCpuP50?: number; topicMainCpuP99?: number;
    allThreads?: string; topicThreads?: string;
  };
}

/**
 * This process's own full collection, run between two timed reads: the client allocates about 100 KB a read
 * (the answer, parsed), and its scavenges (1-3 ms) and mark-compacts (5-20 ms) fell within 2-3 of each 200
 * timed reads, enough to set their p99 (bench/README.md, "Cold reads: the answer as bytes"); a young
 * collection alone still left the mark-compacts. A forced collection leaves sweeping and freeing to V8's
 * helper threads, 1-7 ms of CPU on this process's one core in the next milliseconds: the read waits until
 * the process has been idle for a while (at most 100 ms).
 */
function clientCollector(): () => Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (options: { type: 'minor' | 'major' }) => void;
  return async () => {
    gc({ type: 'major' });
    for (let i = 0; i < 50; i++) {
      const before = process.cpuUsage();
      await new Promise((resolve) => setTimeout(resolve, 2));
      const spent = process.cpuUsage(before);
      if (spent.user + spent.system < QUIET_CLIENT_US) return;
    }
  };
}

/** CPU (us) this process may spend over 2 ms of waiting and still count as idle: the timer's own cost is far less. */
const QUIET_CLIENT_US = 300;

/**
 * Watches this process's collector pauses: `within` sums them within each window (in ms) once their entries,
 * which arrive after the fact, are in; `stop` ends the watch.
 */
function clientPauseWatch(): { within: (windows: readonly [number, number][]) => Promise<number[]>; stop: () => void } {
  const pauses: PerformanceEntry[] = [];
  const observer = new PerformanceObserver((list) => pauses.push(...list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  return {
    async within(windows) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      const sums = windows.map(([from, to]) =>
        pauses.filter((pause) => pause.startTime >= from && pause.startTime < to).reduce((sum, pause) => sum + pause.duration, 0));
      pauses.length = 0;
      return sums;
    },
    stop: () => observer.disconnect(),
  };
}

/** Cold reads measured per boot and kind: enough for a p99 that is not the maximum. */
const COLD_READS = 200;
/** Reads served, untimed, between the just-booted passes and the running ones. */
const SERVING_READS = 2000;

/** bench/cold-reads.ts's figures for one kind of read (its second pass), in milliseconds. */
export interface ColdPass {
  wallP50: number;
  wallP99: number;
  /** the process's CPU time per read, every thread */
  cpuP50: number;
  cpuP99: number;
  /** collector pauses that fell within the reads */
  gcPauses: number;
  gcMs: number;
  gcLongestMs: number;
  /** the longest read's wall time */
  maxMs: number;
}

/** Marks bench/cold-reads.ts's line of results. */
export const COLD_READS_MARK = 'cold-reads ';

export interface RecoveryResult {
  messages: number;
  logTail: number;
  writer: WriterResult;
  /** the data directory's allocated size before the first boot */
  diskBytes: number;
  boots: Boot[];
  /** the same reads in-process on the directory after the boots (bench/cold-reads.ts); absent before 2026-11-26 12:00 */
  coldInProcess?: { all: ColdPass; topic: ColdPass };
}

// ---- the writer (its own process) ------------------------------------------------------------------------

async function writeDataDir(dir: string, messages: number, logTailShare: number): Promise<WriterResult> {
  // The server's code is imported by writeOrganization: the measuring side never loads it.
  // No archive of the log: point-in-time restore is not measured, and at 50,000,000 messages it would fill the disk.
  // The search index is kept as the server keeps it: the first boot only brings it up to the log's end.
  const { store, runtime, realm, userIds, channelId, search } = await writeOrganization(dir, { users: SUBSCRIBERS, name: 'recovery', channel: 'recovery', archiveRetentionMs: 0, searchIndex: true });

  const snapshotAfter = Math.round(messages * (1 - logTailShare));
  let snapshotMs = NaN;
  let lastMessageId = 0;
  const started = performance.now();
  for (let sent = 0; sent < messages; ) {
    // A batch never crosses the snapshot point, so exactly the tail stays in the log.
    const end = Math.min(messages, sent + BATCH, sent < snapshotAfter ? snapshotAfter : messages, sent < snapshotAfter ? (Math.floor(sent / SNAPSHOT_EVERY) + 1) * SNAPSHOT_EVERY : messages);
    const batch: Promise<unknown[]>[] = [];
    for (let n = sent; n < end; n++) {
      // The command POST /messages sends (src/routes/messages.ts), from each subscriber in turn.
      batch.push(
        runtime.execute(realm.realmId, {
          type: 'message.send',
          caller: { kind: 'user', userId: userIds[n % SUBSCRIBERS]! },
          kind: 'channel',
          to: channelId,
          topic: `topic ${n % TOPICS}`,
          content: `Message ${n}: the quick brown fox jumps over the **lazy** dog, then naps.`,
          client: 'API',
        }),
      );
    }
    const changes = await Promise.all(batch);
    const last = changes.at(-1)?.[0] as { type: string; message?: { id: number } } | undefined;
    if (last?.type === 'message.sent') lastMessageId = last.message!.id;
    sent = end;
    if (sent < snapshotAfter && sent % SNAPSHOT_EVERY === 0) await runtime.snapshot();
    if (sent === snapshotAfter) {
      const began = performance.now();
      await runtime.snapshot();
      snapshotMs = performance.now() - began;
    }
    if (sent % Math.max(BATCH, Math.round(messages / 10 / BATCH) * BATCH) === 0 || sent === messages) {
      console.log(`  writer: ${sent} messages, ${((performance.now() - started) / 1000).toFixed(1)} s, heap ${round(process.memoryUsage().heapUsed / MB)} MB`);
    }
  }
  const sendSeconds = (performance.now() - started - (Number.isFinite(snapshotMs) ? snapshotMs : 0)) / 1000;
  await runtime.settled();
  const logEntries = store.logCount();
  await search?.close();
  await store.close();
  return {
    messages,
    subscribers: SUBSCRIBERS,
    sendSeconds,
    messagesPerSecond: messages / sendSeconds,
    snapshotMs,
    snapshotAfter,
    logEntries,
    lastMessageId,
  };
}

// ---- the measurement -------------------------------------------------------------------------------------

/** Allocated bytes of the files in a directory (LMDB's data file is sparse: its length says little). */
function diskBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) total += statSync(join(dir, name)).blocks * 512;
  return total;
}

/**
 * The fields of the server's 'recovered' log line (pino JSON at log level info). pino writes asynchronously,
 * so the line may reach the pipe after "Listening on": it is waited for a little.
 */
async function recoveredLine(output: () => string): Promise<{ ms: number; snapshots: number; replayed: number }> {
  const deadline = performance.now() + 5000;
  for (;;) {
    for (const line of output().split('\n')) {
      if (!line.includes('"msg":"recovered"')) continue;
      const fields = JSON.parse(line) as { ms: number; snapshots: number; replayed: number };
      return { ms: fields.ms, snapshots: fields.snapshots, replayed: fields.replayed };
    }
    if (performance.now() > deadline) throw new Error(`no 'recovered' line in the server's output:\n${output().slice(0, 2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** `lastMessageId` null: a kept directory, whose newest message is asked for once the server listens */
async function boot(dir: string, variant: Boot['variant'], expected: { lastMessageId: number | null; replayed: number | null }, timeoutMs: number, nodeArgs: string[] = []): Promise<Boot> {
  const args = [...nodeArgs, ...(await measuredServerArgs(['serve', '--port', '0', '--data-dir', dir]))];
  const started = performance.now();
  const server: Child = await startNode(
    'server (recovery)',
    args,
    { CHAT_RATE_LIMIT: 'off', CHAT_LOG_LEVEL: 'info' },
    timeoutMs,
  );
  const wallMs = performance.now() - started;
  const cpuMs = cpuSeconds(server.pid) * 1000;
  try {
    const recovered = await recoveredLine(() => server.output());
    if (expected.replayed !== null && recovered.replayed < expected.replayed) {
      throw new Error(`the ${variant} boot replayed ${recovered.replayed} log entries, expected at least ${expected.replayed}`);
    }
    // The newest message, read back over HTTP: the boot recovered everything.
    const owner = readZuliprc(join(dir, 'zuliprc'));
    const lastMessageId = expected.lastMessageId ?? (await newestMessageId(new Api(server.url), owner));
    const body = await new Api(server.url).ok('GET', `/messages/${lastMessageId}`, {}, owner);
    if ((body.message as { id?: number } | undefined)?.id !== lastMessageId) throw new Error(`message ${lastMessageId} not served after the ${variant} boot`);
    const memory = await settledMemory(server);
    const cold = await coldReads(Number(new URL(server.url).port), owner, lastMessageId, server.pid);
    const stopping = performance.now();
    await server.stop();
    const result: Boot = {
      variant,
      wallMs,
      cpuMs,
      recoveredMs: recovered.ms,
      snapshots: recovered.snapshots,
      replayed: recovered.replayed,
      stopMs: performance.now() - stopping,
      memory,
      cold,
    };
    console.log(
      `  boot (${variant}): ${(wallMs / 1000).toFixed(2)} s from spawn to listening (${(cpuMs / 1000).toFixed(2)} s of CPU), recovered in ${(recovered.ms / 1000).toFixed(2)} s ` +
        `(${recovered.snapshots} snapshot records, ${recovered.replayed} log entries replayed); stop ${(result.stopMs / 1000).toFixed(2)} s; ` +
        `heap ${round(memory.heapUsed / MB)} MB, anonymous RSS ${round(memory.rssAnon / MB)} MB; ` +
        `cold GET /messages of 50 p50/p99 ${cold.allP50.toFixed(2)}/${cold.allP99.toFixed(2)} ms, of a topic ${cold.topicP50.toFixed(2)}/${cold.topicP99.toFixed(2)} ms; ` +
        `the server's main thread's CPU per request ${cold.allMainCpuP50!.toFixed(2)}/${cold.allMainCpuP99!.toFixed(2)} ms, of a topic ${cold.topicMainCpuP50!.toFixed(2)}/${cold.topicMainCpuP99!.toFixed(2)} ms ` +
        `(every thread's p99 ${cold.allCpuP99!.toFixed(2)}, ${cold.topicCpuP99!.toFixed(2)} ms)`,
    );
    console.log(`  threads' CPU (ms), no narrow: ${cold.allThreads}\n  threads' CPU (ms), a topic: ${cold.topicThreads}`);
    const running = cold.running!;
    console.log(
      `  cold GET /messages of 50 once the server has served the first ${COLD_READS} of each kind (other anchors): p50/p99 ${running.allP50.toFixed(2)}/${running.allP99.toFixed(2)} ms, ` +
        `of a topic ${running.topicP50.toFixed(2)}/${running.topicP99.toFixed(2)} ms (every thread's CPU p99 ${running.allCpuP99.toFixed(2)}, ${running.topicCpuP99.toFixed(2)} ms; ` +
        `the main thread's p50/p99 ${running.allMainCpuP50!.toFixed(2)}/${running.allMainCpuP99!.toFixed(2)}, ${running.topicMainCpuP50!.toFixed(2)}/${running.topicMainCpuP99!.toFixed(2)} ms)`,
    );
    console.log(`  running, threads' CPU (ms), no narrow: ${running.allThreads}\n  running, threads' CPU (ms), a topic: ${running.topicThreads}`);
    return result;
  } finally {
    await server.stop();
  }
}

async function newestMessageId(api: Api, owner: ReturnType<typeof readZuliprc>): Promise<number> {
  const body = await api.ok('GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 0 }, owner);
  const newest = (body.messages as { id: number }[] | undefined)?.[0]?.id;
  if (newest === undefined) throw new Error('the kept directory serves no message');
  return newest;
}

/**
 * GET /messages, 50 before an anchor drawn at random over the history (a fixed sequence, the same for every
 * run), with no narrow and then narrowed to the anchor's topic: with thousands of chunks and a cache of a few
 * dozen, nearly every request reads its chunks back from the data directory. Each request goes alone on one
 * keep-alive connection, timed from its write to its answer's last byte (fetch's own work and the parse of
 * the answer are not the server's latency). Besides that latency, the server's CPU time for it: its
 * threads' run times (/proc schedstat) before and after, read while it waits for the next request.
 * Twice: first on the freshly booted server (its code not yet compiled, its index segments not yet read: at
 * 1,000,000 messages the channel's eight fit the segment cache), then, after SERVING_READS more untimed, as a
 * server that has been serving answers them, with anchors of another sequence, so that the chunks and bodies
 * it reads are still cold.
 */
async function coldReads(port: number, owner: ReturnType<typeof readZuliprc>, lastMessageId: number, pid: number): Promise<ColdReads> {
  let seed = 17;
  const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
  const collect = clientCollector();
  const clientPauses = clientPauseWatch();
  const connection = await openConnection(port);
  const headers = { Authorization: basicAuth(owner) };
  const readRequest = (anchor: number, params: (anchor: number) => Record<string, unknown>) =>
    requestText('GET', `/api/v1/messages?${formEncode({ anchor, num_before: 50, num_after: 0, ...params(anchor) })}`, port, headers);
  const checkAnswer = (anchor: number, response: RawResponse) => {
    const body = JSON.parse(response.body.toString()) as { messages?: unknown };
    if (response.status !== 200 || !Array.isArray(body.messages) || body.messages.length === 0) {
      throw new Error(`GET /messages before ${anchor} answered ${response.status}: ${response.body.toString().slice(0, 500)}`);
    }
  };
  const timed = async (params: (anchor: number) => Record<string, unknown>) => {
    const times: number[] = [];
    const main: number[] = [];
    const all: number[] = [];
    /** the server's main thread waiting for its core, and this client's own CPU (every thread), per read in ms */
    const queued: number[] = [];
    const client: number[] = [];
    /** each read's span (performance.now()), to find the client's collector pauses within it */
    const windows: [number, number][] = [];
    /** each read's run time (ms) by thread name, the main thread as `main` */
    const byThread: Map<string, number>[] = [];
    for (let i = 0; i < COLD_READS; i++) {
      // From TOPICS on: every topic has a message at or before the anchor.
      const anchor = TOPICS + Math.floor(random() * (lastMessageId - TOPICS));
      await collect();
      const threadsBefore = threadRunNs(pid);
      const mainBefore = mainThreadRunNs(pid);
      const allBefore = allThreadsRunNs(pid);
      const queuedBefore = mainThreadQueuedNs(pid);
      const clientBefore = process.cpuUsage();
      const request = readRequest(anchor, params);
      const began = performance.now();
      const response = await connection.request(request);
      times.push(response.at - began);
      const clientSpent = process.cpuUsage(clientBefore);
      client.push((clientSpent.user + clientSpent.system) / 1000);
      windows.push([began, performance.now()]);
      queued.push((mainThreadQueuedNs(pid) - queuedBefore) / 1e6);
      main.push((mainThreadRunNs(pid) - mainBefore) / 1e6);
      all.push((allThreadsRunNs(pid) - allBefore) / 1e6);
      const spent = new Map<string, number>();
      for (const [tid, thread] of threadRunNs(pid)) {
        const ms = (thread.ns - (threadsBefore.get(tid)?.ns ?? 0)) / 1e6;
        // Node names every thread `node`: told apart by their order of creation (V8's platform workers, libuv's pool, workers).
        const name = tid === pid ? 'main' : `${thread.name}+${tid - pid}`;
        if (ms > 0) spent.set(name, (spent.get(name) ?? 0) + ms);
      }
      byThread.push(spent);
      checkAnswer(anchor, response);
    }
    const clientGc = await clientPauses.within(windows);
    return { times, main, all, threads: `${threadSummary(byThread, all)}; the 3 slowest: ${slowestReads(times, main, all, queued, client, clientGc)}` };
  };
  const noNarrow = () => ({});
  // The writer's messages cycle through the topics in id order (from the channel's first message on).
  const ofTopic = (anchor: number) => ({ narrow: [['channel', 'recovery'], ['topic', `topic ${anchor % TOPICS}`]] });
  const all = await timed(noNarrow);
  const topic = await timed(ofTopic);
  // Serving, untimed, at anchors of a third sequence: the 400 reads above leave V8 optimizing the request
  // and read paths (20-odd functions, 1-34 ms of compiling each) through the next 400, on the server's core,
  // and the heap short of the size at which a server that keeps serving collects.
  seed = 9999;
  for (let i = 0; i < SERVING_READS; i++) {
    const anchor = TOPICS + Math.floor(random() * (lastMessageId - TOPICS));
    checkAnswer(anchor, await connection.request(readRequest(anchor, i % 2 === 0 ? noNarrow : ofTopic)));
  }
  seed = 4242;
  const runningAll = await timed(noNarrow);
  const runningTopic = await timed(ofTopic);
  connection.close();
  clientPauses.stop();
  return {
    allP50: percentile(all.times, 50), allP99: percentile(all.times, 99), topicP50: percentile(topic.times, 50), topicP99: percentile(topic.times, 99),
    allMainCpuP50: percentile(all.main, 50), allMainCpuP99: percentile(all.main, 99),
    topicMainCpuP50: percentile(topic.main, 50), topicMainCpuP99: percentile(topic.main, 99),
    allCpuP99: percentile(all.all, 99), topicCpuP99: percentile(topic.all, 99),
    allThreads: all.threads, topicThreads: topic.threads,
    running: {
      allP50: percentile(runningAll.times, 50), allP99: percentile(runningAll.times, 99),
      topicP50: percentile(runningTopic.times, 50), topicP99: percentile(runningTopic.times, 99),
      allCpuP99: percentile(runningAll.all, 99), topicCpuP99: percentile(runningTopic.all, 99),
      allMainCpuP50: percentile(runningAll.main, 50), allMainCpuP99: percentile(runningAll.main, 99),
      topicMainCpuP50: percentile(runningTopic.main, 50), topicMainCpuP99: percentile(runningTopic.main, 99),
      allThreads: runningAll.threads, topicThreads: runningTopic.threads,
    },
  };
}

/**
 * The three reads that took longest at the client: each one's wall time, its main thread's CPU and every
 * thread's, the main thread's wait for its core, and the client's own CPU, in ms.
 */
function slowestReads(
  times: readonly number[], main: readonly number[], all: readonly number[], queued: readonly number[], client: readonly number[], clientGc: readonly number[],
): string {
  const slowest = times.map((_, i) => i).sort((a, b) => times[b]! - times[a]!).slice(0, 3);
  return slowest
    .map((i) => `#${i} ${times[i]!.toFixed(1)} (main ${main[i]!.toFixed(1)}, all ${all[i]!.toFixed(1)}, main queued ${queued[i]!.toFixed(1)}, client ${client[i]!.toFixed(1)}, its collector ${clientGc[i]!.toFixed(1)})`)
    .join(', ');
}

/** Each thread name's run time over the reads, then that of the three reads with the most CPU of every thread. */
function threadSummary(byThread: readonly Map<string, number>[], all: readonly number[]): string {
  const format = (spent: ReadonlyMap<string, number>) =>
    [...spent].sort((a, b) => b[1] - a[1]).map(([name, ms]) => `${name} ${ms.toFixed(1)}`).join(', ');
  const total = new Map<string, number>();
  for (const spent of byThread) for (const [name, ms] of spent) total.set(name, (total.get(name) ?? 0) + ms);
  const slowest = all.map((_, i) => i).sort((a, b) => all[b]! - all[a]!).slice(0, 3);
  return `in all: ${format(total)}; the 3 dearest reads: ${slowest.map((i) => `#${i} [${format(byThread[i]!)}]`).join('; ')}`;
}

/**
 * The cold reads again, in a process that opens the directory with the server's code and times the route's
 * work without HTTP (bench/cold-reads.ts, run through tsx): the CPU figure beside the latencies over HTTP.
 */
async function coldReadsInProcess(dir: string, timeoutMs: number): Promise<{ all: ColdPass; topic: ColdPass }> {
  const output = await runNode('cold reads in-process', ['bench/cold-reads.ts', '--dir', dir, '--reads', String(COLD_READS)], timeoutMs);
  const mark = output.lastIndexOf(COLD_READS_MARK);
  if (mark < 0) throw new Error(`bench/cold-reads.ts printed no result:\n${output.slice(-2000)}`);
  const result = JSON.parse(output.slice(mark + COLD_READS_MARK.length).split('\n')[0]!) as { all: ColdPass; topic: ColdPass };
  const line = (pass: ColdPass) =>
    `wall p50/p99 ${pass.wallP50.toFixed(2)}/${pass.wallP99.toFixed(2)} ms, CPU p50/p99 ${pass.cpuP50.toFixed(2)}/${pass.cpuP99.toFixed(2)} ms, ` +
    `${pass.gcPauses} collector pauses (the longest ${pass.gcLongestMs.toFixed(2)} ms)`;
  console.log(`  cold reads in-process (bench/cold-reads.ts): no narrow ${line(result.all)}; of a topic ${line(result.topic)}`);
  return result;
}

/** Writes a data directory of `options.messages` messages in a child process, then boots it twice. */
export async function runRecovery(options: RecoveryOptions): Promise<RecoveryResult> {
  const dir = makeTempDir('chat-bench-recovery-');
  try {
    console.log(`\nRecovery: writing ${options.messages} messages in-process (${Math.round(options.logTailShare * 100)}% left in the log) to ${dir}`);
    const output = await runNode(
      'recovery writer',
      ['bench/recovery.ts', 'write', '--dir', dir, '--messages', String(options.messages), '--log-tail', String(options.logTailShare)],
      options.writeTimeoutMs,
      {},
      (line) => line.startsWith('  writer:') && console.log(line),
    );
    const mark = output.lastIndexOf(WRITER_MARK);
    if (mark < 0) throw new Error(`the writer printed no result:\n${output.slice(-2000)}`);
    const writer = JSON.parse(output.slice(mark + WRITER_MARK.length).split('\n')[0]!) as WriterResult;
    const disk = diskBytes(dir);
    console.log(
      `  writer: ${writer.messages} messages in ${writer.sendSeconds.toFixed(1)} s (${round(writer.messagesPerSecond)}/s in-process, ` +
        `${writer.subscribers} subscribers), snapshot at ${writer.snapshotAfter} took ${(writer.snapshotMs / 1000).toFixed(2)} s, ` +
        `${writer.logEntries} log entries after it; ${round(disk / MB)} MB on disk`,
    );
    const tail = writer.messages - writer.snapshotAfter;
    const boots = [await boot(dir, 'log tail', { lastMessageId: writer.lastMessageId, replayed: tail }, options.bootTimeoutMs)];
    boots.push(await boot(dir, 'snapshot', { lastMessageId: writer.lastMessageId, replayed: null }, options.bootTimeoutMs));
    const coldInProcess = await coldReadsInProcess(dir, options.bootTimeoutMs);
    return { messages: writer.messages, logTail: tail, writer, diskBytes: disk, boots, coldInProcess };
  } finally {
    removeTempDir(dir);
  }
}

// ---- command line ----------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: { dir: { type: 'string' }, messages: { type: 'string', default: '1000000' }, 'log-tail': { type: 'string', default: '0.1' }, 'cpu-prof': { type: 'string' } },
    allowPositionals: true,
  });
  const messages = Number(values.messages);
  const logTailShare = Number(values['log-tail']);
  if (!Number.isInteger(messages) || messages < BATCH) throw new Error(`--messages must be an integer of at least ${BATCH}`);
  if (!(logTailShare >= 0 && logTailShare < 1)) throw new Error('--log-tail must be in [0, 1)');
  if (positionals[0] === 'write') {
    if (!values.dir) throw new Error('write needs --dir');
    const result = await writeDataDir(values.dir, messages, logTailShare);
    console.log(`${WRITER_MARK}${JSON.stringify(result)}`);
    return;
  }
  pinSelf();
  if (positionals[0] === 'boot') {
    // A directory the writer wrote, booted once; the boot snapshots any log tail.
    if (!values.dir) throw new Error('boot needs --dir');
    const profile = values['cpu-prof'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', values['cpu-prof']];
    const result = await boot(values.dir, 'snapshot', { lastMessageId: null, replayed: null }, 600_000, profile);
    console.log(JSON.stringify({ ...result, memory: undefined, coldInProcess: await coldReadsInProcess(values.dir, 600_000) }, null, 2));
    return;
  }
  // At least 4,000 messages a second (the writer does 7,000-16,000 here): 50,000,000 may take 3.5 hours.
  const result = await runRecovery({ messages, logTailShare, writeTimeoutMs: Math.max(1_800_000, messages / 4), bootTimeoutMs: 600_000 });
  console.log(JSON.stringify({ ...result, boots: result.boots.map(({ memory: _memory, ...rest }) => rest) }, null, 2));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      killAll();
      process.exit(130);
    });
  }
  main()
    .catch((error: unknown) => {
      console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
      process.exitCode = 1;
    })
    .finally(async () => {
      await stopAll();
      killAll();
      process.exit();
    });
}
