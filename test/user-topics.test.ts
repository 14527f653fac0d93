import { rmSync } from 'node:fs';
import t from 'tap';
import { openRuntime } from './helpers/runtime.ts';
import { userFromRecord, userToRecord, type UserRecord, type VisibilityPolicy } from '../actors/user/state.ts';
import { startTestServer, tempDir, type ApiClient } from './helpers/server.ts';

type Event = Record<string, unknown> & { type: string };

const poll = async (api: ApiClient, queueId: string) =>
  ((await api.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).body.events as Event[]).map(
    ({ id: _id, ...event }) => event as Event,
  );

const EMPTY_TOPIC = { empty_topic_name: true };

async function channel(api: ApiClient, name: string, extra: Record<string, unknown> = {}): Promise<number> {
  const created = await api.post('/users/me/subscriptions', { subscriptions: [{ name }], ...extra });
  if (created.status !== 200) throw new Error(JSON.stringify(created.body));
  return (await api.get('/get_stream_id', { stream: name })).body.stream_id;
}

const userTopics = async (api: ApiClient, capabilities: Record<string, boolean> = EMPTY_TOPIC) =>
  (await api.register({ fetch_event_types: ['user_topic'], client_capabilities: capabilities })).body.user_topics;

t.test('POST /user_topics: set, change and remove policies; events to the own queues only', async (t) => {
  const { api } = await startTestServer(t);
  const other = await api.createUser('other@example.com');
  const design = await channel(api, 'design');
  const mine = await api.register({ event_types: ['user_topic'], client_capabilities: EMPTY_TOPIC });
  const mineLegacy = await api.register({ event_types: ['user_topic'] });
  const theirs = await api.as(other).register({ event_types: ['user_topic'] });
  const before = Math.floor(Date.now() / 1000);

  const set = (topic: string, visibility_policy: number) => api.post('/user_topics', { stream_id: design, topic, visibility_policy });
  t.equal((await set('Lunch', 1)).status, 200, 'a topic without messages can be muted');
  t.equal((await set('LUNCH', 3)).status, 200, 'the same topic in another case is followed');
  t.equal((await set('lunch', 3)).status, 200, 'the policy it already has');
  t.equal((await set('general chat', 2)).status, 200, 'the display name of the empty topic');
  t.equal((await set('x'.repeat(60), 1)).status, 200, 'the longest topic');
  const after = Math.floor(Date.now() / 1000);

  const listed = await userTopics(api);
  t.match(listed, [
    { stream_id: design, topic_name: 'LUNCH', visibility_policy: 3, last_updated: Number },
    { stream_id: design, topic_name: '', visibility_policy: 2 },
    { stream_id: design, topic_name: 'x'.repeat(60), visibility_policy: 1 },
  ], 'one entry per topic whatever its case, the latest spelling kept; the display name is the empty topic');
  t.equal(listed.length, 3);
  t.same(Object.keys(listed[0]).sort(), ['last_updated', 'stream_id', 'topic_name', 'visibility_policy']);
  t.ok(listed[0].last_updated >= before && listed[0].last_updated <= after, 'last_updated is the time of the change, in seconds');
  t.equal((await userTopics(api, {}))[1].topic_name, 'general chat', 'without empty_topic_name the display name is shown');

  t.equal((await set('lunch', 0)).status, 200, 'policy 0 removes the entry');
  t.equal((await set('lunch', 0)).status, 200, 'removing again is no error');
  t.same((await userTopics(api)).map((topic: { topic_name: string }) => topic.topic_name), ['', 'x'.repeat(60)]);

  const expected = (emptyName: string) => [
    { type: 'user_topic', stream_id: design, topic_name: 'Lunch', visibility_policy: 1 },
    { type: 'user_topic', stream_id: design, topic_name: 'LUNCH', visibility_policy: 3 },
    { type: 'user_topic', stream_id: design, topic_name: emptyName, visibility_policy: 2 },
    { type: 'user_topic', stream_id: design, topic_name: 'x'.repeat(60), visibility_policy: 1 },
    { type: 'user_topic', stream_id: design, topic_name: 'lunch', visibility_policy: 0 },
  ];
  const seen = await poll(api, mine.queueId);
  t.match(seen, expected(''), 'one event per actual change, none for a policy the topic already had');
  t.equal(seen.length, 5);
  t.same(Object.keys(seen[0]!).sort(), ['last_updated', 'stream_id', 'topic_name', 'type', 'visibility_policy']);
  t.type(seen[0]!.last_updated, 'number');
  const legacy = await poll(api, mineLegacy.queueId);
  t.match(legacy, expected('general chat'), "the user's other queue too, with the display name for the empty topic");
  t.equal(legacy.length, 5);
  t.same(await poll(api.as(other), theirs.queueId), [], 'other users learn nothing');
  t.same(await userTopics(api.as(other)), [], "another user's policies are separate");
});

