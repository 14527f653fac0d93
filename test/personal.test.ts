import { rmSync } from 'node:fs';
import t from 'tap';
import { startTestServer, tempDir, type ApiClient } from './helpers/server.ts';

type Event = Record<string, unknown> & { type: string };

const poll = async (api: ApiClient, queueId: string) =>
  ((await api.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).body.events as Event[]).map(
    ({ id: _id, ...event }) => event as Event,
  );

const TOKEN = 'c0ffee'.repeat(8);

t.test('push device tokens: register, remove, and their errors', async (t) => {
  const { api } = await startTestServer(t);
  const { queueId } = await api.register();
  const path = '/users/me/push_device_token';

  t.equal((await api.post(path, { token: TOKEN, appid: 'org.example.Chat' })).status, 200);
  t.equal((await api.post(path, { token: TOKEN, appid: 'org.example.Chat' })).status, 200, 'registering again is fine');
  t.equal((await api.post(path, { token: 'ab'.repeat(2048), appid: 'org.example.Chat' })).status, 200, '4096 characters is the limit');

  const refusals: [Record<string, string>, string, RegExp][] = [
    [{ token: '', appid: 'org.example.Chat' }, 'BAD_REQUEST', /Empty or invalid length token/],
    [{ token: 'ab'.repeat(2049), appid: 'org.example.Chat' }, 'BAD_REQUEST', /Empty or invalid length token/],
    [{ token: 'not hex!', appid: 'org.example.Chat' }, 'BAD_REQUEST', /Invalid push device token/],
    [{ token: 'abc', appid: 'org.example.Chat' }, 'BAD_REQUEST', /Invalid push device token/],
    [{ token: TOKEN, appid: 'bad app id' }, 'BAD_REQUEST', /appid/],
    [{ appid: 'org.example.Chat' }, 'REQUEST_VARIABLE_MISSING', /token/],
  ];
  for (const [params, code, message] of refusals) {
    const refused = await api.post(path, params);
    t.equal(refused.body.code, code, JSON.stringify(params).slice(0, 80));
    t.match(refused.body.msg, message);
  }

  // Without an app ID it is an FCM registration token: opaque text, not hex.
  const fcm = 'dQw4w9WgXcQ:APA91bH-x_y' + 'z'.repeat(120);
  t.same((await api.post(path, { token: fcm })).body, { result: 'success', msg: '' }, 'an FCM registration token');
  t.equal((await api.delete(path, { token: fcm })).status, 200, 'and removed again');
  t.equal((await api.delete(path, { token: fcm })).body.msg, 'Token does not exist');

  const unknown = await api.delete(path, { token: 'dead'.repeat(4) });
  t.equal(unknown.body.code, 'BAD_REQUEST');
  t.equal(unknown.body.msg, 'Token does not exist');
  t.match((await api.delete(path, { token: '' })).body.msg, /Empty or invalid length token/);
  t.equal((await api.delete(path, { token: TOKEN })).status, 200);
  t.equal((await api.delete(path, { token: TOKEN })).body.msg, 'Token does not exist', 'removed once');
  t.same(await poll(api, queueId), [], 'tokens are not announced');

  // Tokens belong to their user: another user cannot remove them.
  const other = await api.createUser('other@example.com');
  t.equal((await api.as(other).delete(path, { token: 'ab'.repeat(2048) })).body.msg, 'Token does not exist');
  t.equal((await api.delete(path, { token: 'ab'.repeat(2048) })).status, 200);
});

