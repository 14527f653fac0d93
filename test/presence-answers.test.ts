import t from 'tap';
import { advanceClock } from './helpers/messages.ts';
import { startTestServer, type ApiClient, type TestServer } from './helpers/server.ts';

/**
 * The presence answers as actors/presence keeps them: incremental fetches walk the changes since the
 * client's id, full answers are spliced from segments of 64 entries kept between changes. Each answer is
 * checked whole against a model of what was reported, in both formats, and its raw text for a user listed twice.
 */

const now = (test: TestServer) => Math.floor(test.server.runtime.clock.now() / 1000);

/** Stops the server's clock on a whole second, so that timestamps compare exactly (advanceClock moves it). */
async function frozenServer(t: Parameters<typeof startTestServer>[0]) {
  const test = await startTestServer(t);
  const fixed = Math.ceil(Date.now() / 1000) * 1000;
  test.server.runtime.clock.now = () => fixed;
  return test;
}

/** `count` more users, made in-process (no password hashing each), with a client for each. */
async function manyUsers(test: TestServer, count: number): Promise<{ userId: number; api: ApiClient; email: string }[]> {
  const { server, api } = test;
  const out = [];
  for (let i = 0; i < count; i++) {
    const [change] = await server.runtime.execute(1, { type: 'user.create', caller: { kind: 'operator' }, email: `u${i}@example.com`, fullName: `U${i}`, passwordHash: null });
    if (change?.type !== 'user.created') throw new Error('no user made');
    const { userId, email, apiKey } = change.user;
    out.push({ userId, email, api: api.as({ email, key: apiKey }) });
  }
  return out;
}

/** A deterministic shuffle (a linear congruential generator), so that a failure repeats. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = seed;
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The answer's text as sent, and how many times each key of its `presences` appears in it. */
async function rawPresences(api: ApiClient, method: 'GET' | 'POST', path: string, params: Record<string, string>) {
  const form = new URLSearchParams(params);
  const url = `${api.baseUrl}/api/v1${path}${method === 'GET' ? `?${form}` : ''}`;
  const authorization = `Basic ${Buffer.from(`${api.credentials!.email}:${api.credentials!.key}`).toString('base64')}`;
  const response = await fetch(url, {
    method, headers: { Authorization: authorization, ...(method === 'POST' ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}) },
    ...(method === 'POST' ? { body: form.toString() } : {}),
  });
  const text = await response.text();
  const body = JSON.parse(text);
  const keys = Object.keys(body.presences ?? {});
  // Each key once: a member is `"key":{`, and no value holds that.
  const repeated = keys.filter((key) => text.split(`${JSON.stringify(key)}:{`).length !== 2);
  return { body, repeated };
}

t.test('incremental polls return exactly the entries updated since, over rounds of reports in shuffled orders', async (t) => {
  const test = await frozenServer(t);
  const { api } = test;
  // The viewer shares no presence: its own polls are not recorded, so the model is the others' reports only.
  await api.patch('/settings', { presence_enabled: false });
  const users = await manyUsers(test, 30);
  let updateId = 0;
  const lastUpdate = new Map<number, { id: number; at: number }>();
  const checkpoints = [0];
  const poll = async (since: number) => {
    const { body, repeated } = await rawPresences(api, 'POST', '/users/me/presence', { status: 'active', last_update_id: String(since) });
    t.same(repeated, []);
    return body;
  };
  // 12 rounds of about 23 reports: the log outgrows twice the entries and is rewritten (store.ts) on the way.
  for (let round = 0; round < 12; round++) {
    advanceClock(test, 60);
    const reporting = shuffled(users, round + 1).filter((_, i) => (i + round) % 4 !== 0);
    for (const [i, user] of reporting.entries()) {
      t.equal((await user.api.post('/users/me/presence', { status: 'active', ping_only: true })).status, 200);
      lastUpdate.set(user.userId, { id: ++updateId, at: now(test) });
      if (i === Math.floor(reporting.length / 2)) checkpoints.push(updateId);
    }
    checkpoints.push(updateId);
    for (const since of new Set([0, 1, ...checkpoints.slice(-4), checkpoints[Math.floor(checkpoints.length / 2)]!])) {
      const expected: Record<string, unknown> = {};
      for (const [userId, { id, at }] of lastUpdate) if (id > since) expected[userId] = { active_timestamp: at, idle_timestamp: at };
      const body = await poll(since);
      if (!t.same(body.presences, expected, `round ${round}: since ${since}`)) return;
      t.equal(body.presence_last_update_id, since === 0 || Object.keys(expected).length ? updateId : since);
    }
  }
  t.same(await poll(updateId), { result: 'success', msg: '', presences: {}, server_timestamp: now(test), presence_last_update_id: updateId }, 'nothing newer');
});

