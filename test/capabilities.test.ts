import t from 'tap';
import { startTestServer, type ApiClient } from './helpers/server.ts';

const drain = async (api: ApiClient, queueId: string) =>
  (await api.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).body.events as Record<string, unknown>[];

t.test('settings changes: user_settings for capable clients, legacy events as well for the others', async (t) => {
  const { api, owner } = await startTestServer(t);
  const modern = await api.register({ event_types: ['user_settings'], client_capabilities: { user_settings_object: true } });
  const legacy = await api.register({});
  const legacyOnly = await api.register({ event_types: ['update_display_settings', 'update_global_notifications'] });
  t.equal((await api.patch('/settings', { high_contrast_mode: true, enable_sounds: false })).status, 200);

  t.same((await drain(api, modern.queueId)).map(({ id: _id, ...rest }) => rest), [
    { type: 'user_settings', op: 'update', property: 'high_contrast_mode', value: true },
    { type: 'user_settings', op: 'update', property: 'enable_sounds', value: false },
  ], 'exactly the modern events, without the email used for the legacy ones');
  t.match(await drain(api, legacy.queueId), [
    { type: 'user_settings', property: 'high_contrast_mode' },
    { type: 'update_display_settings', user: owner.email, setting_name: 'high_contrast_mode', setting: true },
    { type: 'user_settings', property: 'enable_sounds' },
    { type: 'update_global_notifications', user: owner.email, notification_name: 'enable_sounds', setting: false },
  ]);
  t.same((await drain(api, legacyOnly.queueId)).map((event) => event.type), ['update_display_settings', 'update_global_notifications'],
    'a client that asked only for the legacy types gets only those');
});

t.test('the empty topic is shown by its display name only to clients without empty_topic_name, and only for channels', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'lobby' }] });
  const modern = await api.register({ event_types: ['message'], client_capabilities: { empty_topic_name: true } });
  const legacy = await api.register({ event_types: ['message'] });
  await api.post('/messages', { type: 'stream', to: 'lobby', topic: '', content: 'in the empty topic' });
  await api.post('/messages', { type: 'direct', to: [ann.userId], content: 'direct' });
  const subjects = async (queueId: string) => (await drain(api, queueId)).map((event) => (event.message as { subject: string }).subject);
  t.same(await subjects(modern.queueId), ['', '']);
  t.same(await subjects(legacy.queueId), ['general chat', ''], 'a direct message keeps its empty subject');
});

t.test('notification_settings_null: without it, a channel\'s unset notification settings come as the user\'s defaults', async (t) => {
  const { api } = await startTestServer(t);
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'lobby' }, { name: 'quiet' }] });
  const quiet = (await api.get('/get_stream_id', { stream: 'quiet' })).body.stream_id;
  t.equal((await api.patch('/settings', { enable_stream_desktop_notifications: true })).status, 200);
  await api.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: quiet, property: 'desktop_notifications', value: false }] });

  const settingsOf = (subscriptions: Record<string, unknown>[], name: string) => {
    const { desktop_notifications, audible_notifications, push_notifications, email_notifications, wildcard_mentions_notify } =
      subscriptions.find((s) => s.name === name)!;
    return { desktop_notifications, audible_notifications, push_notifications, email_notifications, wildcard_mentions_notify };
  };
  const capable = (await api.register({ fetch_event_types: ['subscription'], client_capabilities: { notification_settings_null: true } })).body;
  t.same(settingsOf(capable.subscriptions, 'lobby'), {
    desktop_notifications: null, audible_notifications: null, push_notifications: null, email_notifications: null, wildcard_mentions_notify: null,
  }, 'null: not set for this channel, the user\'s defaults apply');
  t.equal(settingsOf(capable.subscriptions, 'quiet').desktop_notifications, false, 'a value set for the channel is itself');

  const legacy = (await api.register({ fetch_event_types: ['subscription'] })).body;
  t.same(settingsOf(legacy.subscriptions, 'lobby'), {
    desktop_notifications: true, audible_notifications: false, push_notifications: false, email_notifications: false, wildcard_mentions_notify: null,
  }, 'the user\'s enable_stream_* settings instead of null (wildcard_mentions_notify as it is, as in the original)');
  t.equal(settingsOf(legacy.subscriptions, 'quiet').desktop_notifications, false);

  await api.delete('/users/me/subscriptions', { subscriptions: ['lobby'] });
  const left = (await api.register({ fetch_event_types: ['subscription'] })).body;
  t.equal(settingsOf(left.unsubscribed, 'lobby').desktop_notifications, true, 'unsubscribed channels too');
});

