import t from 'tap';
import { advanceClock, drain } from './helpers/messages.ts';
import { startTestServer, type ApiClient } from './helpers/server.ts';

const DAY = 86_400;
const now = (api: { server: { runtime: { clock: { now(): number } } } }) => Math.floor(api.server.runtime.clock.now() / 1000);
const report = (api: ApiClient, status: string, extra: Record<string, unknown> = {}) => api.post('/users/me/presence', { status, ...extra });

/** Stops the server's clock on a whole second, so that timestamps compare exactly (advanceClock moves it). */
async function frozenServer(t: Parameters<typeof startTestServer>[0]) {
  const test = await startTestServer(t);
  const fixed = Math.ceil(Date.now() / 1000) * 1000;
  test.server.runtime.clock.now = () => fixed;
  return test;
}

t.test('reporting presence and reading everyone’s: legacy by email, modern by id, incremental by last_update_id', async (t) => {
  const test = await frozenServer(t);
  const { api, owner, server } = test;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const at = now(test);
  const logged = server.runtime.logPosition;

  const first = await report(api, 'active');
  t.equal(first.status, 200);
  t.same(first.body.presences, {
    [owner.email]: {
      aggregated: { client: 'website', status: 'active', timestamp: at },
      website: { client: 'website', status: 'active', timestamp: at, pushable: false },
    },
  }, 'legacy format by default: keyed by email, one client plus aggregated');
  t.type(first.body.server_timestamp, 'number');
  t.ok(Math.abs(first.body.server_timestamp - server.runtime.clock.now() / 1000) < 5);
  t.equal(first.body.presence_last_update_id, 1);
  t.equal(server.runtime.logPosition, logged, 'presence writes nothing to the log');

  const annFirst = await report(api.as(ann), 'idle', { slim_presence: true });
  t.same(annFirst.body.presences, {
    1: { active_timestamp: at, idle_timestamp: at },
    // Never active: reads as last active when the user joined.
    [ann.userId]: { active_timestamp: server.runtime.realmState(1).users.get(ann.userId)!.dateJoined, idle_timestamp: at },
  }, 'slim_presence: keyed by user id, modern timestamps');
  t.equal(annFirst.body.presence_last_update_id, 2);

  const incremental = await report(api, 'active', { last_update_id: 2 });
  t.same(incremental.body.presences, {}, 'nothing newer than what the client has (a report within a minute changes nothing)');
  t.equal(incremental.body.presence_last_update_id, 2, 'the client’s id comes back when nothing is newer');

  advanceClock(test, 60);
  await report(api.as(ann), 'active', { ping_only: true });
  const newer = await report(api, 'idle', { last_update_id: 2 });
  t.same(newer.body.presences, {
    1: { active_timestamp: at, idle_timestamp: at + 60 },
    [ann.userId]: { active_timestamp: at + 60, idle_timestamp: at + 60 },
  }, 'only what changed since (both reports came a minute later), in the modern format because last_update_id was given');
  t.equal(newer.body.presence_last_update_id, 4, 'ann’s report and the owner’s own idle report each took an id');

  const all = await report(api, 'idle', { last_update_id: -1 });
  t.same(Object.keys(all.body.presences).sort(), ['1', String(ann.userId)]);
  t.equal(all.body.presence_last_update_id, 4);

  const ping = await report(api, 'active', { ping_only: true });
  t.same(Object.keys(ping.body).sort(), ['msg', 'result'], 'ping_only answers with nothing but the envelope');
});

t.test('presence status rules: active vs idle in the legacy format, offline in the single-user view', async (t) => {
  const test = await frozenServer(t);
  const { api, owner } = test;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const start = now(test);
  await report(api, 'active');
  advanceClock(test, 100);
  // An idle report 100 s later: last connected moves on, last active stays.
  await report(api, 'idle');
  const legacy = (await api.as(ann).get('/realm/presence')).body;
  t.same(legacy.presences[owner.email].aggregated, { client: 'website', status: 'active', timestamp: start },
    'active within the last two minutes');
  t.notOk('presence_last_update_id' in legacy, 'GET /realm/presence has no update id');
  t.type(legacy.server_timestamp, 'number');

  advanceClock(test, 30);
  t.same((await api.as(ann).get('/realm/presence')).body.presences[owner.email].website,
    { client: 'website', status: 'idle', timestamp: start + 100, pushable: false }, 'idle once last activity is over two minutes old');

  t.same((await api.as(ann).get('/users/1/presence')).body.presence, {
    website: { status: 'idle', timestamp: start + 100 },
    aggregated: { status: 'idle', timestamp: start + 100 },
  });
  advanceClock(test, 200);
  t.same((await api.as(ann).get(`/users/${owner.email}/presence`)).body.presence, {
    website: { status: 'idle', timestamp: start + 100 },
    aggregated: { status: 'offline', timestamp: start + 100 },
  }, 'by email too; aggregated reads offline past the threshold');
});

