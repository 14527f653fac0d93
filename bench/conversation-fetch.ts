/**
 * GET /messages over a user's many direct conversations, without HTTP: the server's own Store and Runtime in
 * this process (as bench/lib/organization.ts opens them). The owner sends one direct message to each of
 * `--users` accounts, then `--channel-messages` to a channel everyone is in, and a snapshot leaves most
 * conversation lists only on disk. Times, for the narrows `[]` (the owner's whole history) and `is:dm`:
 *
 * - the baseline: every conversation's id list read and walked from the anchor, as fetchWindow did before it
 *   walked conversations newest first (actors/realm/messages/query.ts);
 * - the route's way (prepareLists, then fetchWindow): its first fetch (for `[]`, which reads each
 *   conversation's newest id into the summary, newest-ids.ts, a slice a turn: the longest turn is what the
 *   event loop is held for), then the median of `--runs` fetches, one after a send to the oldest conversation, and one after a snapshot;
 * - `anchor=oldest` with 50 after, which reads every conversation either way;
 * - then, after `--spread` rounds of a message to each of 1,000 conversations (each then spans the history),
 *   50 either side of the history's middle message, against each list walked both ways for 51 of its own
 *   and every match checked again, as a walk of more than one turn did.
 *
 *   npx tsx bench/conversation-fetch.ts [--users 10000] [--channel-messages 2000] [--runs 5] [--spread 50]
 */
import { parseArgs } from 'node:util';
import { writeOrganization } from './lib/organization.ts';
import { makeTempDir, removeTempDir } from './lib/proc.ts';
import { median } from './lib/stats.ts';
import { watchTurns } from './lib/turns.ts';

const { values } = parseArgs({
  options: { users: { type: 'string', default: '10000' }, 'channel-messages': { type: 'string', default: '2000' }, runs: { type: 'string', default: '5' }, spread: { type: 'string', default: '50' } },
});
const users = Number(values.users);
const spread = Number(values.spread);
/** The conversations `--spread` gives more messages to, a round at a time across them. */
const SPREAD_CONVERSATIONS = 1000;
const channelMessages = Number(values['channel-messages']);
const runs = Number(values.runs);

const { candidateLists, fetchWindow, idsBeyond, prepareLists, resolved, LARGER_THAN_MAX_MESSAGE_ID } = await import('../actors/realm/messages/query.ts');
const { idMatcher, resolveNarrow } = await import('../actors/realm/messages/narrow.ts');
type RealmState = import('../actors/realm/state.ts').RealmState;
type Clause = import('../actors/realm/messages/narrow.ts').Clause;

/** The walk before: each candidate list read whole and walked down from the newest for `want` matches. */
function everyListWalked(state: RealmState, userId: number, clauses: readonly Clause[], want: number): number[] {
  const ok = idMatcher(state, userId, clauses);
  const found: number[] = [];
  for (const candidates of candidateLists(state, userId, clauses)) {
    const list = resolved(candidates);
    if (!Array.isArray(list) && !('idsFrom' in list)) throw new Error('an unordered candidate list');
    let taken = 0;
    for (const id of idsBeyond(list as Parameters<typeof idsBeyond>[0], LARGER_THAN_MAX_MESSAGE_ID, true)) {
      if (!ok(id)) continue;
      found.push(id);
      if (++taken >= want) break;
    }
  }
  return found.sort((a, b) => b - a).slice(0, want);
}

/**
 * The walk before, around an anchor: each list walked down and up for `want` matches of its own, then (as a
 * walk of more than one turn did) every match found checked again.
 */
function everyListAround(state: RealmState, userId: number, clauses: readonly Clause[], anchor: number, want: number): number[] {
  const ok = idMatcher(state, userId, clauses);
  const below: number[] = [];
  const above: number[] = [];
  for (const candidates of candidateLists(state, userId, clauses)) {
    const list = resolved(candidates) as Parameters<typeof idsBeyond>[0];
    for (const [down, found] of [[true, below], [false, above]] as const) {
      let taken = 0;
      for (const id of idsBeyond(list, anchor, down)) {
        if (!ok(id)) continue;
        found.push(id);
        if (++taken >= want) break;
      }
    }
  }
  const older = below.filter(ok).sort((a, b) => b - a).slice(0, want - 1).reverse();
  const newer = above.filter(ok).sort((a, b) => a - b).slice(0, want - 1);
  return [...older, ...newer];
}

const time = async <T>(run: () => T | Promise<T>): Promise<[T, number]> => {
  const start = performance.now();
  const answer = await run();
  return [answer, performance.now() - start];
};
const ms = (value: number) => `${value.toFixed(1)} ms`;