t.test('user_list_incomplete: a limited guest\'s registration and realm_user events leave out the users it may not access', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const carl = await api.createUser('carl@example.com', 'Carl');
  const guest = await api.createUser('guest@example.com', 'Guest');
  t.equal((await api.patch(`/users/${guest.userId}`, { role: 600 })).status, 200);
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'shared' }], principals: [ann.userId, guest.userId] });
  await api.as(carl).post('/messages', { type: 'direct', to: [guest.userId], content: 'hi' });
  const names = (users: { full_name: string }[]) => users.map((u) => u.full_name).sort();

  // Everyone is accessible while can_access_all_users_group is role:everyone (the default).
  const open = (await api.as(guest).register({ fetch_event_types: ['realm_user'], client_capabilities: { user_list_incomplete: true } })).body;
  t.same(names(open.realm_users), ['Ann', 'Bob', 'Carl', 'Guest', 'Owner']);

  const groups: { id: number; name: string }[] = (await api.get('/user_groups')).body.user_groups;
  const members = groups.find((group) => group.name === 'role:members')!.id;
  t.equal((await api.patch('/realm', { can_access_all_users_group: { new: members } })).status, 200);

  const incomplete = await api.as(guest).register({ fetch_event_types: ['realm_user'], client_capabilities: { user_list_incomplete: true } });
  t.same(names(incomplete.body.realm_users), ['Ann', 'Carl', 'Guest'],
    'itself, those sharing a channel (Ann) and those it has direct messages with (Carl); not Bob, nor the owner, who is in no channel of its');
  const complete = await api.as(guest).register({ fetch_event_types: ['realm_user'] });
  t.same(names(complete.body.realm_users), ['Ann', 'Carl', 'Guest', 'Unknown user', 'Unknown user'], 'without the capability Bob and the owner are placeholders');
  t.same(complete.body.realm_users.find((u: { user_id: number }) => u.user_id === bob.userId), {
    user_id: bob.userId, email: `user${bob.userId}@unknown.invalid`, delivery_email: null, full_name: 'Unknown user',
    date_joined: '1970-01-01T00:00:00.000Z', is_active: true, is_owner: false, is_admin: false, is_guest: false, is_bot: false,
    role: 400, timezone: '', avatar_url: complete.body.realm_users.find((u: { user_id: number }) => u.user_id === bob.userId).avatar_url,
    avatar_version: 1, profile_data: {},
  }, 'nothing of Bob but the id');
  t.notOk(JSON.stringify(complete.body.realm_users).includes('bob@example.com'));
  const memberView = (await api.as(ann).register({ fetch_event_types: ['realm_user'], client_capabilities: { user_list_incomplete: true } })).body;
  t.same(names(memberView.realm_users), ['Ann', 'Bob', 'Carl', 'Guest', 'Owner'], 'members are not limited');

  // A new person: members get it, limited guests a placeholder, or nothing with the capability.
  const memberQueue = await api.as(ann).register({ event_types: ['realm_user'] });
  const guestIncomplete = incomplete.queueId;
  const guestComplete = complete.queueId;
  const dan = await api.createUser('dan@example.com', 'Dan');
  const bot = (await api.post('/bots', { full_name: 'Helper', short_name: 'helper', bot_type: 1 })).body;
  const added = async (queueId: string, who: ApiClient) => (await drain(who, queueId)).filter((event) => event.type === 'realm_user' && event.op === 'add');
  t.match(await added(memberQueue.queueId, api.as(ann)), [{ person: { user_id: dan.userId, full_name: 'Dan', email: 'dan@example.com' } }, { person: { user_id: bot.user_id } }]);
  const placeholders = await added(guestComplete, api.as(guest));
  t.match(placeholders, [{ person: { user_id: dan.userId, full_name: 'Unknown user' } }, { person: { user_id: bot.user_id, full_name: 'Helper' } }],
    'the guest without the capability gets a placeholder for Dan, and the bot (bots are always accessible)');
  t.notOk('inaccessible_user' in placeholders[0]!, 'without the internal mark');
  t.notOk(JSON.stringify(placeholders[0]).includes('dan@example.com'));
  t.match(await added(guestIncomplete, api.as(guest)), [{ person: { user_id: bot.user_id } }], 'with the capability: only the bot');
});
