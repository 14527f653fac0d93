import { rmSync } from 'node:fs';
import t from 'tap';
import { openRuntime } from './helpers/runtime.ts';
// The runtime first: realm/state.ts and groups/state.ts import each other, and the runtime loads them in the working order.
import { Role, realmFromRecord, realmToRecord, type RealmRecord } from '../actors/realm/state.ts';
import { SETTINGS } from '../actors/user/settings.ts';
import { userToRecord } from '../actors/user/state.ts';
import { startTestServer, tempDir, type ApiClient } from './helpers/server.ts';

type Event = Record<string, unknown> & { type: string };

const poll = async (api: ApiClient, queueId: string) =>
  ((await api.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).body.events as Event[]).map(
    ({ id: _id, ...event }) => event as Event,
  );

const PATH = '/realm/user_settings_defaults';
const defaults = async (api: ApiClient) => (await api.register({ fetch_event_types: ['realm_user_settings_defaults'] })).body.realm_user_settings_defaults;
const settingsOf = async (api: ApiClient) => (await api.register({ fetch_event_types: ['user_settings'] })).body.user_settings;

t.test('registration shows every default but the time zone, with the read-only choices', async (t) => {
  const { api } = await startTestServer(t);
  const shown = await defaults(api);
  for (const spec of SETTINGS.filter((spec) => spec.name !== 'timezone')) t.equal(shown[spec.name], spec.default, spec.name);
  t.notOk('timezone' in shown, 'the time zone is personal');
  t.ok(shown.available_notification_sounds.includes('zulip'));
  t.match(shown.emojiset_choices, [{ key: 'google', text: 'Google' }]);
  t.notOk('realm_user_settings_defaults' in (await api.register({ fetch_event_types: ['user_settings'] })).body, 'only when asked for');
});

t.test('administrators change the defaults; every user of the realm is told', async (t) => {
  const { api } = await startTestServer(t);
  const member = await api.createUser('member@example.com');
  const admin = await api.createUser('admin@example.com');
  t.equal((await api.patch(`/users/${admin.userId}`, { role: Role.administrator })).status, 200);
  const ownerQueue = await api.register({ event_types: ['realm_user_settings_defaults'] });
  const memberQueue = await api.as(member).register({ event_types: ['realm_user_settings_defaults'] });

  const changed = await api.as(admin).patch(PATH, { left_side_userlist: true, emojiset: 'text', web_font_size_px: 20, web_home_view: 'recent_topics', color_scheme: 1 });
  t.equal(changed.status, 200);
  t.notOk(changed.body.ignored_parameters_unsupported, 'all supported');
  const expected = [
    { type: 'realm_user_settings_defaults', op: 'update', property: 'web_font_size_px', value: 20 },
    { type: 'realm_user_settings_defaults', op: 'update', property: 'web_home_view', value: 'recent_topics' },
    { type: 'realm_user_settings_defaults', op: 'update', property: 'left_side_userlist', value: true },
    { type: 'realm_user_settings_defaults', op: 'update', property: 'emojiset', value: 'text' },
  ];
  t.same(await poll(api, ownerQueue.queueId), expected, 'one event per changed default; none for color_scheme, already 1');
  t.same(await poll(api.as(member), memberQueue.queueId), expected, 'members learn of it too');
  t.match(await defaults(api.as(member)), { left_side_userlist: true, emojiset: 'text', web_font_size_px: 20, web_home_view: 'recent_topics', color_scheme: 1 });
  t.match(await settingsOf(api.as(admin)), { left_side_userlist: false, emojiset: 'google' }, "the administrator's own settings are untouched");

  const partly = await api.patch(PATH, { enter_sends: true, timezone: 'Europe/Paris', default_language: 'de' });
  t.equal(partly.status, 200, 'the owner may too');
  t.same(partly.body.ignored_parameters_unsupported, ['timezone', 'default_language'], 'personal settings are not defaults');
  const now = await defaults(api);
  t.equal(now.enter_sends, true);
  t.equal(now.default_language, 'en');
  t.equal((await poll(api, ownerQueue.queueId)).length, 5, 'one more event, for enter_sends');

  t.equal((await api.patch(PATH, { emojiset: 'text' })).status, 200);
  t.equal((await poll(api, ownerQueue.queueId)).length, 5, 'the value it has already: no event');
});