t.test('alert words: add without regard to case, remove, events to the owner only', async (t) => {
  const { api } = await startTestServer(t);
  const other = await api.createUser('other@example.com');
  const mine = await api.register({ event_types: ['alert_words'] });
  const theirs = await api.as(other).register({ event_types: ['alert_words'] });
  const path = '/users/me/alert_words';

  t.same((await api.get(path)).body.alert_words, []);
  const added = await api.post(path, { alert_words: ['foo', ' Bar ', '', 'FOO', 'baz'] });
  t.same(added.body.alert_words, ['FOO', 'Bar', 'baz'], 'trimmed, blanks dropped, one entry per word whatever its case');
  t.same((await api.post(path, { alert_words: ['BAR', 'qux'] })).body.alert_words, ['FOO', 'Bar', 'baz', 'qux'], 'present words ignored');
  t.same((await api.post(path, { alert_words: ['baz'] })).body.alert_words, ['FOO', 'Bar', 'baz', 'qux'], 'nothing new');

  const tooLong = await api.post(path, { alert_words: ['ok', 'x'.repeat(101)] });
  t.equal(tooLong.body.code, 'BAD_REQUEST');
  t.equal(tooLong.body.msg, 'alert_words[1] is too long (limit: 100 characters)');
  t.equal((await api.post(path, { alert_words: 'foo' })).body.code, 'BAD_REQUEST', 'not JSON');
  t.equal((await api.post(path, { alert_words: { a: 1 } })).body.code, 'BAD_REQUEST', 'not a list');
  t.equal((await api.post(path, {})).body.code, 'REQUEST_VARIABLE_MISSING');

  t.same((await api.delete(path, { alert_words: ['bar', 'QUX', 'missing'] })).body.alert_words, ['FOO', 'baz']);
  t.same((await api.get(path)).body.alert_words, ['FOO', 'baz']);
  t.same((await api.as(other).get(path)).body.alert_words, [], "another user's list is separate");

  t.same(await poll(api, mine.queueId), [
    { type: 'alert_words', alert_words: ['FOO', 'Bar', 'baz'] },
    { type: 'alert_words', alert_words: ['FOO', 'Bar', 'baz', 'qux'] },
    { type: 'alert_words', alert_words: ['FOO', 'baz'] },
  ], 'one event per actual change');
  t.same(await poll(api.as(other), theirs.queueId), []);
  t.same((await api.register({ fetch_event_types: ['alert_words'] })).body.alert_words, ['FOO', 'baz']);
});

t.test('user status: set, read by anyone, announced to the realm', async (t) => {
  const { api } = await startTestServer(t);
  const me = (await api.get('/users/me')).body.user_id as number;
  const other = await api.createUser('other@example.com');
  const gone = await api.createUser('gone@example.com');
  await api.delete(`/users/${gone.userId}`);
  const mine = await api.register({ event_types: ['user_status', 'user_settings'] });
  const theirs = await api.as(other).register({ event_types: ['user_status'] });

  t.same((await api.get(`/users/${me}/status`)).body.status, {}, 'no status yet');
  const set = await api.post('/users/me/status', { status_text: '  on vacation ', emoji_name: 'car', emoji_code: '1f697', reaction_type: 'unicode_emoji' });
  t.equal(set.status, 200);
  const expected = { status_text: 'on vacation', emoji_name: 'car', emoji_code: '1f697', reaction_type: 'unicode_emoji' };
  t.same((await api.as(other).get(`/users/${me}/status`)).body.status, expected, 'another user reads it');

  t.equal((await api.post('/users/me/status', { status_text: 'back soon' })).status, 200);
  t.same((await api.get(`/users/${me}/status`)).body.status, { ...expected, status_text: 'back soon' }, 'only what was sent changes');
  t.equal((await api.post('/users/me/status', { emoji_name: 'zulip' })).status, 200, 'a name alone resolves the extra emoji');
  t.match((await api.get(`/users/${me}/status`)).body.status, { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'svc_extra_emoji' });

  t.equal((await api.post('/users/me/status', { away: true })).status, 200);
  t.match((await api.get(`/users/${me}/status`)).body.status, { away: true });
  const settings = (await api.register({ fetch_event_types: ['user_settings'] })).body.user_settings;
  t.equal(settings.presence_enabled, false, 'away is the legacy spelling of presence_enabled');

  t.equal((await api.post('/users/me/status', { away: false, status_text: '', emoji_name: '' })).status, 200);
  t.same((await api.get(`/users/${me}/status`)).body.status, {}, 'cleared');

  const statusEvents = [
    { type: 'user_status', user_id: me, ...expected },
    { type: 'user_status', user_id: me, status_text: 'back soon' },
    { type: 'user_status', user_id: me, emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'svc_extra_emoji' },
    { type: 'user_status', user_id: me, away: true },
    { type: 'user_status', user_id: me, away: false, status_text: '', emoji_name: '', emoji_code: '', reaction_type: '' },
  ];
  t.same((await poll(api.as(other), theirs.queueId)), statusEvents, 'every user of the realm is told');
  const own = await poll(api, mine.queueId);
  t.same(own.filter((e) => e.type === 'user_status'), statusEvents);
  t.same(own.filter((e) => e.type === 'user_settings').map((e) => [e.property, e.value]), [['presence_enabled', false], ['presence_enabled', true]]);

  const refusals: [Record<string, unknown>, RegExp][] = [
    [{}, /Client did not pass any new values/],
    [{ status_text: 'x'.repeat(61) }, /status_text is too long \(limit: 60 characters\)/],
    [{ emoji_code: '1f697' }, /Client did not pass any new values/],
    [{ status_text: 'hi', reaction_type: 'unicode_emoji' }, /must pass emoji_name/],
    [{ emoji_name: 'car', emoji_code: '1f697', reaction_type: 'sticker' }, /Invalid emoji type/],
    [{ emoji_name: 'party', emoji_code: '12', reaction_type: 'realm_emoji' }, /Invalid custom emoji/],
    [{ emoji_name: 'car', emoji_code: 'xyz', reaction_type: 'unicode_emoji' }, /Invalid emoji code/],
    [{ emoji_name: 'Car Emoji', emoji_code: '1f697', reaction_type: 'unicode_emoji' }, /Invalid emoji name/],
    [{ emoji_name: 'car' }, /Emoji 'car' does not exist/],
    [{ away: 'sometimes' }, /away/],
  ];
  for (const [params, message] of refusals) {
    const refused = await api.post('/users/me/status', params);
    t.equal(refused.body.code, 'BAD_REQUEST', JSON.stringify(params).slice(0, 80));
    t.match(refused.body.msg, message);
  }
  t.same((await api.get(`/users/${me}/status`)).body.status, {}, 'refused requests change nothing');
  t.equal((await api.get('/users/999/status')).body.msg, 'No such user');
  t.equal((await api.get(`/users/${gone.userId}/status`)).body.msg, 'No such user', 'deactivated users have no readable status');
});

