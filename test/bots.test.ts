import { rmSync } from 'node:fs';
import t from 'tap';
import { Role } from '../actors/realm/state.ts';
import { channel, drain, sendToChannel, type Event } from './helpers/messages.ts';
import { startTestServer, tempDir, type ApiClient, type Credentials } from './helpers/server.ts';

const withoutIds = (events: Event[]) => events.map(({ id: _id, ...event }) => event);

/** A server with an owner (the api), an administrator, two members and a guest. */
async function organization(t: { teardown(fn: () => unknown): void }) {
  const server = await startTestServer(t);
  const { api } = server;
  const admin = await api.createUser('admin@example.com', 'Admin');
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const gus = await api.createUser('gus@example.com', 'Gus');
  await api.patch(`/users/${admin.userId}`, { role: Role.administrator });
  await api.patch(`/users/${gus.userId}`, { role: Role.guest });
  return { server, api, admin: api.as(admin), ann: api.as(ann), bob: api.as(bob), gus: api.as(gus), ids: { admin, ann, bob, gus } };
}

async function createBot(client: ApiClient, params: Record<string, unknown>): Promise<Credentials & { userId: number }> {
  const created = await client.post('/bots', params);
  if (created.status !== 200) throw new Error(`bot creation failed: ${JSON.stringify(created.body)}`);
  const user = (await client.get(`/users/${created.body.user_id}`)).body.user;
  return { email: user.email, key: created.body.api_key, userId: created.body.user_id };
}

const realmBots = async (client: ApiClient) => (await client.register({ fetch_event_types: ['realm_bot'] })).body.realm_bots as Record<string, unknown>[];

async function groupId(api: ApiClient, name: string): Promise<number> {
  return (await api.get('/user_groups')).body.user_groups.find((group: { name: string }) => group.name === name).id;
}

t.test('a member makes a bot, which authenticates with its own key and uses the API', async (t) => {
  const { api, ann, bob, ids } = await organization(t);
  const general = await channel(api, 'general', [1, ids.ann.userId]);
  const created = await ann.post('/bots', { full_name: 'Deploy Bot', short_name: 'deploy', default_sending_stream: 'general' });
  t.equal(created.status, 200, JSON.stringify(created.body));
  t.match(created.body, { user_id: Number, api_key: /^[A-Za-z0-9]{32}$/, default_sending_stream: 'general', default_events_register_stream: null, default_all_public_streams: false });
  const botId = created.body.user_id;

  const person = (await bob.get(`/users/${botId}`)).body.user;
  t.match(person, { email: 'deploy-bot@bots.invalid', full_name: 'Deploy Bot', is_bot: true, bot_type: 1, bot_owner_id: ids.ann.userId, role: Role.member });
  t.notOk('profile_data' in person, 'bots have no profile data');

  const bot = api.as({ email: person.email, key: created.body.api_key });
  const me = await bot.get('/users/me');
  t.equal(me.status, 200);
  t.match(me.body, { user_id: botId, is_bot: true, bot_type: 1 });
  await bot.post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }] });
  const sent = await sendToChannel(bot, general, 'deploys', 'v1.2 is out');
  t.equal((await ann.get(`/messages/${sent}`)).body.message.sender_id, botId, 'the bot sends as itself');
  const { body } = await bot.register({ fetch_event_types: ['realm_user'] });
  t.equal(body.user_id, botId, 'and registers queues');
  t.equal((await api.as({ email: person.email, key: 'x'.repeat(32) }).get('/users/me')).body.code, 'UNAUTHORIZED', 'with its key only');
  t.equal((await api.as(null).post('/fetch_api_key', { username: person.email, password: 'anything at all' })).status, 401, 'bots have no password');
});