t.test('full answers kept between requests follow reports, time, deactivation, address visibility and presence sharing', async (t) => {
  const test = await frozenServer(t);
  const { api, server } = test;
  // 600 users: three segments of the log.
  const users = await manyUsers(test, 600);
  const start = now(test);
  const reported = new Map<number, number>();
  for (const user of users) {
    server.runtime.recordPresence(1, user.userId, 'active', start);
    reported.set(user.userId, start);
  }
  const shown = new Set(users.map((user) => user.userId));
  const keyOf = new Map(users.map((user) => [user.userId, user.email]));

  /** Both formats (legacy from GET /realm/presence, slim from a registration: neither records the viewer) against the model. */
  const check = async (label: string, historyDays?: number) => {
    const at = now(test);
    const since = at - (historyDays ?? 14) * 86_400;
    const slim: Record<string, unknown> = {};
    const legacy: Record<string, unknown> = {};
    for (const userId of shown) {
      const active = reported.get(userId)!;
      if (active < since) continue;
      slim[userId] = { active_timestamp: active, idle_timestamp: active };
      const status = at - active > 120 ? 'idle' : 'active';
      legacy[keyOf.get(userId)!] = { aggregated: { client: 'website', status, timestamp: active }, website: { client: 'website', status, timestamp: active, pushable: false } };
    }
    const days: Record<string, string> = historyDays === undefined ? {} : { presence_history_limit_days: String(historyDays) };
    const registered = await rawPresences(api, 'POST', '/register', { fetch_event_types: '["presence"]', slim_presence: 'true', ...days });
    t.same(registered.repeated, [], `${label}: slim, each user once`);
    t.same(registered.body.presences, slim, `${label}: slim`);
    if (historyDays !== undefined) return;
    const realm = await rawPresences(api, 'GET', '/realm/presence', {});
    t.same(realm.repeated, [], `${label}: legacy, each user once`);
    t.same(realm.body.presences, legacy, `${label}: legacy`);
  };

  await check('everyone reported');
  await check('asked again');
  advanceClock(test, 60);
  for (const index of [5, 300, 590]) {
    t.equal((await users[index]!.api.post('/users/me/presence', { status: 'active', ping_only: true })).status, 200);
    reported.set(users[index]!.userId, now(test));
  }
  await check('three users in three segments reported again');
  advanceClock(test, 70);
  await check('two minutes passed: the legacy format shows the others idle');

  t.equal((await api.delete(`/users/${users[310]!.userId}`)).status, 200);
  shown.delete(users[310]!.userId);
  await check('a user deactivated');

  t.equal((await users[20]!.api.patch('/settings', { email_address_visibility: 3 })).status, 200);
  keyOf.set(users[20]!.userId, (await api.get(`/users/${users[20]!.userId}`)).body.user.email);
  t.not(keyOf.get(users[20]!.userId), users[20]!.email);
  await check('a user hid their address: the legacy format keys them by the stand-in');

  t.equal((await users[400]!.api.patch('/settings', { presence_enabled: false })).status, 200);
  shown.delete(users[400]!.userId);
  await check('a user stopped sharing presence');
  t.equal((await users[400]!.api.patch('/settings', { presence_enabled: true })).status, 200);
  shown.add(users[400]!.userId);
  await check('and shares it again');
  // More personal changes than the registry names the users of (registry.ts personalChangesSince): every user is checked again.
  t.equal((await users[401]!.api.patch('/settings', { presence_enabled: false })).status, 200);
  shown.delete(users[401]!.userId);
  for (let batch = 0; batch < 22; batch++) {
    await Promise.all(users.slice(0, 100).map((user, i) =>
      server.runtime.executeUser(1, user.userId, { type: 'settings.update', settings: { enter_sends: (batch + i) % 2 === 0 } })));
  }
  await check('a user stopped sharing presence among 2,200 other personal changes');

  await check('a day of history', 1);
  // Past a day since the first reports, not since the three later ones.
  advanceClock(test, 86_400 - 130 + 30);
  await check('a day of history, a day later', 1);
  await check('two weeks of history, a day later');

  // Three rounds of everyone reporting again, in-process: the log outgrows twice the entries and is rewritten.
  for (let round = 0; round < 3; round++) {
    advanceClock(test, 60);
    for (const user of shuffled(users, round + 1)) {
      server.runtime.recordPresence(1, user.userId, 'active', now(test));
      reported.set(user.userId, now(test));
    }
    await check(`everyone reported again (round ${round + 1})`);
  }
});
