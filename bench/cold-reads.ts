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
 * narrowed to the anchor's topic, twice each; the first pass of each kind reads the indexes it needs. The
 * process's CPU time per read (every thread: the collector's included) says more than wall time on a
 * loaded machine, where a read may wait for a core.
 */
import { parseArgs } from 'node:util';
import { resolveNarrow, type NarrowTerm } from '../actors/realm/messages/narrow.ts';
import { fetchWindow } from '../actors/realm/messages/query.ts';
import { Runtime } from '../actors/runtime.ts';
import { Store } from '../snapshots/store.ts';
import { fetchedMessageJson } from '../src/routes/message-params.ts';
import { percentile } from './lib/stats.ts';

/** recovery.ts's writer: its channel's topics, which its messages cycle through */
const TOPICS = 100;
const CHANNEL = 'recovery';

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
  let seed = 17;
  const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
  for (const kind of ['all', 'topic', 'all', 'topic'] as const) {
    const total: number[] = [];
    const window: number[] = [];
    const json: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < reads; i++) {
      const anchor = 1 + Math.floor(random() * last);
      const terms: NarrowTerm[] = kind === 'all' ? [] : [{ operator: 'channel', operand: CHANNEL, negated: false }, { operator: 'topic', operand: `topic ${anchor % TOPICS}`, negated: false }];
      const cpuBefore = process.cpuUsage();
      const start = performance.now();
      const clauses = resolveNarrow(realm, owner, terms, new Set());
      const found = fetchWindow(realm, owner, clauses, { anchor, numBefore: 50, numAfter: 0, includeAnchor: true }, Number.MAX_SAFE_INTEGER);
      const { ids } = found instanceof Promise ? await found : found;
      const windowed = performance.now();
      const texts = ids.map((id) => fetchedMessageJson(realm, owner, realm.messages.byId.get(id)!, options, []));
      const done = performance.now();
      const used = process.cpuUsage(cpuBefore);
      cpu.push((used.user + used.system) / 1000);
      if (texts.length === 0) throw new Error(`nothing before ${anchor}`);
      total.push(done - start);
      window.push(windowed - start);
      json.push(done - windowed);
    }
    const p = (values: number[]) => `${percentile(values, 50).toFixed(2)}/${percentile(values, 99).toFixed(2)}`;
    console.log(`${kind}: total p50/p99 ${p(total)} ms (window ${p(window)}, messages' JSON ${p(json)}); CPU of the process ${p(cpu)} ms`);
  }
  await store.close();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