t.test('creation events: realm_user add to everyone, realm_bot add to the owner and the administrators', async (t) => {
  const { api, admin, ann, bob, ids } = await organization(t);
  const queues = await Promise.all([api, admin, ann, bob].map(async (client) => ({ client, queueId: (await client.register({ event_types: ['realm_user', 'realm_bot'] })).queueId })));
  const created = await ann.post('/bots', { full_name: 'Hook', short_name: 'hook', bot_type: 3, payload_url: '"https://hooks.example.com/in"', interface_type: 2 });
  const botId = created.body.user_id;
  const [owner, administrator, annEvents, bobEvents] = (await Promise.all(queues.map(async ({ client, queueId }) => withoutIds(await drain(client, queueId))))) as Event[][];
  t.same(bobEvents!.map((event) => [event.type, event.op]), [['realm_user', 'add']], 'another member only learns of the account');
  t.match(bobEvents![0], { person: { user_id: botId, full_name: 'Hook', is_bot: true, bot_type: 3, bot_owner_id: ids.ann.userId } });
  t.notOk('api_key' in (bobEvents![0]!.person as object), 'never the key');
  const botEvent = {
    type: 'realm_bot', op: 'add',
    bot: {
      email: 'hook-bot@bots.invalid', user_id: botId, full_name: 'Hook', bot_type: 3, is_active: true, api_key: created.body.api_key,
      default_sending_stream: null, default_events_register_stream: null, default_all_public_streams: false, owner_id: ids.ann.userId,
      services: [{ base_url: 'https://hooks.example.com/in', interface: 2, token: /^[A-Za-z0-9]{32}$/ }],
    },
  };
  for (const [who, events] of [['owner of the realm', owner!], ['administrator', administrator!], ['bot owner', annEvents!]] as const) {
    t.same(events.map((event) => [event.type, event.op]), [['realm_user', 'add'], ['realm_bot', 'add']], who);
    t.match(events[1], botEvent, who);
  }
});

t.test('who may make which bots: can_create_bots_group and can_create_write_only_bots_group', async (t) => {
  const { api, ann, gus } = await organization(t);
  const refused = await gus.post('/bots', { full_name: 'Guest Bot', short_name: 'guest' });
  t.equal(refused.body.code, 'UNAUTHORIZED_PRINCIPAL', 'guests are not members');
  const admins = await groupId(api, 'role:administrators');
  t.equal((await api.patch('/realm', { can_create_bots_group: { new: admins } })).status, 200);
  t.equal((await ann.post('/bots', { full_name: 'Generic', short_name: 'generic' })).body.code, 'UNAUTHORIZED_PRINCIPAL', 'generic bots: administrators only now');
  t.equal((await ann.post('/bots', { full_name: 'Outgoing', short_name: 'outgoing', bot_type: 3 })).body.code, 'UNAUTHORIZED_PRINCIPAL');
  t.equal((await ann.post('/bots', { full_name: 'Incoming', short_name: 'incoming', bot_type: 2 })).status, 200, 'write-only bots: still members');
  t.equal((await api.patch('/realm', { can_create_write_only_bots_group: { new: admins } })).status, 200);
  t.equal((await ann.post('/bots', { full_name: 'Incoming 2', short_name: 'incoming2', bot_type: 2 })).body.code, 'UNAUTHORIZED_PRINCIPAL');
  t.equal((await api.post('/bots', { full_name: 'Owner Bot', short_name: 'owner' })).status, 200, 'administrators are in the group');
});

t.test('bot parameters are checked', async (t) => {
  const { api, ann } = await organization(t);
  await channel(api, 'secret', [1], { invite_only: true });
  await createBot(ann, { full_name: 'Taken Bot', short_name: 'taken' });
  const bad: [Record<string, unknown>, string][] = [
    [{ full_name: 'X', short_name: 'x', bot_type: 4 }, 'Invalid bot type'],
    [{ full_name: 'X', short_name: 'x', bot_type: 9 }, 'Invalid bot type'],
    [{ full_name: 'X', short_name: 'x', bot_type: 3, interface_type: 3 }, 'Invalid interface type'],
    [{ full_name: 'X', short_name: '  ' }, 'Bad name or username'],
    [{ full_name: 'X', short_name: 'two words' }, 'Bad name or username'],
    [{ full_name: '   ', short_name: 'x' }, 'Name too short!'],
    [{ full_name: 'Other', short_name: 'taken' }, 'Username already in use'],
    [{ full_name: 'Taken Bot', short_name: 'other' }, 'Name is already in use!'],
    [{ full_name: 'Ann', short_name: 'other' }, 'Name is already in use!'],
    [{ full_name: 'X', short_name: 'x', default_sending_stream: 'nowhere' }, "Invalid channel name 'nowhere'"],
    [{ full_name: 'X', short_name: 'x', default_events_register_stream: 'secret' }, "Invalid channel name 'secret'"],
    [{ short_name: 'x' }, "Missing 'full_name' argument"],
  ];
  for (const [params, msg] of bad) {
    const refused = await ann.post('/bots', params);
    t.equal(refused.status, 400, msg);
    t.equal(refused.body.msg, msg, JSON.stringify(params));
  }
  t.equal((await ann.get('/bots')).body.bots.length, 1, 'only the first bot was made');
});