t.test('POST /user_topics: each refusal, and refusals change nothing', async (t) => {
  const { api } = await startTestServer(t);
  const member = await api.createUser('member@example.com');
  const guest = await api.createUser('guest@example.com');
  t.equal((await api.patch(`/users/${guest.userId}`, { role: 600 })).status, 200);
  const open = await channel(api, 'open');
  const secret = await channel(api, 'secret', { invite_only: true });
  const { queueId } = await api.as(member).register({ event_types: ['user_topic'] });

  const refusals: [ApiClient, Record<string, unknown>, string, string][] = [
    [api.as(member), { stream_id: open, topic: 'x'.repeat(61), visibility_policy: 1 }, 'BAD_REQUEST', 'topic is too long (limit: 60 characters)'],
    [api.as(member), { stream_id: open, topic: 'nul\0byte', visibility_policy: 1 }, 'BAD_REQUEST', 'Topic must not contain null bytes'],
    [api.as(member), { stream_id: open, topic: 'a', visibility_policy: 4 }, 'BAD_REQUEST', 'Invalid visibility_policy'],
    [api.as(member), { stream_id: open, topic: 'a', visibility_policy: -1 }, 'BAD_REQUEST', 'Invalid visibility_policy'],
    [api.as(member), { stream_id: open, topic: 'a', visibility_policy: 'muted' }, 'BAD_REQUEST', 'visibility_policy is not an integer'],
    [api.as(member), { stream_id: 999, topic: 'a', visibility_policy: 1 }, 'BAD_REQUEST', 'Invalid channel ID'],
    [api.as(member), { stream_id: 999, topic: 'a', visibility_policy: 0 }, 'BAD_REQUEST', 'Invalid channel ID'],
    [api.as(member), { stream_id: secret, topic: 'a', visibility_policy: 1 }, 'BAD_REQUEST', 'Invalid channel ID'],
    [api.as(member), { stream_id: secret, topic: 'a', visibility_policy: 0 }, 'BAD_REQUEST', 'Invalid channel ID'],
    [api.as(guest), { stream_id: open, topic: 'a', visibility_policy: 1 }, 'BAD_REQUEST', 'Invalid channel ID'],
    [api.as(member), { topic: 'a', visibility_policy: 1 }, 'REQUEST_VARIABLE_MISSING', "Missing 'stream_id' argument"],
    [api.as(member), { stream_id: open, visibility_policy: 1 }, 'REQUEST_VARIABLE_MISSING', "Missing 'topic' argument"],
    [api.as(member), { stream_id: open, topic: 'a' }, 'REQUEST_VARIABLE_MISSING', "Missing 'visibility_policy' argument"],
  ];
  for (const [client, params, code, msg] of refusals) {
    const refused = await client.post('/user_topics', params);
    t.equal(refused.status, 400, JSON.stringify(params));
    t.equal(refused.body.code, code, JSON.stringify(params));
    t.equal(refused.body.msg, msg, JSON.stringify(params));
  }
  t.same(await userTopics(api.as(member)), [], 'nothing was set');
  t.same(await poll(api.as(member), queueId), [], 'nothing was announced');

  // A subscriber of the private channel may set policies there; the owner, an administrator, sees it too.
  t.equal((await api.post('/user_topics', { stream_id: secret, topic: 'a', visibility_policy: 1 })).status, 200);
  t.equal((await api.as(guest).post('/users/me/subscriptions', { subscriptions: [{ name: 'open' }] })).body.code, 'BAD_REQUEST', 'guests cannot join');
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'open' }], principals: [guest.userId] });
  t.equal((await api.as(guest).post('/user_topics', { stream_id: open, topic: 'a', visibility_policy: 1 })).status, 200, 'a subscribed guest may');
});

