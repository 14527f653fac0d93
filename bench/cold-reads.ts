/**
 * Cold reads in-process: what GET /messages of 50 costs the server over a history mostly on disk, without
 * the HTTP client and its scheduling on a shared machine (bench/recovery.ts measures them over HTTP).
 *
 *   node --import tsx bench/recovery.ts write --dir D --messages 1000000 --log-tail 0.001
 *   npx tsx bench/cold-reads.ts --dir D [--reads 200]
 *
 * Opens D as a boot does (its log tail replayed, no snapshot written), then, for `reads` anchors drawn over
 * the history (the sequence recovery.ts draws), times the window (narrow, candidate lists, the messages'
 * metadata) and the JSON of its messages (bodies, views) as the route builds them, with no narrow and then
 * narrowed to the anchor's topic, twice each; the first pass of each kind reads the indexes it needs. Per
 * read: the wall time, the process's CPU time (every thread: the collector's concurrent marking too; it
 * does not count waiting for a core on a loaded machine, where wall time does), and the collector's pauses
 * that fell within it (perf_hooks).
 * The last line gives the second passes as JSON, for bench/recovery.ts.
 */
import { parseArgs } from 'node:util';
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { resolveNarrow, type NarrowTerm } from '../actors/realm/messages/narrow.ts';
import { fetchWindow } from '../actors/realm/messages/query.ts';
import { Runtime } from '../actors/runtime.ts';
import { Store } from '../snapshots/store.ts';
import { encodedFields } from '../src/http/envelope.ts';
import { writeFetchedMessages } from '../src/routes/message-params.ts';
import { percentile } from './lib/stats.ts';
import { COLD_READS_MARK, type ColdPass } from './recovery.ts';

/** recovery.ts's writer: its channel's topics, which its messages cycle through */
const TOPICS = 100;
const CHANNEL = 'recovery';
interface Timed {
  start: number;
  end: number;
}

/** The collector's pauses within the reads: how many, their total and the longest, in ms. */
function pausesWithin(reads: readonly Timed[], pauses: readonly PerformanceEntry[]): { count: number; ms: number; longest: number } {
  let count = 0;
  let ms = 0;
  let longest = 0;
  for (const pause of pauses) {
    const end = pause.startTime + pause.duration;
    if (!reads.some((read) => pause.startTime < read.end && end > read.start)) continue;
    count++;
    ms += pause.duration;
    longest = Math.max(longest, pause.duration);
  }
  return { count, ms, longest };
}

/** perf_hooks' kinds of collection (PerformanceEntry.detail.kind) */
const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental marking',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};

/** The slowest reads by CPU time, each with the collector's pauses within it: what sets the p99. */
function slowest(reads: readonly Timed[], cpu: readonly number[], pauses: readonly PerformanceEntry[], count: number): string {
  const order = cpu.map((_, i) => i).sort((a, b) => cpu[b]! - cpu[a]!).slice(0, count);
  return order
    .map((i) => {
      const read = reads[i]!;
      const within = pauses.filter((pause) => pause.startTime < read.end && pause.startTime + pause.duration > read.start);
      const gc = within.map((pause) => `${GC_KINDS[((pause as { detail?: { kind?: number } }).detail?.kind) ?? 0] ?? 'collection'} ${pause.duration.toFixed(1)}`).join(', ');
      return `${cpu[i]!.toFixed(1)}${gc ? ` (${gc})` : ''}`;
    })
    .join(', ');
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { dir: { type: 'string' }, reads: { type: 'string', default: '200' } } });
  if (!values.dir) throw new Error('--dir is required');
  const reads = Number(values.reads);
  const began = performance.now();
  const store = new Store(values.dir, { waitForFlush: false });
  const runtime = new Runtime(store, { clock: { now: Date.now }, queues: { heartbeatMs: 50_000, idleTimeoutMs: 600_000, sweepMs: 1000 } });
  runtime.recover();
  console.log(`recovered in ${(performance.now() - began).toFixed(0)} ms`);
  const realm = runtime.realmState(1);
  const owner = 1;
  const last = realm.messages.nextId - 1;
  const options = { applyMarkdown: true, clientExtavatar: true, allowEmptyTopicName: false };
  const pauses: PerformanceEntry[] = [];
  const observer = new PerformanceObserver((list) => pauses.push(...list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  const results: Record<string, ColdPass> = {};
  let seed = 17;
  const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
  for (const kind of ['all', 'topic', 'all', 'topic'] as const) {
    const total: number[] = [];
    const window: number[] = [];
    const json: number[] = [];
    const cpu: number[] = [];
    const timed: Timed[] = [];
    pauses.length = 0;
    for (let i = 0; i < reads; i++) {
      // From TOPICS on: every topic has a message at or before the anchor.
      const anchor = TOPICS + Math.floor(random() * (last - TOPICS));
      const terms: NarrowTerm[] = kind === 'all' ? [] : [{ operator: 'channel', operand: CHANNEL, negated: false }, { operator: 'topic', operand: `topic ${anchor % TOPICS}`, negated: false }];
      const cpuBefore = process.cpuUsage();
      const start = performance.now();
      const clauses = resolveNarrow(realm, owner, terms, new Set());
      const found = fetchWindow(realm, owner, clauses, { anchor, numBefore: 50, numAfter: 0, includeAnchor: true }, Number.MAX_SAFE_INTEGER);
      const { ids } = found instanceof Promise ? await found : found;
      const windowed = performance.now();
      // As the route writes its answer: the messages' JSON, in the envelope, as bytes.
      const answer = encodedFields((out) => writeFetchedMessages(out, realm, owner, ids, options, []));
      const done = performance.now();
      const used = process.cpuUsage(cpuBefore);
      cpu.push((used.user + used.system) / 1000);
      if (ids.length === 0 || answer.write().length === 0) throw new Error(`nothing before ${anchor}`);
      total.push(done - start);
      window.push(windowed - start);
      json.push(done - windowed);
      timed.push({ start, end: done });
    }
    // The observer is told of the pauses in a later turn.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const gc = pausesWithin(timed, pauses);
    const p = (values: number[]) => `${percentile(values, 50).toFixed(2)}/${percentile(values, 99).toFixed(2)}`;
    console.log(
      `${kind}: wall p50/p99 ${p(total)} ms (window ${p(window)}, messages' JSON ${p(json)}); CPU of the process ${p(cpu)} ms; ` +
        `${gc.count} collector pauses within the reads, ${gc.ms.toFixed(1)} ms, the longest ${gc.longest.toFixed(2)} ms; ` +
        `the slowest reads' CPU ms ${slowest(timed, cpu, pauses, 4)}`,
    );
    results[kind] = {
      wallP50: percentile(total, 50), wallP99: percentile(total, 99),
      cpuP50: percentile(cpu, 50), cpuP99: percentile(cpu, 99),
      gcPauses: gc.count, gcMs: gc.ms, gcLongestMs: gc.longest, maxMs: Math.max(...total),
    };
  }
  observer.disconnect();
  console.log(`${COLD_READS_MARK}${JSON.stringify(results)}`);
  await store.close();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
