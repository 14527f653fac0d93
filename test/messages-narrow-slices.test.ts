import t from 'tap';
import { idMatcher, resolveNarrow, type Clause, type NarrowTerm } from '../actors/realm/messages/narrow.ts';
import { candidateLists, resolved, type Window } from '../actors/realm/messages/query.ts';
import { lowerBound } from '../actors/realm/messages/state.ts';
import type { RealmState } from '../actors/realm/state.ts';
import { channel, sendToChannel } from './helpers/messages.ts';
import { startTestServer } from './helpers/server.ts';

/** Filler messages: a long history in which Ann's few messages and the one link are sparse. */
const HISTORY = 100_000;
/** Ids per slice: small, so that a walk of the history takes well over a thousand turns of the event loop. */
const SLICE_IDS = 64;

/** The walk as it was, in one turn: the reference the sliced walk must agree with. */
function referenceWindow(state: RealmState, userId: number, clauses: readonly Clause[], window: Window) {
  // In one turn: each candidate set copied and sorted, as the walk once did.
  const lists = candidateLists(state, userId, clauses).map(resolved).map((list) => (Array.isArray(list) ? (list as readonly number[]) : [...list].sort((a, b) => a - b)));
  const ok = idMatcher(state, userId, clauses);
  const before = new Set<number>();
  const after = new Set<number>();
  let foundAnchor = false;
  for (const list of lists) {
    const start = lowerBound(list, window.anchor);
    let taken = 0;
    for (let i = start - 1; i >= 0 && taken <= window.numBefore; i--) if (ok(list[i]!)) before.add(list[i]!), taken++;
    const atAnchor = list[start] === window.anchor;
    if (atAnchor && window.includeAnchor && ok(window.anchor)) foundAnchor = true;
    taken = 0;
    for (let i = atAnchor ? start + 1 : start; i < list.length && taken <= window.numAfter; i++) if (ok(list[i]!)) after.add(list[i]!), taken++;
  }
  const older = [...before].sort((a, b) => b - a);
  const newer = [...after].sort((a, b) => a - b);
  const ids = [...older.slice(0, window.numBefore).reverse(), ...(foundAnchor ? [window.anchor] : []), ...newer.slice(0, window.numAfter)];
  return { ids, found_anchor: foundAnchor, found_oldest: older.length <= window.numBefore, found_newest: newer.length <= window.numAfter };
}