t.test('muted users: mute, unmute, and their errors', async (t) => {
  const { api } = await startTestServer(t);
  const me = (await api.get('/users/me')).body.user_id as number;
  const bob = await api.createUser('bob@example.com');
  const carol = await api.createUser('carol@example.com');
  const mine = await api.register({ event_types: ['muted_users'] });
  const bobs = await api.as(bob).register({ event_types: ['muted_users'] });
  const path = (id: number) => `/users/me/muted_users/${id}`;

  t.equal((await api.post(path(bob.userId))).status, 200);
  t.equal((await api.post(path(carol.userId))).status, 200);
  const muted = (await api.register({ fetch_event_types: ['muted_users'] })).body.muted_users as { id: number; timestamp: number }[];
  t.same(muted.map((m) => m.id), [bob.userId, carol.userId]);
  t.ok(muted.every((m) => Math.abs(m.timestamp - Date.now() / 1000) < 60), 'timestamps are the time of muting');

  for (const [result, message] of [
    [await api.post(path(bob.userId)), 'User already muted'],
    [await api.post(path(me)), 'Cannot mute self'],
    [await api.post(path(999)), 'No such user'],
    [await api.delete(path(999)), 'No such user'],
    [await api.delete(path(me)), 'User is not muted'],
  ] as const) {
    t.equal(result.body.code, 'BAD_REQUEST', message);
    t.equal(result.body.msg, message);
  }

  // A deactivated user can no longer be muted, but can still be unmuted.
  await api.delete(`/users/${carol.userId}`);
  t.equal((await api.delete(path(carol.userId))).status, 200);
  t.equal((await api.post(path(carol.userId))).body.msg, 'No such user');
  t.equal((await api.delete(path(carol.userId))).body.msg, 'User is not muted');

  const events = await poll(api, mine.queueId);
  t.same(events.map((e) => (e.muted_users as { id: number }[]).map((m) => m.id)), [[bob.userId], [bob.userId, carol.userId], [bob.userId]]);
  t.ok(events.every((e) => e.type === 'muted_users'));
  t.same(await poll(api.as(bob), bobs.queueId), [], 'the muted user is not told');
  t.same((await api.as(bob).register({ fetch_event_types: ['muted_users'] })).body.muted_users, []);
});

t.test('personal state survives a restart', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir });
  const bob = await first.api.createUser('bob@example.com');
  const me = (await first.api.get('/users/me')).body.user_id as number;
  await first.api.post('/users/me/push_device_token', { token: TOKEN, appid: 'org.example.Chat' });
  await first.api.post('/users/me/alert_words', { alert_words: ['deploy', 'outage'] });
  await first.api.post('/users/me/status', { status_text: 'in a meeting', emoji_name: 'zulip' });
  await first.api.post(`/users/me/muted_users/${bob.userId}`);
  await first.stop();

  const { api, stop } = await startTestServer(t, { dataDir });
  t.same((await api.get('/users/me/alert_words')).body.alert_words, ['deploy', 'outage']);
  t.match((await api.get(`/users/${me}/status`)).body.status, { status_text: 'in a meeting', emoji_name: 'zulip' });
  t.same(((await api.register({ fetch_event_types: ['muted_users'] })).body.muted_users as { id: number }[]).map((m) => m.id), [bob.userId]);
  t.equal((await api.delete('/users/me/push_device_token', { token: TOKEN })).status, 200, 'the token is still registered');
  await stop();
});
