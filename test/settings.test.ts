import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { SETTINGS, type SettingSpec, type SettingValue } from '../actors/user/settings.ts';
import { OWNER_PASSWORD, startTestServer, tempDir, type ApiClient } from './helpers/server.ts';

type Event = { type: string; op?: string; property?: string; value?: unknown; language_name?: string; person?: Record<string, unknown> };

const poll = async (api: ApiClient, queueId: string) =>
  (await api.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).body.events as Event[];

/** A value the setting accepts that differs from its default. */
function changedValue(spec: SettingSpec): SettingValue {
  if (spec.kind === 'bool') return !spec.default;
  if (spec.values) return spec.values.find((value) => value !== spec.default)!;
  if (spec.max !== undefined) return spec.default === spec.max ? spec.min! : (spec.default as number) + 1;
  return 'Asia/Kolkata';
}

/** Values of the right wire form that the setting refuses, and one of the wrong form. */
function refusedValues(spec: SettingSpec): unknown[] {
  if (spec.kind === 'bool') return ['maybe', 2];
  if (spec.kind === 'int' && spec.values) return [Math.max(...(spec.values as number[])) + 1, Math.min(...(spec.values as number[])) - 1, 'two'];
  if (spec.kind === 'int') return [spec.min! - 1, spec.max! + 1, 1.5];
  if (spec.values) return ['no-such-value', ''];
  return ['Mars/Olympus_Mons', '+05:30'];
}

t.test('the settings table matches the original server where its defaults are known', async (t) => {
  const byName = new Map<string, SettingValue>(SETTINGS.map((spec) => [spec.name, spec.default]));
  t.equal(SETTINGS.length, byName.size, 'no setting is listed twice');
  for (const [name, value] of Object.entries({
    web_home_view: 'inbox', user_list_style: 3, notification_sound: 'zulip', email_notifications_batching_period_seconds: 120,
    enable_drafts_synchronization: true, web_font_size_px: 16, web_line_height_percent: 140, emojiset: 'google',
    automatically_follow_topics_policy: 3, automatically_unmute_topics_in_muted_streams_policy: 2, timezone: '',
    web_stream_unreads_count_display_policy: 2, default_language: 'en', enter_sends: false, presence_enabled: true,
  })) {
    t.equal(byName.get(name), value, name);
  }
});

t.test('every setting: registration default, accepted change with its event, refused values', async (t) => {
  const { api } = await startTestServer(t, { rateLimit: null });
  const other = await api.createUser('other@example.com', 'Other');
  const mine = await api.register({ event_types: ['user_settings'] });
  const theirs = await api.as(other).register({ event_types: ['user_settings'] });

  const initial = (await api.register({ fetch_event_types: ['user_settings'] })).body.user_settings as Record<string, unknown>;
  for (const spec of SETTINGS) t.equal(initial[spec.name], spec.default, `default of ${spec.name}`);
  t.ok((initial.available_notification_sounds as string[]).includes('zulip'), 'available_notification_sounds lists the default sound');
  t.same((initial.emojiset_choices as { key: string }[]).map((set) => set.key).sort(), ['google', 'google-blob', 'text', 'twitter']);

  for (const spec of SETTINGS) {
    for (const value of refusedValues(spec)) {
      const refused = await api.patch('/settings', { [spec.name]: value });
      t.equal(refused.body.code, 'BAD_REQUEST', `${spec.name}=${JSON.stringify(value)} refused`);
      t.match(refused.body.msg, spec.name, `the error names ${spec.name}`);
    }
    const value = changedValue(spec);
    const accepted = await api.patch('/settings', { [spec.name]: value });
    t.equal(accepted.status, 200, `${spec.name}=${JSON.stringify(value)} accepted`);
    t.notOk(accepted.body.ignored_parameters_unsupported, `${spec.name} is a supported parameter`);
  }

  const after = (await api.register({ fetch_event_types: ['user_settings'] })).body.user_settings as Record<string, unknown>;
  for (const spec of SETTINGS) t.equal(after[spec.name], changedValue(spec), `${spec.name} holds its new value`);

  const events = await poll(api, mine.queueId);
  t.same(events.map((e) => [e.property, e.value]), SETTINGS.map((spec) => [spec.name, changedValue(spec)]),
    'one update event per accepted change, none for refused ones, on the other queue of the same user');
  t.ok(events.every((e) => e.type === 'user_settings' && e.op === 'update'));
  t.same(await poll(api.as(other), theirs.queueId), [], "another user's queue gets none");
  const untouched = (await api.as(other).register({ fetch_event_types: ['user_settings'] })).body.user_settings;
  t.equal(untouched.color_scheme, 1, "another user's settings are untouched");
});

t.test('several settings at once: only changed ones announced; one bad value refuses all', async (t) => {
  const { api } = await startTestServer(t);
  const { queueId } = await api.register({ event_types: ['user_settings'] });

  const refused = await api.patch('/settings', { color_scheme: 2, enter_sends: true, web_home_view: 'nowhere' });
  t.equal(refused.body.code, 'BAD_REQUEST');
  t.match(refused.body.msg, /web_home_view/);
  const ok = await api.patch('/settings', { color_scheme: 2, enter_sends: false, default_language: 'de', no_such_setting: 'x' });
  t.equal(ok.status, 200);
  t.same(ok.body.ignored_parameters_unsupported, ['no_such_setting'], 'unknown parameters are reported');
  const events = await poll(api, queueId);
  t.same(events.map((e) => e.property), ['color_scheme', 'default_language'], 'enter_sends kept its value: no event');
  t.equal(events[1]!.language_name, 'German', 'a language change carries the language name');

  for (const alias of ['/settings/display', '/settings/notifications']) {
    t.equal((await api.patch(alias, { color_scheme: alias.endsWith('display') ? 3 : 1 })).status, 200, alias);
  }
  t.same((await poll(api, queueId)).slice(2).map((e) => [e.property, e.value]), [['color_scheme', 3], ['color_scheme', 1]],
    'the deprecated aliases change settings too');
});