t.test('a sparse narrow over a long history is walked in slices, other requests served between them', async (t) => {
  const { api, server } = await startTestServer(t, { rateLimit: null, narrowSliceIds: SLICE_IDS });
  const runtime = server.runtime;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const quiet = await api.createUser('quiet@example.com', 'Quiet');
  const general = await channel(api, 'general', [1, ann.userId, quiet.userId]);
  const hers = [
    await sendToChannel(api.as(ann), general, 'early', 'first of hers'),
    await sendToChannel(api.as(ann), general, 'early', 'second of hers'),
    await sendToChannel(api.as(ann), general, 'early', 'third of hers'),
  ];
  const link = await sendToChannel(api, general, 'early', 'see https://example.com/plan');
  for (let n = 0; n < HISTORY; n += 1000) {
    await Promise.all(Array.from({ length: 1000 }, (_, i) => runtime.execute(1, {
      type: 'message.send', caller: { kind: 'user', userId: 1 }, kind: 'channel', to: general, topic: `topic ${(n + i) % 50}`, content: `filler ${n + i}`, client: 'API',
    })));
  }
  const state = runtime.realmState(1);
  t.ok(state.messages.byId.size > HISTORY, `${state.messages.byId.size} messages`);

  const get = (narrow: NarrowTerm[], params: Record<string, unknown> = {}, as = api) =>
    as.get('/messages', { anchor: 'newest', num_before: 50, num_after: 0, narrow, apply_markdown: false, ...params });
  const fields = (body: { messages: { id: number }[]; found_anchor: boolean; found_oldest: boolean; found_newest: boolean }) =>
    ({ ids: body.messages.map((m) => m.id), found_anchor: body.found_anchor, found_oldest: body.found_oldest, found_newest: body.found_newest });

  t.test('GET /users/me is answered while the walk runs', async (t) => {
    let walking = true;
    const narrowed = get([{ operator: 'sender', operand: quiet.userId }]).finally(() => (walking = false));
    let answered = 0;
    while (walking) {
      t.equal((await api.get('/users/me')).status, 200);
      if (walking) answered++;
    }
    t.same(fields((await narrowed).body).ids, []);
    t.ok(answered >= 1, `GET /users/me answered ${answered} times while the narrow walked ${HISTORY} messages`);
  });

  t.test('the same answers as the walk in one turn', async (t) => {
    const middle = [...state.messages.byChannel.get(general)!][HISTORY / 2]!;
    const cases: [NarrowTerm[], Record<string, unknown>][] = [
      [[{ operator: 'sender', operand: ann.userId }], {}],
      [[{ operator: 'sender', operand: quiet.userId }], {}],
      [[{ operator: 'has', operand: 'link' }], {}],
      [[{ operator: 'has', operand: 'link' }], { anchor: 'oldest', num_before: 0, num_after: 10 }],
      [[{ operator: 'sender', operand: ann.userId }], { anchor: middle, num_before: 2, num_after: 2 }],
      [[{ operator: 'sender', operand: 1 }], { anchor: middle, num_before: 3, num_after: 3, include_anchor: true }],
      [[{ operator: 'channel', operand: 'general' }, { operator: 'topic', operand: 'early' }], {}],
      [[], { anchor: middle, num_before: 5, num_after: 5 }],
    ];
    for (const [narrow, params] of cases) {
      const answer = await get(narrow, params);
      t.equal(answer.status, 200);
      const anchor = answer.body.anchor as number;
      const window = { anchor, numBefore: (params.num_before as number) ?? 50, numAfter: (params.num_after as number) ?? 0, includeAnchor: (params.include_anchor as boolean) ?? true };
      const expected = referenceWindow(state, 1, resolveNarrow(state, 1, narrow, new Set()), window);
      t.same(fields(answer.body), expected, `${JSON.stringify(narrow)} ${JSON.stringify(params)}`);
    }
    t.same(fields((await get([{ operator: 'sender', operand: ann.userId }])).body).ids, hers);
    t.same(fields((await get([{ operator: 'has', operand: 'link' }])).body).ids, [link]);
  });

  t.test('first_unread walks in slices too', async (t) => {
    // Every filler is unread for Ann and none of her own is: the walk reads all her unread messages.
    const answer = await get([{ operator: 'sender', operand: ann.userId }], { anchor: 'first_unread', num_before: 50, num_after: 50 }, api.as(ann));
    t.equal(answer.status, 200);
    t.equal(answer.body.anchor, 10_000_000_000_000_000, 'no unread message of hers: the newest');
    t.same(fields(answer.body).ids, hers);
    // Her first unread, of every message and of those with a link: the owner's link, sent before the fillers.
    for (const narrow of [[], [{ operator: 'has', operand: 'link' }]]) {
      const first = await get(narrow, { anchor: 'first_unread', num_before: 0, num_after: 0 }, api.as(ann));
      t.same([first.body.anchor, fields(first.body).ids], [link, [link]], `first unread of ${JSON.stringify(narrow)}`);
    }
    // The owner's first unread is Ann's first message.
    const owners = await get([], { anchor: 'first_unread', num_before: 0, num_after: 0 });
    t.same([owners.body.anchor, fields(owners.body).ids], [hers[0], [hers[0]]]);
  });

  t.test('a narrow with only negated searches walks its candidate lists in slices too', async (t) => {
    let walking = true;
    const narrow = [{ operator: 'sender', operand: quiet.userId }, { operator: 'search', operand: 'filler', negated: true }];
    const narrowed = get(narrow).finally(() => (walking = false));
    let answered = 0;
    while (walking) {
      t.equal((await api.get('/users/me')).status, 200);
      if (walking) answered++;
    }
    t.same(fields((await narrowed).body).ids, []);
    t.ok(answered >= 1, `GET /users/me answered ${answered} times while the narrow walked ${HISTORY} messages`);
    const hersWithout = await get([{ operator: 'sender', operand: ann.userId }, { operator: 'search', operand: 'second', negated: true }]);
    t.same(fields(hersWithout.body).ids, [hers[0], hers[2]]);
  });

  t.test("a user's slow narrows run one after another, taking turns with other users'", async (t) => {
    const quietNarrow = [{ operator: 'sender', operand: quiet.userId }];
    const finished: string[] = [];
    const run = (label: string, as = api) => get(quietNarrow, {}, as).then((answer) => {
      t.equal(answer.status, 200);
      finished.push(label);
    });
    const owners = [run('owner 1'), run('owner 2'), run('owner 3')];
    await Promise.all([...owners, run('ann', api.as(ann))]);
    // Each walk takes the same number of slices: Ann's, sent last, ends before the owner's third.
    t.ok(finished.indexOf('ann') < finished.indexOf('owner 3'), `finished in the order ${finished.join(', ')}`);
  });

  t.test('messages deleted and sent between slices', async (t) => {
    let deletedFirst = false;
    let answered = false;
    const narrowed = get([{ operator: 'sender', operand: ann.userId }]).finally(() => (answered = true));
    const deleted = api.request('DELETE', `/messages/${hers[1]}`).then((result) => {
      t.equal(result.status, 200);
      deletedFirst = !answered;
    });
    const later = sendToChannel(api.as(ann), general, 'late', 'sent while the walk ran');
    const [answer, , sent] = await Promise.all([narrowed, deleted, later]);
    const ids = fields(answer.body).ids;
    t.same(ids, [...ids].sort((a, b) => a - b), 'in order');
    t.ok(ids.includes(hers[0]!) && ids.includes(hers[2]!), 'the messages kept are found');
    t.ok(ids.every((id) => [...hers, sent].includes(id)), 'nothing else');
    if (deletedFirst) t.notOk(ids.includes(hers[1]!), 'deleted before the answer: left out');
    t.same(fields((await get([{ operator: 'sender', operand: ann.userId }])).body).ids, [hers[0], hers[2], sent], 'the next walk sees both changes');
  });

  t.test('a match deleted after a walk found it: the walk is made again, rather than say there is nothing older', async (t) => {
    // Ann's newest two are found in the walk's first slice, the third after the long history: the newest is
    // deleted meanwhile (the walk takes well over a thousand turns).
    const newest = await sendToChannel(api.as(ann), general, 'late', 'the newest of hers');
    const own = fields((await get([{ operator: 'sender', operand: ann.userId }])).body).ids;
    t.equal(own.length, 4);
    let deletedFirst = false;
    let answered = false;
    const narrowed = get([{ operator: 'sender', operand: ann.userId }], { num_before: 2 }).finally(() => (answered = true));
    const deleted = api.request('DELETE', `/messages/${newest}`).then((result) => {
      t.equal(result.status, 200);
      deletedFirst = !answered;
    });
    const [answer] = await Promise.all([narrowed, deleted]);
    const got = fields(answer.body);
    t.same(got.ids, deletedFirst ? own.slice(1, 3) : own.slice(2), `the newest two of hers${deletedFirst ? ' left' : ''}`);
    t.equal(got.found_oldest, false, 'older ones are there');
    t.ok(deletedFirst, 'deleted while the walk ran');
  });
});