t.test('GET /bots and realm_bots: own bots for members, every bot for administrators', async (t) => {
  const { admin, ann, bob } = await organization(t);
  const annBot = await createBot(ann, { full_name: 'Ann Bot', short_name: 'annbot' });
  const old = await createBot(ann, { full_name: 'Old Bot', short_name: 'old' });
  await ann.delete(`/bots/${old.userId}`);
  const adminBot = await createBot(admin, { full_name: 'Admin Bot', short_name: 'adminbot' });

  const [entry] = (await ann.get('/bots')).body.bots;
  t.same(Object.keys(entry).sort(), ['api_key', 'avatar_url', 'default_all_public_streams', 'default_events_register_stream', 'default_sending_stream', 'full_name', 'user_id', 'username']);
  t.same((await ann.get('/bots')).body.bots.map((entry: { user_id: number }) => entry.user_id), [annBot.userId], 'active bots the member owns');
  t.match((await ann.get('/bots')).body.bots[0], { username: annBot.email, full_name: 'Ann Bot', api_key: annBot.key, default_sending_stream: null });
  t.same((await admin.get('/bots')).body.bots.map((entry: { user_id: number }) => entry.user_id), [adminBot.userId], "an administrator's own, too");
  t.same((await bob.get('/bots')).body.bots, []);

  t.same((await realmBots(ann)).map((bot) => [bot.user_id, bot.is_active]), [[annBot.userId, true], [old.userId, false]], 'realm_bots: own, deactivated included');
  t.same((await realmBots(admin)).map((bot) => bot.user_id), [annBot.userId, old.userId, adminBot.userId], 'administrators: all');
  t.same(await realmBots(bob), []);
});

