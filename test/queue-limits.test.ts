import { rmSync } from 'node:fs';
import t from 'tap';
import { DEFAULT_QUEUE_LIMITS, type QueueLimits } from '../actors/queue/limits.ts';
import { configFrom } from '../src/config.ts';
import { encode } from '../snapshots/codec.ts';
import { Store } from '../snapshots/store.ts';
import { childServers, killChild } from './helpers/child.ts';
import { channel, sendToChannel } from './helpers/messages.ts';
import { startTestServer, tempDir, type ApiClient, type ApiResult } from './helpers/server.ts';

/**
 * No member can take the server's memory or disk through event queues: queues per user and per organization,
 * what one queue buffers, what a registration may ask for, and how fast queues are made are all bounded
 * (actors/queue/limits.ts); a member's bots share the member's rate limit and are few.
 */

const limits = (overrides: Partial<QueueLimits>): QueueLimits => ({ ...DEFAULT_QUEUE_LIMITS, ...overrides });

/** Runs `count` requests, `width` at a time; returns their answers in order. */
async function flood(count: number, width: number, request: (i: number) => Promise<ApiResult>): Promise<ApiResult[]> {
  const results: ApiResult[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      results[i] = await request(i);
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return results;
}

const statuses = (results: ApiResult[]) => {
  const counts: Record<number, number> = {};
  for (const { status } of results) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
};

const liveQueues = async (url: string): Promise<number> => (await (await fetch(`${url}/health`)).json()).event_queues;

const pollOnce = (api: ApiClient, queueId: string, lastEventId = -1) => api.get('/events', { queue_id: queueId, last_event_id: lastEventId, dont_block: true });

/** Requests allowed by a bucket of `limit` per `windowSeconds` over `ms`, with a request of slack. */
const allowance = (limit: number, windowSeconds: number, ms: number) => limit + Math.ceil((ms / 1000) * (limit / windowSeconds)) + 1;

t.test('one member attempting 3,000 queue registrations through GET /events: rate limited, and never over the per-user limit', async (t) => {
  const { api, url } = await startTestServer(t);
  const ann = api.as(await api.createUser('ann@example.com', 'Ann'));
  const started = Date.now();
  const results = await flood(3000, 50, () => ann.get('/events', { dont_block: true, event_types: ['message'], idle_queue_timeout: 7 * 24 * 3600 }));
  const elapsed = Date.now() - started;
  const counts = statuses(results);
  t.same(Object.keys(counts).sort(), ['200', '429'], `only registrations and refusals: ${JSON.stringify(counts)}`);
  t.ok(counts[200]! <= allowance(200, 60, elapsed), `${counts[200]} registrations in ${elapsed} ms: the rate limit of POST /register`);
  const refused = results.find((result) => result.status === 429)!;
  t.match(refused.body, { result: 'error', code: 'RATE_LIMIT_HIT' });

  t.equal(await liveQueues(url), DEFAULT_QUEUE_LIMITS.perUser, 'the member holds the per-user limit of queues, no more');
  const made = results.filter((result) => result.status === 200).map((result) => result.body.queue_id as string);
  t.equal((await pollOnce(ann, made.at(-1)!)).status, 200, 'the newest queue works');
  t.match((await pollOnce(ann, made[0]!)).body, { code: 'BAD_EVENT_QUEUE_ID' }, 'the oldest was collected to make room');
});

t.test('at the per-user limit a registration collects the least recently used queue, never one a client is holding', async (t) => {
  const { api } = await startTestServer(t, { rateLimit: null });
  const general = await channel(api, 'general', [1]);
  const { queueId: held } = await api.register({ event_types: ['message'] });
  const waiting = api.get('/events', { queue_id: held, last_event_id: -1 });
  const { queueId: polled } = await api.register({ event_types: ['message'] });
  const idle: string[] = [];
  for (let i = 0; i < DEFAULT_QUEUE_LIMITS.perUser - 2; i++) idle.push((await api.register({ event_types: ['message'] })).queueId);
  // The client of `polled` is still there: it polled after the idle ones were made.
  t.equal((await pollOnce(api, polled)).status, 200);

  const extra: string[] = [];
  for (let i = 0; i < 5; i++) extra.push((await api.register({ event_types: ['message'] })).queueId);
  for (const [i, queueId] of idle.entries()) {
    const result = await pollOnce(api, queueId);
    if (i < 5) t.match(result.body, { code: 'BAD_EVENT_QUEUE_ID' }, `idle queue ${i} was collected`);
    else t.equal(result.status, 200, `idle queue ${i} lives`);
  }
  t.equal((await pollOnce(api, polled)).status, 200, 'the recently polled queue lives');
  for (const queueId of extra) t.equal((await pollOnce(api, queueId)).status, 200, 'the new queues live');
  const id = await sendToChannel(api, general, 'topic', 'still here');
  const answer = await waiting;
  t.equal(answer.status, 200);
  t.same(answer.body.events.map((event: { message: { id: number } }) => event.message.id), [id], 'the held poll gets its event');
});

t.test("at an organization's limit a registration is refused, and the queues there keep working", async (t) => {
  const { api, url } = await startTestServer(t, { rateLimit: null, queueLimits: limits({ perRealm: 30 }) });
  const ann = api.as(await api.createUser('ann@example.com', 'Ann'));
  const bob = api.as(await api.createUser('bob@example.com', 'Bob'));
  const owners: string[] = [];
  for (let i = 0; i < 20; i++) owners.push((await api.register({ event_types: ['message'] })).queueId);
  for (let i = 0; i < 10; i++) await ann.register({ event_types: ['message'] });
  const refused = await bob.post('/register', { event_types: ['message'] });
  t.equal(refused.status, 400);
  t.match(refused.body, { result: 'error', code: 'BAD_REQUEST', msg: /limit of 30 event queues/ });
  t.match((await bob.get('/events', { dont_block: true })).body, { msg: /limit of 30 event queues/ }, 'through GET /events too');
  t.equal(await liveQueues(url), 30);
  // A user at their own limit replaces their oldest queue: the organization holds no more than before.
  t.equal((await api.post('/register', { event_types: ['message'] })).status, 200, 'the owner, at the per-user limit, registers');
  t.match((await pollOnce(api, owners[0]!)).body, { code: 'BAD_EVENT_QUEUE_ID' });
  t.equal(await liveQueues(url), 30);
  t.equal((await pollOnce(api, owners[1]!)).status, 200, 'the other queues work');
});

t.test('a queue that falls too far behind is dropped, for good, and its client registers again', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const config = { dataDir, rateLimit: null, queueLimits: limits({ events: 300 }) };
  const server = await startTestServer(t, config);
  const { api } = server;
  const ann = api.as(await api.createUser('ann@example.com', 'Ann'));
  const general = await channel(api, 'general', [1, 2]);
  const { queueId: behind } = await ann.register({ event_types: ['message'] });
  const { queueId: keepingUp } = await ann.register({ event_types: ['message'] });
  const { queueId: flagsOnly } = await ann.register({ event_types: ['update_message_flags'] });
  let acknowledged = -1;
  let received = 0;
  for (let n = 1; n <= 301; n++) {
    await sendToChannel(api, general, 'traffic', `message ${n}`);
    if (n % 50 === 0 || n >= 299) {
      const polled = await pollOnce(ann, keepingUp, acknowledged);
      t.equal(polled.status, 200);
      received += polled.body.events.length;
      if (polled.body.events.length) acknowledged = polled.body.events.at(-1).id;
    }
    if (n === 300) t.equal((await pollOnce(ann, behind)).body.events?.length, 300, '300 events are held');
  }
  t.equal(received, 301, 'the queue that keeps up gets every message');
  const dropped = await pollOnce(ann, behind);
  t.equal(dropped.status, 400);
  t.match(dropped.body, { code: 'BAD_EVENT_QUEUE_ID', queue_id: behind }, 'the 301st event is one too many');
  t.equal((await pollOnce(ann, flagsOnly)).status, 200, 'a queue that took none of them lives');
  t.equal((await ann.post('/register', { event_types: ['message'] })).status, 200, 'its client registers again');

  await server.stop();
  const again = await startTestServer(t, config);
  const annAgain = again.api.as(ann.credentials);
  t.match((await pollOnce(annAgain, behind)).body, { code: 'BAD_EVENT_QUEUE_ID' }, 'still gone after a restart');
  t.equal((await pollOnce(annAgain, keepingUp, acknowledged)).status, 200, 'the others are restored');
});