const dir = makeTempDir('conversation-fetch-');
try {
  const { runtime, store, realm, userIds, channelId } = await writeOrganization(dir, { users, name: 'conversations', channel: 'everyone' });
  const owner = userIds[0]!;
  const caller = { kind: 'user', userId: owner } as const;
  const sendDirect = (to: number) => runtime.execute(realm.realmId, { type: 'message.send', caller, kind: 'direct', to: [to], content: 'hello', client: 'bench' });
  for (let start = 1; start < userIds.length; start += 1000) await Promise.all(userIds.slice(start, start + 1000).map(sendDirect));
  for (let start = 0; start < channelMessages; start += 500) {
    await Promise.all(Array.from({ length: Math.min(500, channelMessages - start) }, (_, i) =>
      runtime.execute(realm.realmId, { type: 'message.send', caller, kind: 'channel', to: channelId, topic: `topic ${(start + i) % 50}`, content: 'news', client: 'bench' })));
  }
  await runtime.snapshot();
  console.log(`the owner in ${userIds.length - 1} direct conversations of one message, then ${channelMessages} channel messages`);
  const state = () => runtime.realmState(realm.realmId);
  const newest = { anchor: LARGER_THAN_MAX_MESSAGE_ID, numBefore: 50, numAfter: 0, includeAnchor: true };
  const narrows = { '[]': [], 'is:dm': [{ operator: 'is', operand: 'dm', negated: false }] } as const;
  for (const [label, terms] of Object.entries(narrows)) {
    const clauses = resolveNarrow(state(), owner, terms);
    const fetch = () => time(async () => {
      await prepareLists(state(), owner, clauses);
      return (await fetchWindow(state(), owner, clauses, newest)).ids;
    });
    const watch = watchTurns();
    const [ids, first] = await fetch();
    const firstTurn = watch();
    const baseline: number[] = [];
    let expected: number[] = [];
    for (let i = 0; i < runs; i++) [expected, baseline[i]] = await time(() => everyListWalked(state(), owner, clauses, 50));
    if (JSON.stringify([...ids].reverse()) !== JSON.stringify(expected)) throw new Error(`${label}: the fetch and the baseline differ`);
    const again: number[] = [];
    for (let i = 0; i < runs; i++) again[i] = (await fetch())[1];
    await sendDirect(userIds[1]!);
    const [, afterSend] = await fetch();
    await runtime.snapshot();
    const [, afterSnapshot] = await fetch();
    const watchOldest = watchTurns();
    const [, oldest] = await time(() => fetchWindow(state(), owner, clauses, { anchor: 0, numBefore: 0, numAfter: 50, includeAnchor: true }));
    const oldestTurn = watchOldest();
    console.log(`${label}: baseline, every list walked: median ${ms(median(baseline))} of ${runs}`);
    console.log(`${label}: newest 50: first ${ms(first)} (longest turn ${ms(firstTurn)}), then median ${ms(median(again))} of ${runs}; after a send ${ms(afterSend)}, after a snapshot ${ms(afterSnapshot)}; anchor oldest, 50 after: ${ms(oldest)} (longest turn ${ms(oldestTurn)})`);
  }
  if (spread > 0) {
    // Conversations across the history: a round of one message to each of the first ones, `spread` times.
    const spreadTo = userIds.slice(1, 1 + SPREAD_CONVERSATIONS);
    for (let round = 0; round < spread; round++) await Promise.all(spreadTo.map(sendDirect));
    await runtime.snapshot();
    const ids = [...state().messages.byId.keys()].sort((a, b) => a - b);
    const anchor = ids[Math.floor(ids.length / 2)]!;
    const clauses = resolveNarrow(state(), owner, []);
    const baseline: number[] = [];
    let expected: number[] = [];
    for (let i = 0; i < runs; i++) [expected, baseline[i]] = await time(() => everyListAround(state(), owner, clauses, anchor, 51));
    const around: number[] = [];
    const turns: number[] = [];
    for (let i = 0; i < runs; i++) {
      const watch = watchTurns();
      const [window, took] = await time(() => fetchWindow(state(), owner, clauses, { anchor, numBefore: 50, numAfter: 50, includeAnchor: false }, 50_000));
      turns[i] = watch();
      around[i] = took;
      if (JSON.stringify(window.ids) !== JSON.stringify(expected)) throw new Error('around the anchor: the fetch and the baseline differ');
    }
    console.log(`then ${spread} rounds to ${spreadTo.length} conversations (${ids.length} messages); \`[]\`, 50 either side of the middle:`);
    console.log(`  baseline, every list walked each way: median ${ms(median(baseline))} of ${runs}; the fetch: median ${ms(median(around))}, longest turn ${ms(Math.max(...turns))}`);
  }
  await store.close();
} finally {
  removeTempDir(dir);
}
