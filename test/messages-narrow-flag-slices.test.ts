import t from 'tap';
import { IdSet } from '../actors/realm/messages/id-set.ts';
import { idMatcher, resolveNarrow, type NarrowTerm } from '../actors/realm/messages/narrow.ts';
import { candidateLists, resolved, type Window } from '../actors/realm/messages/query.ts';
import type { RealmState } from '../actors/realm/state.ts';
import { channel, sendToChannel } from './helpers/messages.ts';
import { startTestServer } from './helpers/server.ts';

/**
 * Messages every user below has flagged: a user with a hundred thousand unread, starred or mentioned messages,
 * whose flag set a narrow once copied and sorted in one turn of the event loop.
 */
const HISTORY = 100_000;
/** Ids per slice: small, so that a walk of a flag set takes well over a thousand turns of the event loop. */
const SLICE_IDS = 64;
/**
 * The most ids of a flag set one turn of the event loop may read: the request's own first slice and one
 * turn's (turns.ts runs one slice a turn), and a search narrow's own candidate slice beside them, with room to
 * spare. A copy of the set in one turn reads all of it.
 */
const PER_TURN = 8 * SLICE_IDS;
/** The unread messages a registration reports at most, the newest (the original's limit). */
const MAX_UNREAD_MESSAGES = 50_000;

/** The server's own flag set, counting the ids it hands out; put in the user's place before a narrow. */
class CountingIdSet extends IdSet {
  read = 0;
  override *[Symbol.iterator](): IterableIterator<number> {
    for (const id of super[Symbol.iterator]()) this.read++, yield id;
  }
  override *idsFrom(from: number, down: boolean): Generator<number, void, undefined> {
    for (const id of super.idsFrom(from, down)) this.read++, yield id;
  }
}

/** The most ids `reads` grew by in one turn of the event loop while `during` ran. */
async function mostPerTurn(reads: () => number, during: Promise<unknown>): Promise<number> {
  let most = 0;
  let last = reads();
  let done = false;
  const sample = () => {
    const now = reads();
    most = Math.max(most, now - last);
    last = now;
    if (!done) setImmediate(sample);
  };
  setImmediate(sample);
  await during.finally(() => (done = true));
  sample();
  return most;
}

/** The walk as it was, in one turn: every candidate set copied and sorted, read from the anchor. */
function referenceWindow(state: RealmState, userId: number, narrow: NarrowTerm[], window: Window) {
  const clauses = resolveNarrow(state, userId, narrow, new Set());
  const lists = candidateLists(state, userId, clauses).map(resolved).map((list) => (Array.isArray(list) ? (list as readonly number[]) : [...list].sort((a, b) => a - b)));
  const ok = idMatcher(state, userId, clauses);
  const before = new Set<number>();
  const after = new Set<number>();
  for (const list of lists) {
    for (const id of list.filter((id) => id < window.anchor).reverse().filter(ok).slice(0, window.numBefore + 1)) before.add(id);
    for (const id of list.filter((id) => id > window.anchor).filter(ok).slice(0, window.numAfter + 1)) after.add(id);
  }
  const foundAnchor = window.includeAnchor && lists.some((list) => list.includes(window.anchor)) && ok(window.anchor);
  const older = [...before].sort((a, b) => b - a);
  const newer = [...after].sort((a, b) => a - b);
  const ids = [...older.slice(0, window.numBefore).reverse(), ...(foundAnchor ? [window.anchor] : []), ...newer.slice(0, window.numAfter)];
  return { ids, found_anchor: foundAnchor, found_oldest: older.length <= window.numBefore, found_newest: newer.length <= window.numAfter };
}

