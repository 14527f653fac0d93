import t from 'tap';
import { channel, sendToChannel } from './helpers/messages.ts';
import { startTestServer, type ApiClient } from './helpers/server.ts';

const MISSING_CREDENTIALS = { result: 'error', msg: 'Missing authorization header for basic auth', code: 'UNAUTHORIZED' };

/** Turns the realm's spectator access on and makes a web-public channel; returns its id. */
async function openToPublic(api: ApiClient, name = 'lobby'): Promise<number> {
  const opened = await api.patch('/realm', { enable_spectator_access: true });
  if (opened.status !== 200) throw new Error(`spectator access refused: ${JSON.stringify(opened.body)}`);
  const created = await api.post('/channels/create', { name, subscribers: [1], is_web_public: true, description: 'Come in' });
  if (created.status !== 200) throw new Error(`web-public channel refused: ${JSON.stringify(created.body)}`);
  return created.body.id;
}

t.test('without the server switch there are no web-public channels and no anonymous registration', async (t) => {
  const { api } = await startTestServer(t);
  t.equal((await api.patch('/realm', { enable_spectator_access: true })).status, 200);
  const refused = await api.post('/channels/create', { name: 'lobby', subscribers: [1], is_web_public: true });
  t.same(refused.body, { result: 'error', msg: 'Web-public channels are not enabled.', code: 'BAD_REQUEST' });
  const anonymous = await api.as(null).post('/register');
  t.equal(anonymous.status, 401);
  t.same(anonymous.body, MISSING_CREDENTIALS);
  t.equal((await api.as(null).get('/server_settings')).body.realm_web_public_access_enabled, false);
  t.equal((await api.register({ fetch_event_types: ['realm'] })).body.server_web_public_streams_enabled, false);
});

t.test('web-public channels need the realm\'s spectator access, the permission, and a public channel', async (t) => {
  const { api } = await startTestServer(t, { webPublicStreamsEnabled: true });
  const ann = await api.createUser('ann@example.com', 'Ann');

  const off = await api.post('/channels/create', { name: 'lobby', subscribers: [1], is_web_public: true });
  t.same(off.body, { result: 'error', msg: 'Web-public channels are not enabled.', code: 'BAD_REQUEST' }, 'spectator access is off');
  t.equal((await api.patch('/realm', { enable_spectator_access: true })).status, 200);
  t.equal((await api.as(null).post('/register')).status, 401, 'spectator access alone, without a web-public channel, is no public access');

  const priv = await api.post('/channels/create', { name: 'lobby', subscribers: [1], is_web_public: true, invite_only: true });
  t.same(priv.body, { result: 'error', msg: 'A web-public channel cannot be private.', code: 'BAD_REQUEST' });
  const member = await api.as(ann).post('/channels/create', { name: 'lobby', subscribers: [ann.userId], is_web_public: true });
  t.equal(member.body.code, 'UNAUTHORIZED_PRINCIPAL', 'only can_create_web_public_channel_group (owners) may');

  const { body: created } = await api.post('/channels/create', { name: 'lobby', subscribers: [1], is_web_public: true });
  const lobby = created.id;
  const streams = (await api.get('/streams', { include_web_public: true })).body.streams;
  t.match(streams.find((s: { stream_id: number }) => s.stream_id === lobby), { is_web_public: true, invite_only: false, history_public_to_subscribers: true });
  t.equal((await api.as(null).get('/server_settings')).body.realm_web_public_access_enabled, true);

  // Edits: a private channel made web-public becomes public; a web-public channel made private stops being web-public.
  const secret = await channel(api, 'secret', [1], { invite_only: true });
  t.equal((await api.patch(`/streams/${secret}`, { is_web_public: true })).status, 200);
  t.match((await api.get(`/streams/${secret}`)).body.stream, { is_web_public: true, invite_only: false });
  t.equal((await api.patch(`/streams/${secret}`, { is_private: true })).status, 200);
  t.match((await api.get(`/streams/${secret}`)).body.stream, { is_web_public: false, invite_only: true });
  t.equal((await api.patch(`/streams/${lobby}`, { is_web_public: false })).status, 200);
  t.equal((await api.as(null).post('/register')).status, 401, 'no web-public channel left: no public access');
  t.same((await api.patch(`/streams/${lobby}`, { is_web_public: true, is_private: true })).body.msg, 'A web-public channel cannot be private.');
});