t.test('full name: a member renames themself; bad names are refused', async (t) => {
  const { api } = await startTestServer(t);
  const member = await api.createUser('member@example.com', 'Member');
  const { queueId } = await api.register({ event_types: ['realm_user'] });

  t.equal((await api.as(member).patch('/settings', { full_name: '  Member Renamed ' })).status, 200);
  t.equal((await api.as(member).get('/users/me')).body.full_name, 'Member Renamed', 'trimmed and stored');
  t.match(await poll(api, queueId), [{ type: 'realm_user', op: 'update', person: { user_id: member.userId, full_name: 'Member Renamed' } }],
    'everyone in the realm learns the new name');
  for (const [name, message] of [['   ', /too short/], ['x'.repeat(101), /too long/], ['a\u0007b', /Invalid characters/]] as const) {
    const refused = await api.as(member).patch('/settings', { full_name: name });
    t.equal(refused.body.code, 'BAD_REQUEST');
    t.match(refused.body.msg, message);
  }
  t.equal((await api.as(member).get('/users/me')).body.full_name, 'Member Renamed');
  const role = await api.as(member).patch(`/users/${member.userId}`, { role: 200 });
  t.equal(role.body.code, 'UNAUTHORIZED_PRINCIPAL', 'the own-name rule does not extend to the role');
});

t.test('password change needs the right old password and a strong new one', async (t) => {
  const { api, owner } = await startTestServer(t);
  const login = (password: string) => api.as(null).post('/fetch_api_key', { username: owner.email, password });
  const strong = 'a-New-passw0rd-that-is-long';

  const missing = await api.patch('/settings', { new_password: strong });
  t.equal(missing.body.code, 'REQUEST_VARIABLE_MISSING');
  t.equal(missing.body.var_name, 'old_password');
  const wrong = await api.patch('/settings', { old_password: 'not-it', new_password: strong });
  t.equal(wrong.body.code, 'BAD_REQUEST');
  t.equal(wrong.body.msg, 'Wrong password!');
  const weak = await api.patch('/settings', { old_password: OWNER_PASSWORD, new_password: 'abc' });
  t.equal(weak.body.code, 'BAD_REQUEST');
  t.match(weak.body.msg, /too short|too weak/);
  const mixed = await api.patch('/settings', { old_password: OWNER_PASSWORD, new_password: strong, color_scheme: 9 });
  t.equal(mixed.body.code, 'BAD_REQUEST', 'a bad setting in the same request refuses the password change too');
  t.equal((await login(OWNER_PASSWORD)).status, 200, 'the old password still works after the refusals');

  t.equal((await api.patch('/settings', { old_password: OWNER_PASSWORD, new_password: strong })).status, 200);
  t.equal((await login(strong)).status, 200, 'the new password logs in');
  t.equal((await login(OWNER_PASSWORD)).body.code, 'AUTHENTICATION_FAILED', 'the old one no longer does');
  t.equal((await api.get('/users/me')).status, 200, 'the API key is unchanged');
});

t.test('email change: a confirmation link is mailed to the new address; the address stays until confirmed', async (t) => {
  const { api, owner, dataDir } = await startTestServer(t);
  await api.createUser('taken@example.com', 'Taken');
  const outbox = join(dataDir, 'outbox');
  const mails = () => {
    try {
      return readdirSync(outbox).map((file) => readFileSync(join(outbox, file), 'utf8'));
    } catch {
      return [];
    }
  };

  for (const [email, message] of [['taken@example.com', /already in use/], ['TAKEN@example.com', /already in use/], ['not-an-address', /email/i]] as const) {
    const refused = await api.patch('/settings', { email });
    t.equal(refused.body.code, 'BAD_REQUEST', email);
    t.match(refused.body.msg, message);
  }
  t.equal((await api.patch('/settings', { email: owner.email })).status, 200, 'the current address is no change');
  t.same(mails(), [], 'no mail for refused or unchanged addresses');

  t.equal((await api.patch('/settings', { email: 'new-owner@example.com' })).status, 200);
  const sent = mails();
  t.equal(sent.length, 1);
  // Mail bodies are quoted-printable: undo soft line breaks and the encoded '='.
  const body = sent[0]!.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
  t.match(body, /To: new-owner@example\.com/);
  t.match(body, /\/accounts\/confirm_new_email\/[A-Za-z0-9]{24}/);
  t.equal((await api.get('/users/me')).body.email, owner.email, 'the address changes only once the link is followed');
});

t.test('settings, name and password survive a restart', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir });
  const strong = 'restart-Passw0rd-long-enough';
  await first.api.patch('/settings', { color_scheme: 2, timezone: 'Europe/Paris', full_name: 'Renamed Owner', old_password: OWNER_PASSWORD, new_password: strong });
  await first.stop();

  const second = await startTestServer(t, { dataDir });
  const settings = (await second.api.register({ fetch_event_types: ['user_settings'] })).body.user_settings;
  t.equal(settings.color_scheme, 2);
  t.equal(settings.timezone, 'Europe/Paris');
  t.equal((await second.api.get('/users/me')).body.full_name, 'Renamed Owner');
  t.equal((await second.api.as(null).post('/fetch_api_key', { username: first.owner.email, password: strong })).status, 200);
  await second.stop();
});