t.test('a queue over its limit of bytes is dropped too', async (t) => {
  const { api } = await startTestServer(t, { rateLimit: null, queueLimits: limits({ bytes: 64 * 1024 }) });
  const general = await channel(api, 'general', [1]);
  const { queueId } = await api.register({ event_types: ['message'] });
  const big = 'x'.repeat(8000);
  for (let n = 0; n < 4; n++) await sendToChannel(api, general, 'big', `${n} ${big}`);
  t.equal((await pollOnce(api, queueId)).status, 200, '32 KB are held');
  for (let n = 4; n < 9; n++) await sendToChannel(api, general, 'big', `${n} ${big}`);
  t.match((await pollOnce(api, queueId)).body, { code: 'BAD_EVENT_QUEUE_ID' }, '72 KB are too many');
});

t.test('what a registration may ask of its queue is bounded', async (t) => {
  const { api, url } = await startTestServer(t, { rateLimit: null });
  const types = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => `t${i}`));
  const refusals: [string, Record<string, string>, RegExp][] = [
    ['500,000 event types', { event_types: types(500_000) }, /event_types.*at most 256 event types/],
    ['500,000 fetch_event_types', { fetch_event_types: types(500_000) }, /fetch_event_types.*at most 256/],
    ['an event type of 10,000 characters', { event_types: JSON.stringify(['m'.repeat(10_000)]) }, /at most 100 characters/],
    ['a narrow of 1,000 terms', { narrow: JSON.stringify(Array.from({ length: 1000 }, () => ['channel', 'general'])) }, /narrow.*at most 20 terms/],
    ['a narrow operand of 100,000 characters', { narrow: JSON.stringify([['topic', 't'.repeat(100_000)]]) }, /narrow.*at most 200 characters/],
    ['10,000 capabilities', { client_capabilities: JSON.stringify(Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`c${i}`, true]))) }, /at most 64 capabilities/],
  ];
  for (const [what, params, message] of refusals) {
    const result = await api.post('/register', params);
    t.equal(result.status, 400, what);
    t.match(result.body, { code: 'BAD_REQUEST', msg: message }, what);
  }
  const viaEvents = await api.get('/events', { dont_block: true, event_types: types(300) });
  t.match(viaEvents.body, { code: 'BAD_REQUEST', msg: /at most 256 event types/ }, 'GET /events registrations too');
  t.equal(await liveQueues(url), 0, 'no queue was made');

  // What real clients ask for is well within.
  const web = await api.post('/register', {
    event_types: types(256),
    narrow: JSON.stringify([['channel', 'general'], ['topic', 'a topic of sixty characters at most, as every topic is here']]),
    client_capabilities: JSON.stringify({ notification_settings_null: true, bulk_message_deletion: true, user_avatar_url_field_optional: true, stream_typing_notifications: true, user_settings_object: true, linkifier_url_template: true, user_list_incomplete: true, include_deactivated_groups: true, archived_channels: true, empty_topic_name: true }),
  });
  t.equal(web.status, 200, JSON.stringify(web.body).slice(0, 200));
});