t.test('an anonymous registration gets the web-public state and no queue', async (t) => {
  const { api, owner } = await startTestServer(t, { webPublicStreamsEnabled: true });
  const ann = await api.createUser('ann@example.com', 'Ann');
  const lobby = await openToPublic(api);
  const internal = await channel(api, 'internal', [1, ann.userId]);
  await sendToChannel(api, lobby, 'hello', 'Welcome, visitors');
  await sendToChannel(api, internal, 'plans', 'Members only');
  await api.post('/drafts', { drafts: [{ type: 'stream', to: [internal], topic: 't', content: 'draft', timestamp: 1 }] });

  const { status, body } = await api.as(null).post('/register');
  t.equal(status, 200);
  t.equal(body.queue_id, null, 'no queue: queue_id is null');
  t.equal(body.last_event_id, -1);
  t.equal(body.svc_feature_level, 420);
  t.same(body.subscriptions.map((s: { name: string }) => s.name), ['lobby'], 'only the web-public channel, as if subscribed');
  t.match(body.subscriptions[0], { stream_id: lobby, is_web_public: true, is_muted: false, desktop_notifications: false, push_notifications: false });
  t.notOk('subscribers' in body.subscriptions[0]);
  t.same(body.unsubscribed, []);
  t.same(body.never_subscribed, [], 'the other public channel is not shown');
  t.same(body.streams.map((s: { name: string }) => s.name), ['lobby']);
  t.same(body.realm_default_streams, []);
  t.match(body, { user_id: 0, full_name: 'Anonymous User', is_guest: true, is_admin: false, is_owner: false, can_create_streams: false });
  t.same(body.drafts, [], 'nobody\'s drafts');
  t.same(body.presences, {});
  t.equal(body.max_message_id, -1);
  t.equal(body.unread_msgs.count, 0);
  t.same(body.custom_profile_fields, []);
  t.equal(body.realm_presence_disabled, true);
  t.equal(body.realm_allow_message_editing, false);
  t.equal(body.server_web_public_streams_enabled, true);
  t.equal(body.realm_enable_spectator_access, true);

  const ownerView = body.realm_users.find((u: { user_id: number }) => u.user_id === 1);
  t.match(ownerView, { full_name: 'Owner', delivery_email: null, email: /^user1@/ }, 'people are listed without their addresses');
  t.not(ownerView.email, owner.email);
  t.notOk('timezone' in ownerView, 'nor their time zone');
  t.notOk('profile_data' in ownerView, 'nor their profile data');
  t.match(ownerView.date_joined, /^\d{4}-\d{2}-\d{2}$/, 'only the day they joined');
  t.notOk(JSON.stringify(body).includes(owner.email), 'no real address anywhere in the state');

  const nulls = await api.as(null).post('/register', { client_capabilities: { notification_settings_null: true } });
  t.equal(nulls.body.subscriptions[0].desktop_notifications, null, 'with notification_settings_null the settings stay null');

  const narrow = await api.as(null).post('/register', { fetch_event_types: ['realm_user'] });
  t.notOk('subscriptions' in narrow.body, 'fetch_event_types applies');
  t.ok(Array.isArray(narrow.body.realm_users));

  for (const name of ['client_extavatar', 'include_subscribers']) {
    const refused = await api.as(null).post('/register', { [name]: true });
    t.equal(refused.status, 400);
    t.same(refused.body, { result: 'error', msg: `Invalid '${name}' parameter for anonymous request`, code: 'BAD_REQUEST' });
  }
  t.equal((await api.as(null).post('/register', { client_extavatar: false })).status, 200, 'false is fine');

  const wrongKey = await api.as({ email: owner.email, key: 'x'.repeat(32) }).post('/register');
  t.equal(wrongKey.status, 401, 'credentials, when sent, are checked as ever');
  t.equal(wrongKey.body.code, 'UNAUTHORIZED');
  const member = await api.as(ann).register();
  t.type(member.queueId, 'string', 'members still get a queue');
  t.same(member.body.subscriptions.map((s: { name: string }) => s.name), ['internal']);
});

t.test('public access survives a restart; archiving the last web-public channel ends it', async (t) => {
  const first = await startTestServer(t, { webPublicStreamsEnabled: true });
  const lobby = await openToPublic(first.api);
  await first.stop();
  const second = await startTestServer(t, { dataDir: first.dataDir, webPublicStreamsEnabled: true });
  const after = await second.api.as(null).post('/register', { fetch_event_types: ['subscription'] });
  t.equal(after.status, 200, 'the realm is still open to the public after a restart');
  t.same(after.body.subscriptions.map((s: { stream_id: number }) => s.stream_id), [lobby]);

  t.equal((await second.api.delete(`/streams/${lobby}`)).status, 200);
  const closed = await second.api.as(null).post('/register');
  t.equal(closed.status, 401);
  t.same(closed.body, MISSING_CREDENTIALS);
});