t.test('PATCH /bots/{bot_id}: owner or administrator; name, owner and default channels; events', async (t) => {
  const { api, admin, ann, bob, ids } = await organization(t);
  await channel(api, 'general', [1, ids.ann.userId]);
  const bot = await createBot(ann, { full_name: 'Helper', short_name: 'helper' });
  const queues = Object.fromEntries(await Promise.all(Object.entries({ api, admin, ann, bob }).map(async ([name, client]) => [name, { client, queueId: (await client.register({ event_types: ['realm_user', 'realm_bot'] })).queueId }] as const)));
  const eventsOf = async (name: string) => withoutIds(await drain(queues[name]!.client, queues[name]!.queueId));

  t.equal((await bob.patch(`/bots/${bot.userId}`, { full_name: 'Mine' })).body.msg, 'Insufficient permission', "another member's bot");
  t.equal((await ann.patch(`/bots/${ids.bob.userId}`, { full_name: 'Bot Bob' })).body.msg, 'No such bot', 'a person is no bot');
  t.equal((await ann.patch('/bots/999', { full_name: 'X' })).body.msg, 'No such bot');

  const renamed = await ann.patch(`/bots/${bot.userId}`, { full_name: 'Helper Two', default_sending_stream: 'general', default_all_public_streams: true });
  t.match(renamed.body, { full_name: 'Helper Two', default_sending_stream: 'general', default_all_public_streams: true, bot_owner: 'ann@example.com' });
  const expectedAdmin = [
    { type: 'realm_user', op: 'update', person: { user_id: bot.userId, full_name: 'Helper Two' } },
    { type: 'realm_bot', op: 'update', bot: { user_id: bot.userId, full_name: 'Helper Two' } },
    { type: 'realm_bot', op: 'update', bot: { user_id: bot.userId, default_sending_stream: 'general' } },
    { type: 'realm_bot', op: 'update', bot: { user_id: bot.userId, default_all_public_streams: true } },
  ];
  t.same(await eventsOf('ann'), expectedAdmin, 'the owner');
  t.same(await eventsOf('admin'), expectedAdmin, 'an administrator');
  t.same(await eventsOf('bob'), expectedAdmin.slice(0, 1), 'another member: the public name only');
  await eventsOf('api');
  t.equal((await ann.patch(`/bots/${bot.userId}`, { full_name: 'Bob' })).body.msg, 'Name is already in use!');
  t.equal((await ann.patch(`/bots/${bot.userId}`, { default_sending_stream: 'nowhere' })).body.msg, "Invalid channel name 'nowhere'");
  t.equal((await admin.patch(`/bots/${bot.userId}`, { default_sending_stream: '' })).status, 200, 'an administrator may; empty clears it');
  t.equal((await realmBots(ann))[0]!.default_sending_stream, null);
  await Promise.all(['api', 'admin', 'ann', 'bob'].map(eventsOf));

  for (const [owner, msg] of [[999, 'Failed to change owner, no such user'], [bot.userId, "Failed to change owner, bots can't own other bots"]] as const) {
    t.equal((await ann.patch(`/bots/${bot.userId}`, { bot_owner_id: owner })).body.msg, msg);
  }
  t.equal((await ann.patch(`/bots/${bot.userId}`, { bot_owner_id: ids.bob.userId })).status, 200);
  t.same(await eventsOf('ann'), [
    { type: 'realm_user', op: 'update', person: { user_id: bot.userId, bot_owner_id: ids.bob.userId } },
    { type: 'realm_bot', op: 'delete', bot: { user_id: bot.userId } },
  ], 'the previous owner loses it');
  const bobEvents = await eventsOf('bob');
  t.match(bobEvents, [
    { type: 'realm_user', op: 'update', person: { user_id: bot.userId, bot_owner_id: ids.bob.userId } },
    { type: 'realm_bot', op: 'add', bot: { user_id: bot.userId, owner_id: ids.bob.userId, api_key: bot.key, full_name: 'Helper Two' } },
  ], 'the new owner gains it whole');
  t.equal(bobEvents.length, 2);
  t.same(await eventsOf('admin'), [
    { type: 'realm_user', op: 'update', person: { user_id: bot.userId, bot_owner_id: ids.bob.userId } },
    { type: 'realm_bot', op: 'update', bot: { user_id: bot.userId, owner_id: ids.bob.userId } },
  ]);
  t.equal((await ann.patch(`/bots/${bot.userId}`, { full_name: 'Back' })).body.msg, 'Insufficient permission', 'no longer hers');
  t.same((await bob.get('/bots')).body.bots.map((entry: { user_id: number }) => entry.user_id), [bot.userId]);
  await api.delete(`/users/${ids.ann.userId}`);
  t.equal((await bob.patch(`/bots/${bot.userId}`, { bot_owner_id: ids.ann.userId })).body.msg, 'Failed to change owner, user is deactivated');
});