t.test("a member's bots spend the member's rate limit, and a member owns a bounded number of them", async (t) => {
  // A budget that refills slowly (one request per 18 s): on a loaded machine the owner's check after the flood
  // must not find a request refilled in the meantime.
  const { api } = await startTestServer(t, { rateLimit: { limit: 200, windowSeconds: 3600 } });
  const ann = api.as(await api.createUser('ann@example.com', 'Ann'));
  const bots: ApiClient[] = [];
  const botIds: number[] = [];
  let refusal: ApiResult | null = null;
  for (let i = 0; i < 25 && !refusal; i++) {
    const created = await ann.post('/bots', { full_name: `Bot ${i}`, short_name: `bot${i}` });
    if (created.status !== 200) refusal = created;
    else {
      const email = (await ann.get(`/users/${created.body.user_id}`)).body.user.email;
      bots.push(api.as({ email, key: created.body.api_key }));
      botIds.push(created.body.user_id);
    }
  }
  t.equal(bots.length, 20, 'twenty bots are made');
  t.match(refusal?.body, { code: 'BAD_REQUEST', msg: /own 20 active bots/ }, 'the 21st is refused');
  const me = await bots[0]!.get('/users/me');
  t.equal(me.status, 200, 'a bot authenticates');
  t.equal(me.body.user_id, botIds[0]);
  // The limit counts active bots: one deactivated makes room.
  t.equal((await ann.delete(`/bots/${botIds[19]}`)).status, 200);
  const replaced = await ann.post('/bots', { full_name: 'Bot again', short_name: 'again' });
  t.equal(replaced.status, 200, 'a deactivated bot frees its place');
  bots.pop();

  const started = Date.now();
  const results = await flood(1200, 40, (i) => bots[i % bots.length]!.get('/users/me'));
  const elapsed = Date.now() - started;
  const counts = statuses(results);
  // Ann spent some of her budget on the bots, a few seconds before.
  const budget = allowance(200, 3600, elapsed + 5000);
  t.ok((counts[200] ?? 0) <= budget, `${counts[200]} of 1,200 bot requests answered in ${elapsed} ms: one member's budget (${JSON.stringify(counts)})`);
  t.equal((counts[200] ?? 0) + (counts[429] ?? 0), 1200, 'the rest refused');
  t.match((await ann.get('/users/me')).body, { code: 'RATE_LIMIT_HIT' }, 'the owner has spent it too');
  t.equal((await api.get('/users/me')).status, 200, "another member's budget is untouched");
});

