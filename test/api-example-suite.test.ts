import t from 'tap';
import { startTestServer } from './helpers/server.ts';

// Regressions found by Zulip's own API example suite, whose answers are validated against the OpenAPI document.

const BOT_ONLY = ['bot_type', 'bot_owner_id'];

t.test('a person has no bot fields in any user object; a bot has both', async (t) => {
  const { api } = await startTestServer(t);
  const { queueId } = await api.register({ event_types: ['realm_user'] });
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bot = (await api.post('/bots', { full_name: 'Helper', short_name: 'helper' })).body;
  t.equal(typeof bot.user_id, 'number', 'the bot was created');

  const me = await api.as(ann).get('/users/me');
  t.equal(me.status, 200);
  for (const key of BOT_ONLY) t.notOk(key in me.body, `GET /users/me leaves out ${key} (its schema allows neither)`);
  const one = (await api.get(`/users/${ann.userId}`)).body.user;
  for (const key of BOT_ONLY) t.notOk(key in one, `GET /users/{id} leaves out ${key} for a person`);
  const members = (await api.get('/users')).body.members as Record<string, unknown>[];
  const byId = new Map(members.map((member) => [member.user_id, member]));
  for (const key of BOT_ONLY) t.notOk(key in byId.get(ann.userId)!, `GET /users leaves out ${key} for a person`);
  t.match(byId.get(bot.user_id), { is_bot: true, bot_type: 1, bot_owner_id: 1 }, 'a bot keeps both');

  const registered = (await api.register({ fetch_event_types: ['realm_user'] })).body;
  const person = registered.realm_users.find((user: { user_id: number }) => user.user_id === ann.userId);
  for (const key of BOT_ONLY) t.notOk(key in person, `register realm_users leaves out ${key} for a person`);
  t.match(registered.realm_users.find((user: { user_id: number }) => user.user_id === bot.user_id), { bot_type: 1, bot_owner_id: 1 });

  const events = (await api.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).body.events;
  const added = events.filter((event: { op: string }) => event.op === 'add');
  t.equal(added.length, 2, 'one realm_user add for the person, one for the bot');
  for (const key of BOT_ONLY) t.notOk(key in added[0].person, `the person's realm_user add event leaves out ${key}`);
  t.match(added[1].person, { user_id: bot.user_id, bot_type: 1, bot_owner_id: 1 });
});

t.test('every channel object carries folder_id, null outside a folder', async (t) => {
  const { api } = await startTestServer(t);
  const { queueId } = await api.register({ event_types: ['stream', 'subscription'] });
  t.equal((await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'ops' }] })).status, 200);
  const id = (await api.get('/get_stream_id', { stream: 'ops' })).body.stream_id;

  const check = (where: string, channel: Record<string, unknown> | undefined) => {
    t.ok(channel, `${where} has the channel`);
    t.ok(channel && 'folder_id' in channel && channel.folder_id === null, `${where}: folder_id is null`);
  };
  const named = (list: { name: string }[]) => list.find((channel) => channel.name === 'ops') as Record<string, unknown> | undefined;
  check('GET /streams', named((await api.get('/streams')).body.streams));
  check('GET /streams/{id}', (await api.get(`/streams/${id}`)).body.stream);
  check('GET /users/me/subscriptions', named((await api.get('/users/me/subscriptions')).body.subscriptions));
  const registered = (await api.register({ fetch_event_types: ['subscription', 'stream'] })).body;
  check('register subscriptions', named(registered.subscriptions));
  check('register streams', named(registered.streams));
  const events = (await api.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).body.events;
  check('the stream create event', named(events.find((event: { type: string; op: string }) => event.type === 'stream' && event.op === 'create').streams));
  check('the subscription add event', named(events.find((event: { type: string; op: string }) => event.type === 'subscription' && event.op === 'add').subscriptions));
});

t.test('PATCH /user_groups/{id} refuses only a request that names nothing', async (t) => {
  const { api } = await startTestServer(t);
  const created = await api.post('/user_groups/create', { name: 'marketing', description: 'The marketing team', members: [1] });
  const id = created.body.group_id;
  const { queueId } = await api.register({ event_types: ['user_group'] });

  const same = await api.patch(`/user_groups/${id}`, { name: 'marketing', description: 'The marketing team' });
  t.same(same.body, { result: 'success', msg: '' }, 'resending the current name and description succeeds');
  const renamed = await api.patch(`/user_groups/${id}`, { name: 'marketing', description: 'Brand and outreach' });
  t.equal(renamed.status, 200, 'the current name beside a new description');
  const empty = await api.patch(`/user_groups/${id}`);
  t.same([empty.status, empty.body], [400, { result: 'error', msg: 'No new data supplied', code: 'BAD_REQUEST' }]);

  const events = (await api.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).body.events;
  t.match(events, [{ type: 'user_group', op: 'update', group_id: id, data: { description: 'Brand and outreach' } }], 'one event, for the real change');
  t.equal(events.length, 1);
  t.notOk('name' in events[0].data, 'the unchanged name is not announced');
});

t.test('a wrong API key is 401 UNAUTHORIZED, as the example suite asserts', async (t) => {
  const { api, owner } = await startTestServer(t);
  const wrong = await api.as({ email: owner.email, key: 'x'.repeat(32) }).get('/users/me');
  t.same([wrong.status, wrong.body], [401, { result: 'error', msg: 'Invalid API key', code: 'UNAUTHORIZED' }]);
  const malformed = await api.as({ email: owner.email, key: 'short' }).get('/users/me');
  t.same([malformed.status, malformed.body], [401, { result: 'error', msg: 'Malformed API key', code: 'UNAUTHORIZED' }]);
});
