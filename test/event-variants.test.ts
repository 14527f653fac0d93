import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { WEB_CLIENT_VERSION_FILE } from '../src/web/served-version.ts';
import { channel, drain, sendDirect } from './helpers/messages.ts';
import { startTestServer, tempDir } from './helpers/server.ts';

// Event variants of the document whose change had no event: who gets them and when.

t.test('muted_topics: the whole legacy list, for queues that did not ask for user_topic by name', async (t) => {
  const { api } = await startTestServer(t);
  const general = await channel(api, 'general', [1]);
  const legacy = (await api.register({ event_types: ['muted_topics'] })).queueId;
  const both = (await api.register({ event_types: ['user_topic', 'muted_topics'] })).queueId;
  const every = (await api.register({})).queueId;
  t.equal((await api.post('/user_topics', { stream_id: general, topic: 'noise', visibility_policy: 1 })).status, 200);
  t.equal((await api.post('/user_topics', { stream_id: general, topic: 'news', visibility_policy: 3 })).status, 200);
  const lists = (await drain(api, legacy)).map((event) => (event.muted_topics as unknown[][]).map((entry) => entry.slice(0, 2)));
  t.same(lists, [[['general', 'noise']], [['general', 'noise']]], 'after each change, the muted topics only');
  t.same((await drain(api, both)).map((event) => event.type), ['user_topic', 'user_topic'], 'a client that reads user_topic gets no duplicate');
  t.same((await drain(api, every)).map((event) => event.type).filter((type) => type.endsWith('topics') || type === 'user_topic'),
    ['user_topic', 'muted_topics', 'user_topic', 'muted_topics'], 'a queue for every type gets both, as from the original');
});

t.test('stream delete: a user unsubscribed from a private channel it may no longer see', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const secret = await channel(api, 'secret', [1, ann.userId], { invite_only: true });
  const open = await channel(api, 'open', [1, ann.userId]);
  const annQueue = (await api.as(ann).register({ event_types: ['stream', 'subscription'] })).queueId;
  const ownerQueue = (await api.register({ event_types: ['stream', 'subscription'] })).queueId;
  t.equal((await api.delete('/users/me/subscriptions', { subscriptions: ['secret', 'open'], principals: [ann.userId] })).status, 200);
  t.match(await drain(api.as(ann), annQueue), [
    { type: 'subscription', op: 'remove', subscriptions: [{ stream_id: secret }, { stream_id: open }] },
    { type: 'stream', op: 'delete', stream_ids: [secret], streams: [{ stream_id: secret, name: 'secret' }] },
  ], 'the private channel only: a public one stays in view');
  t.equal((await api.delete('/users/me/subscriptions', { subscriptions: ['secret'] })).status, 200);
  t.notOk((await drain(api, ownerQueue)).some((event) => event.type === 'stream'), 'an administrator still sees the channel it left');
});

t.test('realm_user remove: a limited guest loses access to the people it shared only a channel with', async (t) => {
  const { api } = await startTestServer(t);
  const [ann, bob, gus] = [await api.createUser('ann@example.com', 'Ann'), await api.createUser('bob@example.com', 'Bob'), await api.createUser('gus@example.com', 'Gus')];
  t.equal((await api.patch(`/users/${gus.userId}`, { role: 600 })).status, 200);
  const members = (await api.get('/user_groups')).body.user_groups.find((group: { name: string }) => group.name === 'role:members').id;
  t.equal((await api.patch('/realm', { can_access_all_users_group: { new: members } })).status, 200);
  await channel(api, 'lobby', [ann.userId, bob.userId, gus.userId]);
  await channel(api, 'side', [ann.userId, gus.userId]);
  await sendDirect(api, [gus.userId], 'hello');
  const guest = (await api.as(gus).register({ event_types: ['realm_user'] })).queueId;
  const member = (await api.as(bob).register({ event_types: ['realm_user'] })).queueId;

  t.equal((await api.delete('/users/me/subscriptions', { subscriptions: ['lobby'], principals: [gus.userId] })).status, 200);
  t.same((await drain(api.as(gus), guest)).map(({ id: _id, ...event }) => event), [{ type: 'realm_user', op: 'remove', person: { user_id: bob.userId, full_name: 'Unknown user' } }],
    'Bob only: Ann shares another channel, the owner a conversation');
  t.equal((await api.as(gus).get(`/users/${bob.userId}`)).status, 400, 'Bob is gone from the guest\'s view');
  t.same(await drain(api.as(bob), member), [], 'a member loses access to nobody');

  t.equal((await api.delete('/users/me/subscriptions', { subscriptions: ['side'], principals: [ann.userId] })).status, 200);
  t.match(await drain(api.as(gus), guest), [{ type: 'realm_user', op: 'remove', person: { user_id: ann.userId } }], 'the guest stays, the person leaves');
});

t.test('web_reload_client: after a restart that serves another web client, kept queues are told to reload', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir });
  const { queueId } = await first.api.register({});
  await first.stop();
  const same = await startTestServer(t, { dataDir });
  t.same((await drain(same.api, queueId)).map((event) => event.type), ['restart'], 'the same client: a restart only');
  await same.stop();
  writeFileSync(join(dataDir, WEB_CLIENT_VERSION_FILE), 'older\n');
  const upgraded = await startTestServer(t, { dataDir });
  t.match(await drain(upgraded.api, queueId), [{ type: 'restart' }, { type: 'web_reload_client', immediate: false }], 'another one: reload');
  t.not(readFileSync(join(dataDir, WEB_CLIENT_VERSION_FILE), 'utf8'), 'older\n', 'the version now served is recorded');
});
