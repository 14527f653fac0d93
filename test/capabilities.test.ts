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