t.test("narrows over a user's flag sets read them a slice per turn, with the answers of the walk in one turn", async (t) => {
  const { api, server } = await startTestServer(t, { rateLimit: null, narrowSliceIds: SLICE_IDS });
  const runtime = server.runtime;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const quiet = await api.createUser('quiet@example.com', 'Quiet');
  const general = await channel(api, 'general', [1, ann.userId, quiet.userId]);
  // Ann's few messages, before the history: each mentions Quiet, and the owner stars them.
  const hers = [
    await sendToChannel(api.as(ann), general, 'early', 'first of hers, @**Quiet**'),
    await sendToChannel(api.as(ann), general, 'early', 'second of hers, @**Quiet**'),
  ];
  const link = await sendToChannel(api, general, 'early', 'see https://example.com/plan');
  const history: number[] = [];
  for (let n = 0; n < HISTORY; n += 1000) {
    const sent = await Promise.all(Array.from({ length: 1000 }, (_, i) => runtime.execute(1, {
      type: 'message.send', caller: { kind: 'user', userId: 1 }, kind: 'channel', to: general, topic: `topic ${(n + i) % 50}`, content: `@**Quiet** filler ${n + i}`, client: 'API',
    })));
    for (const [change] of sent) if (change?.type === 'message.sent') history.push(change.message.id);
  }
  const starred = [...hers, ...history];
  for (let n = 0; n < starred.length; n += 10_000) {
    await runtime.execute(1, { type: 'message.flags', caller: { kind: 'user', userId: 1 }, messageIds: starred.slice(n, n + 10_000), op: 'add', flag: 'starred' });
  }
  const state = runtime.realmState(1);
  const { flags, mentionedOf } = state.messages;
  t.equal(history.length, HISTORY);
  t.equal(flags.starred.get(1)?.size, HISTORY + 2, "the owner's starred messages");
  t.equal(flags.unread.get(ann.userId)?.size, HISTORY + 1, "Ann's unread messages: the history and the link");
  t.equal(mentionedOf.get(quiet.userId)?.size, HISTORY + 2, 'the messages Quiet is mentioned in');

  // Each user's set, counting what is read of it.
  const counted = { starred: new CountingIdSet(flags.starred.get(1)), unread: new CountingIdSet(flags.unread.get(ann.userId)), mentioned: new CountingIdSet(mentionedOf.get(quiet.userId)) };
  flags.starred.set(1, counted.starred);
  flags.unread.set(ann.userId, counted.unread);
  mentionedOf.set(quiet.userId, counted.mentioned);
  const reads = () => counted.starred.read + counted.unread.read + counted.mentioned.read;

  const fields = (body: { messages: { id: number }[]; found_anchor: boolean; found_oldest: boolean; found_newest: boolean }) =>
    ({ ids: body.messages.map((m) => m.id), found_anchor: body.found_anchor, found_oldest: body.found_oldest, found_newest: body.found_newest });
  const middle = history[HISTORY / 2]!;
  const cases: [string, number, NarrowTerm[], Record<string, unknown>][] = [
    // Walks the whole set down to Ann's two, at its bottom.
    ['owner', 1, [{ operator: 'is', operand: 'starred' }, { operator: 'sender', operand: ann.userId }], {}],
    ['owner', 1, [{ operator: 'is', operand: 'starred' }], {}],
    ['owner', 1, [{ operator: 'is', operand: 'starred' }, { operator: 'topic', operand: 'topic 7' }], { anchor: middle, num_before: 3, num_after: 3 }],
    ['owner', 1, [{ operator: 'is', operand: 'starred' }, { operator: 'sender', operand: ann.userId }], { anchor: 'oldest', num_before: 0, num_after: 5 }],
    // Quiet sent nothing: every unread message of Ann's is read.
    ['ann', ann.userId, [{ operator: 'is', operand: 'unread' }, { operator: 'sender', operand: quiet.userId }], {}],
    ['ann', ann.userId, [{ operator: 'is', operand: 'unread' }], { anchor: middle, num_before: 5, num_after: 5 }],
    ['ann', ann.userId, [{ operator: 'is', operand: 'unread' }, { operator: 'has', operand: 'link' }], { anchor: 'newest', num_before: 10 }],
    ['quiet', quiet.userId, [{ operator: 'is', operand: 'mentioned' }, { operator: 'sender', operand: ann.userId }], {}],
    ['quiet', quiet.userId, [{ operator: 'is', operand: 'mentioned' }], { anchor: middle, num_before: 4, num_after: 4 }],
  ];
  const as = { owner: api, ann: api.as(ann), quiet: api.as(quiet) } as const;
  for (const [who, userId, narrow, params] of cases) {
    const label = `${who}: ${JSON.stringify(narrow)} ${JSON.stringify(params)}`;
    const request = as[who as keyof typeof as].get('/messages', { anchor: 'newest', num_before: 50, num_after: 0, narrow, apply_markdown: false, ...params });
    const most = await mostPerTurn(reads, request);
    const answer = await request;
    t.equal(answer.status, 200, label);
    t.ok(most <= PER_TURN, `${label}: at most ${most} ids of the set read in one turn of the event loop`);
    const window = { anchor: answer.body.anchor as number, numBefore: (params.num_before as number) ?? 50, numAfter: (params.num_after as number) ?? 0, includeAnchor: true };
    t.same(fields(answer.body), referenceWindow(state, userId, narrow, window), `${label}: the answer of the walk in one turn`);
  }
  t.same(fields((await as.owner.get('/messages', { anchor: 'newest', num_before: 50, num_after: 0, narrow: [{ operator: 'is', operand: 'starred' }, { operator: 'sender', operand: ann.userId }] })).body).ids, hers);

  t.test('first_unread reads the unread set a slice per turn too', async (t) => {
    for (const [narrow, expected] of [
      [[{ operator: 'is', operand: 'unread' }, { operator: 'has', operand: 'link' }], link],
      [[{ operator: 'is', operand: 'unread' }, { operator: 'topic', operand: 'topic 9' }], history[9]],
      [[{ operator: 'sender', operand: quiet.userId }], 10_000_000_000_000_000],
    ] as const) {
      const request = as.ann.get('/messages', { anchor: 'first_unread', num_before: 0, num_after: 0, narrow });
      const most = await mostPerTurn(reads, request);
      t.ok(most <= PER_TURN, `${JSON.stringify(narrow)}: at most ${most} ids read in one turn`);
      t.equal((await request).body.anchor, expected, `${JSON.stringify(narrow)}: the first unread match`);
    }
  });

  t.test("registration reads only the newest of a user's unread messages, the ones it reports", async (t) => {
    const before = counted.unread.read;
    const registered = await as.ann.register({ fetch_event_types: ['message', 'update_message_flags'] });
    t.type(registered.queueId, 'string');
    const read = counted.unread.read - before;
    t.ok(read <= MAX_UNREAD_MESSAGES + 1, `${read} ids of her ${HISTORY + 1} unread read, for the newest ${MAX_UNREAD_MESSAGES}`);
    const unread = registered.body.unread_msgs as { streams: { unread_message_ids: number[] }[]; old_unreads_missing: boolean };
    const reported = unread.streams.flatMap((stream) => stream.unread_message_ids).sort((a, b) => a - b);
    t.same(reported, [link, ...history].slice(-MAX_UNREAD_MESSAGES), 'the newest of them');
    t.equal(unread.old_unreads_missing, true);
  });

  t.test('with a negated search, the flag set leads in slices too', async (t) => {
    const narrow = [{ operator: 'is', operand: 'mentioned' }, { operator: 'search', operand: 'filler', negated: true }];
    const request = as.quiet.get('/messages', { anchor: 'newest', num_before: 50, num_after: 0, narrow });
    const most = await mostPerTurn(reads, request);
    t.ok(most <= PER_TURN, `at most ${most} ids read in one turn`);
    t.same(fields((await request).body).ids, hers, 'only the messages without the word');
  });
});