t.test('a user who lost access to a channel may still remove their policies there, and only remove', async (t) => {
  const { api } = await startTestServer(t);
  const member = await api.createUser('member@example.com');
  const secret = await channel(api, 'secret', { invite_only: true, principals: [1, member.userId] });
  const client = api.as(member);
  t.equal((await client.post('/user_topics', { stream_id: secret, topic: 'plans', visibility_policy: 3 })).status, 200);
  t.equal((await api.delete('/users/me/subscriptions', { subscriptions: ['secret'], principals: [member.userId] })).status, 200);
  const { queueId } = await client.register({ event_types: ['user_topic'] });

  const follow = await client.post('/user_topics', { stream_id: secret, topic: 'other', visibility_policy: 3 });
  t.equal(follow.body.msg, 'Invalid channel ID', 'no new policy');
  const muted = await client.patch('/users/me/subscriptions/muted_topics', { stream: 'secret', topic: 'plans', op: 'add' });
  t.equal(muted.body.msg, "Invalid channel name 'secret'");
  t.equal((await client.post('/user_topics', { stream_id: secret, topic: 'PLANS', visibility_policy: 0 })).status, 200);
  t.same(await userTopics(client), []);
  t.match(await poll(client, queueId), [{ type: 'user_topic', stream_id: secret, topic_name: 'PLANS', visibility_policy: 0 }]);
  t.equal((await client.post('/user_topics', { stream_id: secret, topic: 'plans', visibility_policy: 0 })).body.msg, 'Invalid channel ID',
    'with no policy left there, the channel is as invisible as any other');
});

t.test('PATCH /users/me/subscriptions/muted_topics: by ID or name, tolerant, the same state and events', async (t) => {
  const { api } = await startTestServer(t);
  const design = await channel(api, 'Design');
  const { queueId } = await api.register({ event_types: ['user_topic'] });
  const path = '/users/me/subscriptions/muted_topics';

  t.equal((await api.patch(path, { stream_id: design, topic: 'Lunch', op: 'add' })).status, 200);
  t.equal((await api.patch(path, { stream: 'design', topic: 'lunch', op: 'add' })).status, 200, 'muting a muted topic is no error');
  t.match(await userTopics(api), [{ stream_id: design, topic_name: 'Lunch', visibility_policy: 1 }]);
  t.equal((await api.patch(path, { stream: 'DESIGN', topic: 'LUNCH', op: 'remove' })).status, 200);
  t.equal((await api.patch(path, { stream_id: design, topic: 'lunch', op: 'remove' })).status, 200, 'unmuting an unmuted topic is no error');
  t.same(await userTopics(api), []);
  await api.post('/user_topics', { stream_id: design, topic: 'Followed', visibility_policy: 3 });
  t.equal((await api.patch(path, { stream_id: design, topic: 'followed', op: 'remove' })).status, 200);
  t.same(await userTopics(api), [], 'remove clears any policy');

  t.match(await poll(api, queueId), [
    { type: 'user_topic', stream_id: design, topic_name: 'Lunch', visibility_policy: 1, last_updated: Number },
    { type: 'user_topic', stream_id: design, topic_name: 'LUNCH', visibility_policy: 0 },
    { type: 'user_topic', stream_id: design, topic_name: 'Followed', visibility_policy: 3 },
    { type: 'user_topic', stream_id: design, topic_name: 'followed', visibility_policy: 0 },
  ]);
  t.equal((await poll(api, queueId)).length, 4, 'no events for the changes that were none');

  const refusals: [Record<string, unknown>, string, string][] = [
    [{ stream_id: design, stream: 'Design', topic: 'a', op: 'add' }, 'BAD_REQUEST', 'Unsupported parameter combination: stream_id, stream'],
    [{ topic: 'a', op: 'add' }, 'BAD_REQUEST', "Missing 'stream_id' argument"],
    [{ stream_id: design, topic: 'a', op: 'toggle' }, 'BAD_REQUEST', 'Invalid op'],
    [{ stream_id: design, topic: 'a' }, 'REQUEST_VARIABLE_MISSING', "Missing 'op' argument"],
    [{ stream_id: design, op: 'add' }, 'REQUEST_VARIABLE_MISSING', "Missing 'topic' argument"],
    [{ stream_id: design, topic: 'x'.repeat(61), op: 'add' }, 'BAD_REQUEST', 'topic is too long (limit: 60 characters)'],
    [{ stream: 'nope', topic: 'a', op: 'add' }, 'BAD_REQUEST', "Invalid channel name 'nope'"],
    [{ stream_id: 999, topic: 'a', op: 'add' }, 'BAD_REQUEST', 'Invalid channel ID'],
    [{ stream: 'nope', topic: 'a', op: 'remove' }, 'BAD_REQUEST', 'Topic is not muted'],
    [{ stream_id: 999, topic: 'a', op: 'remove' }, 'BAD_REQUEST', 'Topic is not muted'],
  ];
  for (const [params, code, msg] of refusals) {
    const refused = await api.patch(path, params);
    t.equal(refused.body.code, code, JSON.stringify(params));
    t.equal(refused.body.msg, msg, JSON.stringify(params));
  }
  t.same((await api.patch(path, { stream_id: design, stream: 'Design', topic: 'a', op: 'add' })).body.parameters, 'stream_id, stream');
  t.same(await userTopics(api), [], 'refusals set nothing');
  t.same(await poll(api, queueId).then((events) => events.length), 4, 'and announce nothing');
});

