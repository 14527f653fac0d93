import t from 'tap';

import { channel, drain, ofType, type Event } from './helpers/messages.ts';
import { startTestServer, type ApiClient } from './helpers/server.ts';

/** The newest messages of a channel topic, oldest first. */
async function topicMessages(api: ApiClient, channelId: number, topic: string) {
  const result = await api.get('/messages', {
    anchor: 'newest', num_before: 100, num_after: 0,
    narrow: [{ operator: 'channel', operand: channelId }, { operator: 'topic', operand: topic }],
  });
  if (result.status !== 200) throw new Error(`fetch failed: ${JSON.stringify(result.body)}`);
  return result.body.messages as Record<string, unknown>[];
}

const messageEvents = (events: Event[]) => ofType(events, 'message').map((event) => event.message as Record<string, unknown>);

/** A server with an owner (user 1, the api), a member Ann and a channel "announcements" they both read. */
async function organization(t: { teardown(fn: () => unknown): void }) {
  const server = await startTestServer(t);
  const { api } = server;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const carl = await api.createUser('carl@example.com', 'Carl');
  const announcements = await channel(api, 'announcements', [1, ann.userId]);
  return { server, api, ann: api.as(ann), carl: api.as(carl), ids: { ann: ann.userId, carl: carl.userId }, announcements };
}

t.test('announcement settings: defaults, PATCH /realm validation, events and registration', async (t) => {
  const { api, ann, announcements } = await organization(t);
  let state = (await api.register({ fetch_event_types: ['realm', 'realm_user'] })).body;
  t.equal(state.realm_new_stream_announcements_stream_id, -1);
  t.equal(state.realm_signup_announcements_stream_id, -1);
  t.same(state.cross_realm_bots, [], 'no bot before a notice needs one');

  const { queueId } = await ann.register({ event_types: ['realm'] });
  const refused = await ann.patch('/realm', { new_stream_announcements_stream_id: announcements });
  t.match({ status: refused.status, msg: refused.body.msg }, { status: 400, msg: /administrator/ }, 'members may not');
  t.equal((await api.patch('/realm', { new_stream_announcements_stream_id: 999 })).status, 400, 'an unknown channel is refused');
  const archived = await channel(api, 'old', [1]);
  await api.delete(`/streams/${archived}`);
  t.equal((await api.patch('/realm', { signup_announcements_stream_id: archived })).status, 400, 'an archived channel is refused');

  const patched = await api.patch('/realm', { new_stream_announcements_stream_id: announcements, signup_announcements_stream_id: announcements });
  t.equal(patched.status, 200);
  t.match(patched.body, { new_stream_announcements_stream_id: announcements, signup_announcements_stream_id: announcements });
  const updates = ofType(await drain(ann, queueId), 'realm');
  t.same(updates.map((event) => [event.op, event.property, event.value]), [
    ['update', 'new_stream_announcements_stream_id', announcements],
    ['update', 'signup_announcements_stream_id', announcements],
  ]);

  state = (await api.register({ fetch_event_types: ['realm', 'realm_user'] })).body;
  t.equal(state.realm_new_stream_announcements_stream_id, announcements);
  t.equal(state.realm_signup_announcements_stream_id, announcements);
  t.equal(state.cross_realm_bots.length, 1);
  const bot = state.cross_realm_bots[0];
  t.match(bot, { full_name: 'Notification Bot', is_bot: true, is_system_bot: true, is_active: true, email: /^notification-bot@/ });
  t.notOk(state.realm_users.some((user: { user_id: number }) => user.user_id === bot.user_id), 'the bot is not in realm_users');
  const members = (await api.get('/users')).body.members as { user_id: number }[];
  t.equal(members.length, 3, 'GET /users lists the owner, Ann and Carl only');
  t.notOk(members.some((user) => user.user_id === bot.user_id));
  t.equal((await api.get(`/users/${bot.user_id}`)).status, 400, 'the bot is not a user of the directory');

  t.equal((await api.patch('/realm', { new_stream_announcements_stream_id: -1 })).status, 200, '-1 turns it off');
  t.equal((await api.register({ fetch_event_types: ['realm'] })).body.realm_new_stream_announcements_stream_id, -1);
});