t.test('presence errors', async (t) => {
  const test = await frozenServer(t);
  const { api, server } = test;
  const ann = await api.createUser('ann@example.com', 'Ann');
  t.match((await report(api, 'busy')).body, { code: 'BAD_REQUEST', msg: 'Invalid status: busy' });
  t.match((await api.post('/users/me/presence', {})).body, { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'status' argument" });
  t.match((await report(api, 'active', { last_update_id: 'x' })).body, { code: 'BAD_REQUEST', msg: 'last_update_id is not an integer' });
  t.equal((await api.get('/users/999/presence')).body.msg, 'No such user');
  t.equal((await api.get('/users/nobody@example.com/presence')).body.msg, 'No such user');
  t.equal((await api.get(`/users/${ann.userId}/presence`)).body.msg, `No presence data for ${ann.userId}`);
  t.equal((await api.get(`/users/${ann.email}/presence`)).body.msg, `No presence data for ${ann.email}`);

  // Bots cannot be created through the API yet; mark one in memory to check the rule.
  server.runtime.realmState(1).users.get(ann.userId)!.isBot = true;
  t.equal((await report(api.as(ann), 'active')).body.msg, 'This endpoint does not accept bot requests.');
  t.equal((await api.get(`/users/${ann.userId}/presence`)).body.msg, 'Presence is not supported for bot users.');
  server.runtime.realmState(1).users.get(ann.userId)!.isBot = false;

  await api.delete(`/users/${ann.userId}`);
  t.equal((await api.get(`/users/${ann.userId}/presence`)).body.msg, 'No such user', 'deactivated users have none');
});

t.test('users with presence_enabled off appear offline: not recorded, not listed, not announced', async (t) => {
  const test = await frozenServer(t);
  const { api } = test;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const queue = await api.register({ event_types: ['presence'] });
  await report(api.as(ann), 'active');
  await api.as(bob).patch('/settings', { presence_enabled: false });
  await report(api.as(bob), 'active');

  const listed = (await report(api, 'active', { slim_presence: true })).body.presences;
  t.same(Object.keys(listed).sort(), ['1', String(ann.userId)], 'bob is not there');
  t.same((await drain(api, queue.queueId)).map((event) => event.user_id), [ann.userId, 1], 'bob coming online is not announced');
  t.equal((await api.get(`/users/${bob.userId}/presence`)).body.msg, `No presence data for ${bob.userId}`);

  await api.as(ann).patch('/settings', { presence_enabled: false });
  t.same(Object.keys((await report(api, 'active', { slim_presence: true })).body.presences), ['1'], 'ann disappears once she turns it off');
  t.equal((await api.get(`/users/${ann.userId}/presence`)).body.msg, `No presence data for ${ann.userId}`);

  await api.as(bob).patch('/settings', { presence_enabled: true });
  await report(api.as(bob), 'active');
  t.ok(bob.userId in (await report(api, 'active', { slim_presence: true })).body.presences, 'and bob appears once he turns it on');
});

t.test('presence events: when a user comes online, shaped per queue', async (t) => {
  const test = await frozenServer(t);
  const { api } = test;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const legacy = await api.register({ event_types: ['presence'] });
  const slim = await api.register({ event_types: ['presence'], slim_presence: true });
  const simplified = await api.register({ event_types: ['presence'], client_capabilities: { simplified_presence_events: true } });
  const other = await api.register({ event_types: ['message'] });
  const annQueue = await api.as(ann).register({ event_types: ['presence'], slim_presence: true });
  const at = now(test);

  await report(api.as(ann), 'active');
  const [legacyEvent, ...moreLegacy] = await drain(api, legacy.queueId);
  t.same(moreLegacy, []);
  const { id: _id, server_timestamp: stamp, ...legacyRest } = legacyEvent!;
  t.same(legacyRest, {
    type: 'presence', user_id: ann.userId, email: ann.email,
    presence: { website: { client: 'website', status: 'active', timestamp: at, pushable: false } },
  }, 'legacy: with the email');
  t.type(stamp, 'number');
  const slimEvents = await drain(api, slim.queueId);
  t.same(slimEvents.map(({ id: _i, server_timestamp: _s, ...rest }) => rest), [
    { type: 'presence', user_id: ann.userId, presence: { website: { client: 'website', status: 'active', timestamp: at, pushable: false } } },
  ], 'slim_presence: without the email');
  t.same((await drain(api, simplified.queueId)).map(({ id: _i, ...rest }) => rest), [
    { type: 'presence', presences: { [ann.userId]: { active_timestamp: at, idle_timestamp: at } } },
  ], 'simplified_presence_events: the modern map only');
  t.same(await drain(api, other.queueId), [], 'only to queues that asked for presence');
  t.same((await drain(api.as(ann), annQueue.queueId)).length, 1, 'the user’s own queues get it too');

  await report(api.as(ann), 'active');
  advanceClock(test, 60);
  await report(api.as(ann), 'active');
  t.same(await drain(api, legacy.queueId), [], 'no event while the user stays online');

  advanceClock(test, 200);
  await report(api.as(ann), 'idle');
  t.same(await drain(api, legacy.queueId), [], 'nor for an idle report after being away');
  await report(api.as(ann), 'active');
  t.match(await drain(api, legacy.queueId), [{ type: 'presence', user_id: ann.userId, presence: { website: { status: 'active', timestamp: at + 260 } } }],
    'but again when they are active after being away');
});

t.test('registration: presences with slim_presence, presence_history_limit_days, server_timestamp', async (t) => {
  const test = await frozenServer(t);
  const { api, owner } = test;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const start = now(test);
  await report(api.as(ann), 'active');
  advanceClock(test, 5 * DAY);
  await report(api.as(bob), 'idle');
  advanceClock(test, 5 * DAY);
  await report(api, 'active');
  const at = start + 10 * DAY;

  const legacy = (await api.register({ fetch_event_types: ['presence'] })).body;
  t.same(Object.keys(legacy.presences).sort(), [ann.email, bob.email, owner.email].sort(), 'legacy keyed by email, 14 days by default');
  t.match(legacy.presences[owner.email], { aggregated: { status: 'active', timestamp: at } });
  t.type(legacy.server_timestamp, 'number');
  t.equal(legacy.presence_last_update_id, 3);

  const slim = (await api.register({ fetch_event_types: ['presence'], slim_presence: true, presence_history_limit_days: 7 })).body;
  t.same(slim.presences, {
    1: { active_timestamp: at, idle_timestamp: at },
    // Bob was never active: his join time.
    [bob.userId]: { active_timestamp: test.server.runtime.realmState(1).users.get(bob.userId)!.dateJoined, idle_timestamp: start + 5 * DAY },
  }, 'slim: keyed by id; 7 days leaves out ann, last seen 10 days ago');
  t.same(Object.keys((await api.register({ fetch_event_types: ['presence'], presence_history_limit_days: 1 })).body.presences), [owner.email]);
  t.same(Object.keys((await report(api, 'active', { history_limit_days: 6, slim_presence: true })).body.presences).sort(), ['1', String(bob.userId)],
    'history_limit_days on the presence endpoint too');
  t.same(Object.keys((await report(api, 'active', { history_limit_days: 1, last_update_id: 1 })).body.presences).sort(), ['1', String(bob.userId)].sort(),
    'ignored once the client has data (last_update_id > 0)');

  const other = (await api.register({ fetch_event_types: ['realm_user'] })).body;
  t.notOk('presences' in other || 'server_timestamp' in other, 'only when presence is fetched');
});

t.test('realms with more than 100 active users get no presence events', async (t) => {
  const test = await frozenServer(t);
  const { api, server } = test;
  const queue = await api.register({ event_types: ['presence'] });
  const userIds: number[] = [];
  // 99 more users make 100 with the owner; made in-process: no password hashing per user.
  for (let i = 0; i < 100; i++) {
    const [change] = await server.runtime.execute(1, { type: 'user.create', caller: { kind: 'operator' }, email: `u${i}@example.com`, fullName: `U${i}`, passwordHash: null });
    if (change?.type === 'user.created') userIds.push(change.user.userId);
  }
  const as = (userId: number) => {
    const user = server.runtime.realmState(1).users.get(userId)!;
    return api.as({ email: user.email, key: user.apiKey });
  };
  await report(as(userIds[0]!), 'active');
  t.same(await drain(api, queue.queueId), [], '101 active users: no event');
  await api.delete(`/users/${userIds[99]}`);
  await report(as(userIds[1]!), 'active');
  t.match(await drain(api, queue.queueId), [{ type: 'presence', user_id: userIds[1] }], 'at 100 the events come back');
  t.ok(userIds[0]! in (await report(api, 'active', { slim_presence: true })).body.presences, 'polling still shows everyone');
});