t.test('policies survive a restart', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir });
  const design = await channel(first.api, 'design');
  await first.api.post('/user_topics', { stream_id: design, topic: 'Lunch', visibility_policy: 1 });
  await first.api.post('/user_topics', { stream_id: design, topic: '', visibility_policy: 3 });
  await first.api.post('/user_topics', { stream_id: design, topic: 'gone', visibility_policy: 2 });
  await first.api.post('/user_topics', { stream_id: design, topic: 'gone', visibility_policy: 0 });
  const before = await userTopics(first.api);
  t.equal(before.length, 2);
  await first.stop();

  const second = await startTestServer(t, { dataDir });
  t.same(await userTopics(second.api), before, 'the same policies, times and order');
  t.equal((await second.api.post('/user_topics', { stream_id: design, topic: 'LUNCH', visibility_policy: 0 })).status, 200);
  t.same(await userTopics(second.api), [before[1]], 'and they keep working');
  await second.stop();
});

t.test('policies rebuilt from the log alone equal the live ones; an older snapshot without them loads', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const clock = { now: () => Date.UTC(2026, 0, 1) };
  const open = () => openRuntime(dir, clock);
  const live = open();
  const { realmId } = await live.runtime.createRealm('', 'Test');
  await live.runtime.execute(realmId, { type: 'user.create', caller: { kind: 'operator' }, email: 'a@example.com', fullName: 'A', passwordHash: null });
  const options = { inviteOnly: false, isWebPublic: false, messageRetentionDays: null, isDefault: false, permissions: {} };
  await live.runtime.execute(realmId, {
    type: 'channel.subscribe', caller: { kind: 'user', userId: 1 }, channels: [{ name: 'a', description: '' }, { name: 'b', description: '' }], principals: [1], options, authorizationErrorsFatal: true,
  });
  const realm = live.runtime.realmState(realmId);
  const [a, b] = ['a', 'b'].map((name) => realm.channelIdByName.get(name)!);
  const set = (channel: number, topic: string, policy: VisibilityPolicy) => live.runtime.executeUser(realmId, 1, { type: 'user_topic.set', channel, topic, policy, error: 'Invalid channel ID', realm });
  await set(a!, 'Lunch', 1);
  await set(a!, 'LUNCH', 3);
  await set(b!, 'general chat', 2);
  const expected = userToRecord(live.runtime.userState(realmId, 1));
  t.same(expected.userTopics, [
    { streamId: a, topicName: 'LUNCH', lastUpdated: 1767225600, visibilityPolicy: 3 },
    { streamId: b, topicName: '', lastUpdated: 1767225600, visibilityPolicy: 2 },
  ]);
  await live.store.close();

  const replayed = open();
  t.same(userToRecord(replayed.runtime.userState(realmId, 1)), expected, 'replayed from the log');
  await replayed.store.close();

  const { userTopics: _dropped, ...older } = expected;
  const loaded = userFromRecord(older as UserRecord);
  t.equal(loaded.userTopics.size, 0, 'a record from before topic policies loads with none');
  t.same(userToRecord(userFromRecord(expected)), expected, 'a record round-trips');
});

t.test('is:followed narrows to the topics the user follows', async (t) => {
  const { api } = await startTestServer(t);
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'dev' }] });
  const dev = (await api.get('/get_stream_id', { stream: 'dev' })).body.stream_id;
  const send = async (topic: string) => (await api.post('/messages', { type: 'stream', to: 'dev', topic, content: 'x' })).body.id as number;
  const a = await send('Alpha');
  await send('beta');
  const a2 = await send('alpha');
  const followed = async () =>
    (await api.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'is', operand: 'followed' }] })).body.messages.map((m: { id: number }) => m.id);
  t.same(await followed(), [], 'nothing followed yet');
  await api.post('/user_topics', { stream_id: dev, topic: 'ALPHA', visibility_policy: 3 });
  t.same(await followed(), [a, a2], 'both spellings of the followed topic');
  await api.post('/user_topics', { stream_id: dev, topic: 'alpha', visibility_policy: 1 });
  t.same(await followed(), [], 'muting it stops following it');
});