t.test('announce=true: the bot announces a new public channel in the same commit, with its message event', async (t) => {
  const { server, api, ann, carl, ids, announcements } = await organization(t);
  await api.patch('/realm', { new_stream_announcements_stream_id: announcements });
  const bot = (await api.register({ fetch_event_types: ['realm_user'] })).body.cross_realm_bots[0];
  const annQueue = (await ann.register({ event_types: ['message'] })).queueId;
  const carlQueue = (await carl.register({ event_types: ['message'] })).queueId;

  const created = await ann.post('/users/me/subscriptions', { subscriptions: [{ name: 'design' }], announce: true });
  t.equal(created.status, 200);
  const design = (await api.get('/get_stream_id', { stream: 'design' })).body.stream_id;

  const [notice] = messageEvents(await drain(ann, annQueue));
  t.ok(notice, 'the announcements subscriber gets the message event');
  t.match(notice, {
    sender_id: bot.user_id,
    sender_full_name: 'Notification Bot',
    sender_email: bot.email,
    stream_id: announcements,
    subject: 'new channels',
    type: 'stream',
  });
  t.equal(notice!.content, `@_**Ann|${ids.ann}** created a new channel #**design**.`, 'the event has the Markdown asked for');
  t.same(messageEvents(await drain(carl, carlQueue)), [], 'a non-subscriber of the announcements channel gets nothing');

  const stored = await topicMessages(api, announcements, 'new channels');
  t.equal(stored.length, 1);
  t.equal((await api.get(`/messages/${stored[0]!.id}`, { apply_markdown: false })).body.message.content, `@_**Ann|${ids.ann}** created a new channel #**design**.`);
  const html = (await api.get(`/messages/${stored[0]!.id}`)).body.message.content as string;
  t.equal(html, `<p><span class="user-mention silent" data-user-id="${ids.ann}">Ann</span> created a new channel <a class="stream" data-stream-id="${design}" href="/#narrow/channel/${design}-design">#design</a>.</p>`);

  // POST /channels/create announces too; without announce, nothing.
  t.equal((await api.post('/channels/create', { name: 'ops', subscribers: [1], announce: true })).status, 200);
  t.equal((await api.post('/channels/create', { name: 'quiet', subscribers: [1] })).status, 200);
  await ann.post('/users/me/subscriptions', { subscriptions: [{ name: 'quiet too' }] });
  const contents = (await topicMessages(api, announcements, 'new channels')).map((message) => message.content as string);
  t.equal(contents.length, 2, 'only the two announced creations');
  t.match(contents[1]!, '#ops');

  // The creation and its notice are the changes of one command, committed as one log record: a crash can
  // never keep one without the other.
  const changes = await server.server.runtime.execute(1, {
    type: 'channel.subscribe', caller: { kind: 'user', userId: 1 }, channels: [{ name: 'direct', description: '' }], principals: [1],
    authorizationErrorsFatal: true, options: { inviteOnly: false, isWebPublic: false, messageRetentionDays: null, isDefault: false, permissions: {}, announce: true },
  });
  t.same(changes.map((change) => change.type), ['channel.created', 'subscriptions.added', 'message.sent']);
});

t.test('nothing is announced for a private channel, with the setting at -1, or for an existing channel', async (t) => {
  const { api, ann, announcements } = await organization(t);
  await ann.post('/users/me/subscriptions', { subscriptions: [{ name: 'before' }], announce: true });
  t.same(await topicMessages(api, announcements, 'new channels'), [], 'setting -1: nothing');

  await api.patch('/realm', { new_stream_announcements_stream_id: announcements });
  await ann.post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], invite_only: true, announce: true });
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'before' }], announce: true });
  t.same(await topicMessages(api, announcements, 'new channels'), [], 'private or already existing: nothing');

  // Several public channels at once: one notice naming them all.
  await ann.post('/users/me/subscriptions', { subscriptions: [{ name: 'a1' }, { name: 'a2' }], announce: true });
  const [notice] = await topicMessages(api, announcements, 'new channels');
  t.match(String(notice!.content), /created the following channels: .*#a1.*, .*#a2/);
});

t.test('signup announcements: the bot tells the channel about each new user', async (t) => {
  const { api, ann, announcements } = await organization(t);
  await api.createUser('early@example.com', 'Early');
  t.same(await topicMessages(api, announcements, 'signups'), [], 'setting -1: nothing');

  await api.patch('/realm', { signup_announcements_stream_id: announcements });
  const { queueId } = await ann.register({ event_types: ['message'] });
  const dora = await api.createUser('dora@example.com', 'Dora');
  const [event] = messageEvents(await drain(ann, queueId));
  t.match(event, { subject: 'signups', stream_id: announcements, sender_full_name: 'Notification Bot' });
  const stored = await topicMessages(api, announcements, 'signups');
  t.equal(stored.length, 1);
  t.equal((await api.get(`/messages/${stored[0]!.id}`, { apply_markdown: false })).body.message.content, `@_**Dora|${dora.userId}** joined this organization.`);
  t.equal((await api.get('/users')).body.members.length, 5, 'owner, Ann, Carl, Early, Dora: the bot is not counted');

});

t.test('the bot and its notices survive a restart', async (t) => {
  const first = await startTestServer(t);
  const dataDir = first.dataDir;
  const { api } = first;
  const announcements = await channel(api, 'announcements', [1]);
  await api.patch('/realm', { new_stream_announcements_stream_id: announcements, signup_announcements_stream_id: announcements });
  await api.post('/channels/create', { name: 'design', subscribers: [1], announce: true });
  const before = (await api.register({ fetch_event_types: ['realm_user'] })).body.cross_realm_bots;
  await first.stop();

  const second = await startTestServer(t, { dataDir });
  const after = (await second.api.register({ fetch_event_types: ['realm', 'realm_user'] })).body;
  t.same(after.cross_realm_bots, before, 'the same bot, with the same id');
  t.equal(after.realm_new_stream_announcements_stream_id, announcements);
  const [notice] = await topicMessages(second.api, announcements, 'new channels');
  t.match(notice, { sender_id: before[0].user_id, sender_full_name: 'Notification Bot' });
  // The bot's id stays taken: the next user gets a fresh one.
  const erin = await second.api.createUser('erin@example.com', 'Erin');
  t.not(erin.userId, before[0].user_id);
  t.equal((await topicMessages(second.api, announcements, 'signups')).length, 1, 'and signups still post after the restart');
});