t.test('limits and bounds are configured by environment', async (t) => {
  const config = configFrom({}, {
    CHAT_MAX_QUEUES_PER_USER: '5', CHAT_MAX_QUEUES_PER_REALM: '500', CHAT_QUEUE_MAX_EVENTS: '1000', CHAT_QUEUE_MAX_BYTES: '2M',
    CHAT_QUEUE_MAX_IDLE_SECONDS: '86400', CHAT_MAX_BOTS_PER_USER: '3', CHAT_MAX_LINKIFIERS_PER_REALM: '7',
  });
  t.same(config.queueLimits, { perUser: 5, perRealm: 500, events: 1000, bytes: 2 * 1024 * 1024 });
  t.equal(config.queueMaxIdleMs, 86_400_000);
  t.equal(config.maxBotsPerUser, 3);
  t.equal(config.maxLinkifiersPerRealm, 7);
  t.same(configFrom({}, {}).queueLimits, DEFAULT_QUEUE_LIMITS);
  t.throws(() => configFrom({}, { CHAT_MAX_QUEUES_PER_USER: '0' }), /at least 1/);
  t.throws(() => configFrom({}, { CHAT_QUEUE_MAX_BYTES: '0' }), /more than 0/);
});

t.test('a snapshot stores an event delivered to many queues once, and a restart shares it again', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const config = { dataDir, rateLimit: null, queueLimits: limits({ perUser: 1000 }) };
  const server = await startTestServer(t, config);
  const { api } = server;
  const general = await channel(api, 'general', [1]);
  const made = await flood(1000, 20, () => api.get('/events', { dont_block: true, event_types: ['message'] }));
  const queueIds = made.map((result) => result.body.queue_id as string);
  t.ok(queueIds.every(Boolean), '1,000 queues');
  const text = 'shared '.repeat(300);
  const ids: number[] = [];
  for (let n = 0; n < 20; n++) ids.push(await sendToChannel(api, general, 'shared', `${n} ${text}`));
  await server.stop();

  const store = new Store(dataDir, { waitForFlush: false });
  let bytes = 0;
  for (const record of store.readSnapshots()) bytes += encode(record).length;
  await store.close();
  // Each queue's own copy would be 1,000 x 20 x ~2.2 KB = 44 MB.
  t.ok(bytes < 3 * 1024 * 1024, `the snapshot is ${(bytes / 1024 / 1024).toFixed(2)} MB`);

  const again = await startTestServer(t, config);
  const registry = again.server.runtime.queues;
  t.equal(registry.size, 1000, 'every queue is restored');
  const first = registry.find(queueIds[0]!)!.buffer.events;
  const last = registry.find(queueIds[999]!)!.buffer.events;
  t.equal(first.length, 21, 'the 20 messages and the restart event');
  t.ok(first.every((event, i) => event.payload !== undefined && event.payload === last[i]!.payload), 'the queues share each event again');
  const polled = await pollOnce(again.api, queueIds[500]!);
  t.same(polled.body.events.filter((event: { type: string }) => event.type === 'message').map((event: { message: { id: number } }) => event.message.id), ids, 'with the events, in order');
});

t.test('a registration over the per-user limit logs the evictions with it in one record, and a crash replays both', async (t) => {
  const dataDir = tempDir();
  const servers = childServers(t, [dataDir]);
  const env = { CHAT_MAX_QUEUES_PER_USER: '3' };
  const server = await servers.start(dataDir, env);
  const kept: string[] = [];
  for (let i = 0; i < 3; i++) kept.push((await server.api.register({ event_types: ['message'] })).queueId);
  const evicted = kept.shift()!;
  const { queueId: added } = await server.api.register({ event_types: ['message'] });
  kept.push(added);
  await killChild(server);

  const store = new Store(dataDir, { waitForFlush: false });
  const records = [...store.readLog(0)].filter((entry) => entry.scope === 'queue');
  await store.close();
  const last = records.at(-1)!.changes as { type: string; queueId?: string; context?: { queueId: string } }[];
  t.same(
    last.map((change) => [change.type, change.queueId ?? change.context?.queueId]),
    [['queue.removed', evicted], ['queue.registered', added]],
    'one record: the least recently used queue out, the new one in',
  );

  const again = await servers.start(dataDir, env);
  t.match((await pollOnce(again.api, evicted)).body, { code: 'BAD_EVENT_QUEUE_ID' }, 'the evicted queue stays gone');
  for (const queueId of kept) t.equal((await pollOnce(again.api, queueId)).status, 200, 'a kept queue is restored');
  // The boot's snapshot covers the new queue but not the evicted one's removal, which the log still holds.
  await killChild(again);
  const third = await servers.start(dataDir, env);
  t.match((await pollOnce(third.api, evicted)).body, { code: 'BAD_EVENT_QUEUE_ID' }, 'gone after another crash');
  for (const queueId of kept) t.equal((await pollOnce(third.api, queueId)).status, 200, 'a kept queue is restored again');
  t.equal((await (await fetch(`${third.url}/health`)).json()).event_queues, 3, 'each once');
});