t.test('refusals: not an administrator, or a bad value; nothing is half-applied', async (t) => {
  const { api } = await startTestServer(t);
  const member = await api.createUser('member@example.com');
  const moderator = await api.createUser('moderator@example.com');
  await api.patch(`/users/${moderator.userId}`, { role: Role.moderator });
  const { queueId } = await api.register({ event_types: ['realm_user_settings_defaults'] });

  for (const [who, client] of [['member', api.as(member)], ['moderator', api.as(moderator)]] as const) {
    const refused = await client.patch(PATH, { left_side_userlist: true });
    t.equal(refused.status, 400, who);
    t.equal(refused.body.code, 'UNAUTHORIZED_PRINCIPAL', who);
    t.equal(refused.body.msg, 'Must be an organization administrator', who);
  }
  t.equal((await api.as(member).patch(PATH, { color_scheme: 'x' })).body.code, 'UNAUTHORIZED_PRINCIPAL', 'the right is checked before the parameters');

  const bad: [Record<string, unknown>, string][] = [
    [{ color_scheme: 4 }, 'Invalid color_scheme'],
    [{ emojiset: 'apple' }, "Invalid emojiset 'apple'"],
    [{ web_font_size_px: 0 }, 'Invalid web_font_size_px: 0 is not between 1 and 32767'],
    [{ left_side_userlist: 'maybe' }, 'left_side_userlist is not a boolean'],
    [{ email_notifications_batching_period_seconds: 'soon' }, 'email_notifications_batching_period_seconds is not an integer'],
    [{ left_side_userlist: true, notification_sound: 'trumpet' }, "Invalid notification_sound 'trumpet'"],
  ];
  for (const [params, msg] of bad) {
    const refused = await api.patch(PATH, params);
    t.equal(refused.body.code, 'BAD_REQUEST', JSON.stringify(params));
    t.equal(refused.body.msg, msg, JSON.stringify(params));
  }
  t.equal((await defaults(api)).left_side_userlist, false, 'the valid value of a refused request was not applied');
  t.same(await poll(api, queueId), [], 'nothing announced');
});

t.test('new users start from the defaults of the moment they join; earlier users keep theirs', async (t) => {
  const { api } = await startTestServer(t);
  const earlier = await api.createUser('earlier@example.com');
  await api.patch(PATH, { left_side_userlist: true, emojiset: 'text', enable_drafts_synchronization: false, email_address_visibility: 2 });
  const later = await api.createUser('later@example.com');

  t.match(await settingsOf(api.as(later)), { left_side_userlist: true, emojiset: 'text', enable_drafts_synchronization: false, email_address_visibility: 2 });
  t.match(await settingsOf(api.as(earlier)), { left_side_userlist: false, emojiset: 'google', enable_drafts_synchronization: true, email_address_visibility: 1 });
  t.equal((await api.as(later).get('/drafts')).body.msg, 'User has disabled synchronizing drafts.', 'the default is the real setting');

  await api.patch(PATH, { emojiset: 'google-blob' });
  t.equal((await settingsOf(api.as(later))).emojiset, 'text', 'a later change of the defaults leaves existing users alone');
  t.equal((await api.as(later).patch('/settings', { left_side_userlist: false })).status, 200);
  t.equal((await settingsOf(api.as(later))).left_side_userlist, false, 'and users change their own as before');
  const latest = await api.createUser('latest@example.com');
  t.equal((await settingsOf(api.as(latest))).emojiset, 'google-blob');
});

t.test('defaults, and the settings they gave, survive a restart', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir });
  await first.api.patch(PATH, { left_side_userlist: true, color_scheme: 2 });
  const before = await first.api.createUser('before@example.com');
  await first.stop();

  const second = await startTestServer(t, { dataDir });
  t.match(await defaults(second.api), { left_side_userlist: true, color_scheme: 2, emojiset: 'google' });
  t.match(await settingsOf(second.api.as(before)), { left_side_userlist: true, color_scheme: 2 });
  const after = await second.api.createUser('after@example.com');
  t.match(await settingsOf(second.api.as(after)), { left_side_userlist: true, color_scheme: 2 }, 'users made after the restart too');
  await second.stop();
});

t.test('replayed from the log, a user gets the defaults of its creation, not the later ones', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const clock = { now: () => Date.UTC(2026, 0, 1) };
  const open = () => openRuntime(dir, clock);
  const operator = { kind: 'operator' } as const;
  const live = open();
  const { realmId } = await live.runtime.createRealm('', 'Test');
  await live.runtime.execute(realmId, { type: 'settings_defaults.update', caller: operator, settings: { emojiset: 'text', enter_sends: true } });
  await live.runtime.execute(realmId, { type: 'user.create', caller: operator, email: 'a@example.com', fullName: 'A', passwordHash: null });
  await live.runtime.execute(realmId, { type: 'settings_defaults.update', caller: operator, settings: { emojiset: 'google-blob' } });
  const user = userToRecord(live.runtime.userState(realmId, 1));
  t.same(user.settings, { emojiset: 'text', enter_sends: true });
  const realm = realmToRecord(live.runtime.realmState(realmId));
  t.same(realm.userSettingsDefaults, { emojiset: 'google-blob', enter_sends: true });
  await live.store.close();

  const replayed = open();
  t.same(userToRecord(replayed.runtime.userState(realmId, 1)), user, 'the same user settings');
  t.same(realmToRecord(replayed.runtime.realmState(realmId)), realm, 'the same realm defaults');
  await replayed.store.close();

  const { userSettingsDefaults: _dropped, ...older } = realm;
  t.same(realmFromRecord(older as RealmRecord).userSettingsDefaults, {}, 'a realm snapshot from before defaults loads with none');
});