t.test('keys: regenerating one retires the old; deactivation stops the bot', async (t) => {
  const { api, admin, ann, bob, ids } = await organization(t);
  const bot = await createBot(ann, { full_name: 'Keyed', short_name: 'keyed' });
  const { queueId } = await ann.register({ event_types: ['realm_user', 'realm_bot'] });
  const { queueId: bobQueue } = await bob.register({ event_types: ['realm_user', 'realm_bot'] });

  t.equal((await bob.post(`/bots/${bot.userId}/api_key/regenerate`)).body.msg, 'Insufficient permission');
  const regenerated = await ann.post(`/bots/${bot.userId}/api_key/regenerate`);
  const key = regenerated.body.api_key;
  t.match(key, /^[A-Za-z0-9]{32}$/);
  t.not(key, bot.key);
  t.equal((await api.as(bot).get('/users/me')).body.code, 'UNAUTHORIZED', 'the old key is retired');
  t.equal((await api.as({ email: bot.email, key }).get('/users/me')).status, 200, 'the new one works');
  t.same(withoutIds(await drain(ann, queueId)), [{ type: 'realm_bot', op: 'update', bot: { user_id: bot.userId, api_key: key } }]);

  t.equal((await bob.delete(`/bots/${bot.userId}`)).body.msg, 'Insufficient permission');
  t.equal((await ann.delete(`/users/${bot.userId}`)).body.code, 'UNAUTHORIZED_PRINCIPAL', 'not through the user endpoint');
  t.equal((await ann.delete(`/bots/${bot.userId}`)).status, 200);
  const stopped = await api.as({ email: bot.email, key }).get('/users/me');
  t.equal(stopped.status, 401);
  t.equal(stopped.body.code, 'USER_DEACTIVATED');
  t.same(withoutIds(await drain(ann, queueId)), [
    { type: 'realm_user', op: 'update', person: { user_id: bot.userId, is_active: false } },
    { type: 'realm_bot', op: 'update', bot: { user_id: bot.userId, is_active: false } },
  ]);
  t.same(withoutIds(await drain(bob, bobQueue)), [{ type: 'realm_user', op: 'update', person: { user_id: bot.userId, is_active: false } }], 'others: the account only');
  t.equal((await ann.delete(`/bots/${bot.userId}`)).body.msg, 'Bot is already deactivated');
  t.same((await ann.get('/bots')).body.bots, []);

  // A person's deactivation takes their bots with them.
  const other = await createBot(bob, { full_name: 'Bobs Bot', short_name: 'bobs' });
  await admin.delete(`/users/${ids.bob.userId}`);
  t.equal((await api.as(other).get('/users/me')).body.code, 'USER_DEACTIVATED');
  t.match((await realmBots(admin)).find((entry) => entry.user_id === other.userId), { is_active: false });
});

t.test('bots survive a restart', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir });
  const ann = await first.api.createUser('ann@example.com', 'Ann');
  await channel(first.api, 'general', [1]);
  const bot = await createBot(first.api.as(ann), { full_name: 'Durable', short_name: 'durable', bot_type: 3, payload_url: 'https://example.com/hook' });
  await first.api.as(ann).patch(`/bots/${bot.userId}`, { default_events_register_stream: 'general' });
  const before = await realmBots(first.api.as(ann));
  await first.stop();

  const second = await startTestServer(t, { dataDir });
  t.same(await realmBots(second.api.as(ann)), before, 'the same bots, configuration and keys');
  t.match((await second.api.as(bot).get('/users/me')).body, { user_id: bot.userId, is_bot: true, bot_type: 3, bot_owner_id: ann.userId });
});

t.test("a bot handed to a new owner counts toward that owner's cap, as a created one does", async (t) => {
  const { api } = await startTestServer(t, { maxBotsPerUser: 2 });
  const ann = api.as(await api.createUser('ann@example.com', 'Ann'));
  const bobIds = await api.createUser('bob@example.com', 'Bob');
  const bob = api.as(bobIds);
  const annBots = [await createBot(ann, { full_name: 'A1', short_name: 'a1' }), await createBot(ann, { full_name: 'A2', short_name: 'a2' })];
  await createBot(bob, { full_name: 'B1', short_name: 'b1' });
  t.equal((await ann.patch(`/bots/${annBots[0]!.userId}`, { bot_owner_id: bobIds.userId })).status, 200, 'Bob has room for one more');
  const refused = await ann.patch(`/bots/${annBots[1]!.userId}`, { bot_owner_id: bobIds.userId });
  t.match(refused.body, { code: 'BAD_REQUEST', msg: 'Failed to change owner, the new owner already owns 2 active bots' }, 'not for a third');
  t.same((await bob.get('/bots')).body.bots.length, 2);
  // A deactivated bot holds no queue: handing it over is no way around the cap, and is allowed.
  t.equal((await ann.delete(`/bots/${annBots[1]!.userId}`)).status, 200);
  t.equal((await api.patch(`/bots/${annBots[1]!.userId}`, { bot_owner_id: bobIds.userId })).status, 200, 'a deactivated bot changes owner');
  t.equal((await createBot(ann, { full_name: 'A3', short_name: 'a3' })).userId > 0, true, 'Ann, down to none, makes another');
});
