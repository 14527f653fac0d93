/**
 * The first touches of a big channel after a boot, in-process: what reading its message index costs the
 * event loop when the history is on disk (the index's key records, lazy-map.ts and id-list.ts).
 *
 *   node --import tsx bench/recovery.ts write --dir D --messages 1000000 --log-tail 0.001
 *   cp -r D D2 && node --expose-gc --import tsx bench/first-touch.ts --dir D2
 *
 * Sends a message, so run it on a copy of the directory. Opens it as a boot does (its log tail replayed, no
 * snapshot written), then times, one after the other: a cold GET /messages of the channel's 50 newest (the
 * window and its messages' JSON as the route builds them), the first send to the channel, a window of 50
 * around an anchor near the start of the history, and the next sends; each with the wall time and the
 * process's CPU time, and the heap after a collection (with --expose-gc) after the boot and at the end.
 * Then, warm, the CPU of one window of 50 newest of a topic and of the channel, the best of five rounds of
 * 20,000. For those, bundle it first as the server is (tsx's keepNames wraps every closure made):
 *
 *   npx esbuild bench/first-touch.ts --bundle --platform=node --format=esm --packages=external --outfile=/tmp/ft.mjs
 *   node --expose-gc /tmp/ft.mjs --dir D2
 */
import { parseArgs } from 'node:util';
import { resolveNarrow, type NarrowTerm } from '../actors/realm/messages/narrow.ts';
import { fetchWindow } from '../actors/realm/messages/query.ts';
import { Runtime } from '../actors/runtime.ts';
import { Store } from '../snapshots/store.ts';
import { encodedFields } from '../src/http/envelope.ts';
import { writeFetchedMessages } from '../src/routes/message-params.ts';

/** recovery.ts's writer: its channel, and the owner, one of its subscribers */
const CHANNEL = 'recovery';
const OWNER = 1;
const MB = 1024 * 1024;

const collect = globalThis.gc as (() => void) | undefined;
const heapMb = () => {
  collect?.();
  return Math.round(process.memoryUsage().heapUsed / MB);
};

async function timed<T>(what: string, run: () => T | Promise<T>): Promise<T> {
  const cpuBefore = process.cpuUsage();
  const began = performance.now();
  const result = await run();
  const ms = performance.now() - began;
  const cpu = process.cpuUsage(cpuBefore);
  console.log(`${what}: ${ms.toFixed(1)} ms (CPU ${((cpu.user + cpu.system) / 1000).toFixed(1)} ms)`);
  return result;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { dir: { type: 'string' } } });
  if (!values.dir) throw new Error('--dir is required');
  if (!collect) console.log('(no --expose-gc: the heap figures include garbage)');
  const store = new Store(values.dir, { waitForFlush: false });
  const runtime = new Runtime(store, { clock: { now: Date.now }, queues: { heartbeatMs: 50_000, idleTimeoutMs: 600_000, sweepMs: 1000 } });
  await timed('boot', () => runtime.recover());
  console.log(`heap after the boot: ${heapMb()} MB`);
  const realm = runtime.realmState(1);
  const terms: NarrowTerm[] = [{ operator: 'channel', operand: CHANNEL, negated: false }];
  const clauses = resolveNarrow(realm, OWNER, terms, new Set());
  const channelId = [...realm.channels.values()].find((channel) => channel.name === CHANNEL)!.id;
  const options = { applyMarkdown: true, clientExtavatar: true, allowEmptyTopicName: false };
  const read = async (anchor: number) => {
    const found = fetchWindow(realm, OWNER, clauses, { anchor, numBefore: 50, numAfter: 0, includeAnchor: true }, Number.MAX_SAFE_INTEGER);
    const { ids } = found instanceof Promise ? await found : found;
    if (ids.length === 0) throw new Error(`nothing before ${anchor}`);
    return encodedFields((out) => writeFetchedMessages(out, realm, OWNER, ids, options, [])).write().length;
  };
  const send = (n: number) =>
    runtime.execute(realm.realmId, { type: 'message.send', caller: { kind: 'user', userId: OWNER }, kind: 'channel', to: channelId, topic: 'topic 1', content: `after the boot ${n}`, client: 'API' });
  await timed('cold GET /messages, the channel\'s 50 newest', () => read(Number.MAX_SAFE_INTEGER));
  await timed('first send to the channel', () => send(0));
  await timed('GET /messages, 50 before an anchor near the start', () => read(5000));
  await timed('the next 10 sends', async () => {
    for (let n = 1; n <= 10; n++) await send(n);
  });
  await timed('GET /messages, the channel\'s 50 newest again', () => read(Number.MAX_SAFE_INTEGER));
  console.log(`heap at the end: ${heapMb()} MB`);
  const topic: NarrowTerm[] = [...terms, { operator: 'topic', operand: 'topic 1', negated: false }];
  for (const [what, narrow] of [['a topic', topic], ['the channel', terms]] as const) {
    const warm = resolveNarrow(realm, OWNER, narrow, new Set());
    const windows = (n: number) => {
      for (let i = 0; i < n; i++) fetchWindow(realm, OWNER, warm, { anchor: Number.MAX_SAFE_INTEGER, numBefore: 50, numAfter: 0, includeAnchor: false }, Number.MAX_SAFE_INTEGER);
    };
    windows(2000);
    const rounds: number[] = [];
    for (let round = 0; round < 5; round++) {
      const cpuBefore = process.cpuUsage();
      windows(20_000);
      const cpu = process.cpuUsage(cpuBefore);
      rounds.push((cpu.user + cpu.system) / 20_000);
    }
    console.log(`warm window of 50 newest of ${what}: ${Math.min(...rounds).toFixed(2)} us of CPU (rounds ${rounds.map((us) => us.toFixed(2)).join(', ')})`);
  }
  await store.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
