import t from 'tap';
import { channel, drain, sendDirect, sendToChannel } from './helpers/messages.ts';
import { startTestServer, type ApiClient } from './helpers/server.ts';

const STREAM_TYPING = { client_capabilities: { stream_typing_notifications: true, empty_topic_name: true } };

async function setting(api: ApiClient, name: string, value: boolean): Promise<void> {
  const result = await api.patch('/settings', { [name]: value });
  if (result.status !== 200) throw new Error(`settings failed: ${JSON.stringify(result.body)}`);
}

t.test('direct typing reaches the other participants who want it, never the typist, and is never logged', async (t) => {
  const { api, owner, server } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const cat = await api.createUser('cat@example.com', 'Cat');
  await setting(api.as(bob), 'receives_typing_notifications', false);
  const ownerQueue = await api.register({ event_types: ['typing'] });
  const annQueue = await api.as(ann).register({ event_types: ['typing'] });
  const annOther = await api.as(ann).register({ event_types: ['message'] });
  const bobQueue = await api.as(bob).register({ event_types: ['typing'] });
  const catQueue = await api.as(cat).register({});

  const logged = server.runtime.logPosition;
  t.equal((await api.post('/typing', { op: 'start', to: [ann.userId, bob.userId] })).status, 200);
  t.equal((await api.post('/typing', { type: 'direct', op: 'stop', to: [ann.userId, bob.userId] })).status, 200);
  t.equal(server.runtime.logPosition, logged, 'typing writes nothing to the log');

  const recipients = [
    { user_id: ann.userId, email: ann.email },
    { user_id: bob.userId, email: bob.email },
    { user_id: 1, email: owner.email },
  ];
  const sender = { user_id: 1, email: owner.email };
  t.same((await drain(api.as(ann), annQueue.queueId)).map(({ id: _id, ...event }) => event), [
    { type: 'typing', op: 'start', message_type: 'direct', sender, recipients },
    { type: 'typing', op: 'stop', message_type: 'direct', sender, recipients },
  ], 'the recipient gets start and stop, naming everyone in the conversation');
  t.same(await drain(api.as(ann), annOther.queueId), [], 'a queue that did not ask for typing gets none');
  t.same(await drain(api.as(bob), bobQueue.queueId), [], 'not to a user with receives_typing_notifications off');
  t.same(await drain(api.as(cat), catQueue.queueId), [], 'not to someone outside the conversation');
  t.same(await drain(api, ownerQueue.queueId), [], 'not back to the typist');

  // `private` is the spelling older clients send.
  await api.as(ann).post('/typing', { type: 'private', op: 'start', to: [1] });
  t.match(await drain(api, ownerQueue.queueId), [{ type: 'typing', op: 'start', message_type: 'direct', sender: { user_id: ann.userId } }]);
});

t.test('channel typing reaches subscribers whose queues declared stream_typing_notifications', async (t) => {
  const { api, owner } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const cat = await api.createUser('cat@example.com', 'Cat');
  const general = await channel(api, 'general', [1, ann.userId, bob.userId]);
  await setting(api.as(bob), 'receives_typing_notifications', false);
  const annCapable = await api.as(ann).register({ event_types: ['typing'], ...STREAM_TYPING });
  const annLegacyTopic = await api.as(ann).register({ event_types: ['typing'], client_capabilities: { stream_typing_notifications: true } });
  const annIncapable = await api.as(ann).register({ event_types: ['typing'] });
  const bobQueue = await api.as(bob).register({ event_types: ['typing'], ...STREAM_TYPING });
  const catQueue = await api.as(cat).register({ event_types: ['typing'], ...STREAM_TYPING });
  const ownerQueue = await api.register({ event_types: ['typing'], ...STREAM_TYPING });

  t.equal((await api.post('/typing', { type: 'stream', op: 'start', stream_id: general, topic: 'plans' })).status, 200);
  t.equal((await api.post('/typing', { type: 'channel', op: 'stop', stream_id: general, topic: '' })).status, 200);

  const sender = { user_id: 1, email: owner.email };
  t.same((await drain(api.as(ann), annCapable.queueId)).map(({ id: _id, ...event }) => event), [
    { type: 'typing', op: 'start', message_type: 'stream', sender, stream_id: general, topic: 'plans' },
    { type: 'typing', op: 'stop', message_type: 'stream', sender, stream_id: general, topic: '' },
  ]);
  t.match(await drain(api.as(ann), annLegacyTopic.queueId), [{ topic: 'plans' }, { topic: 'general chat' }],
    'without empty_topic_name the empty topic reads as its display name');
  t.same(await drain(api.as(ann), annIncapable.queueId), [], 'no channel typing without the capability');
  t.same(await drain(api.as(bob), bobQueue.queueId), [], 'not to a subscriber with receives_typing_notifications off');
  t.same(await drain(api.as(cat), catQueue.queueId), [], 'not to a non-subscriber');
  t.same(await drain(api, ownerQueue.queueId), [], 'not back to the typist');

  // The same queue without the capability still gets direct typing.
  await api.post('/typing', { op: 'start', to: [ann.userId] });
  t.match(await drain(api.as(ann), annIncapable.queueId), [{ type: 'typing', message_type: 'direct' }]);
});

t.test('typing requests are checked with the original messages', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const general = await channel(api, 'general', [1, ann.userId]);
  const secret = await channel(api, 'secret', [1], { invite_only: true });
  const announce = (await api.post('/channels/create', {
    name: 'announce', subscribers: [1, ann.userId], can_send_message_group: { direct_members: [1], direct_subgroups: [] },
  })).body.id as number;
  const cases: [Record<string, unknown>, string, string?][] = [
    [{ to: [1] }, "Missing 'op' argument", 'REQUEST_VARIABLE_MISSING'],
    [{ op: 'typing', to: [1] }, 'Invalid op'],
    [{ type: 'huddle', op: 'start', to: [1] }, 'Invalid type'],
    [{ op: 'start' }, "Missing 'to' argument"],
    [{ op: 'start', to: [] }, "Empty 'to' list"],
    [{ op: 'start', to: [1, 999] }, 'Invalid user ID 999'],
    [{ op: 'start', to: '[1' }, '"to" is not valid JSON.'],
    [{ type: 'stream', op: 'start', topic: 'x' }, 'Missing channel ID'],
    [{ type: 'channel', op: 'start', stream_id: general }, 'Missing topic'],
    [{ type: 'channel', op: 'start', stream_id: 999, topic: 'x' }, 'Invalid channel ID'],
    [{ type: 'channel', op: 'start', stream_id: secret, topic: 'x' }, 'Invalid channel ID'],
    [{ type: 'channel', op: 'start', stream_id: announce, topic: 'x' }, 'You do not have permission to post in this channel.'],
  ];
  for (const [params, msg, code = 'BAD_REQUEST'] of cases) {
    const result = await api.as(ann).post('/typing', params);
    t.match({ status: result.status, code: result.body.code, msg: result.body.msg }, { status: 400, code, msg }, JSON.stringify(params));
  }

  await setting(api.as(ann), 'send_private_typing_notifications', false);
  t.equal((await api.as(ann).post('/typing', { op: 'start', to: [1] })).body.msg, 'User has disabled typing notifications for direct messages');
  t.equal((await api.as(ann).post('/typing', { type: 'channel', op: 'start', stream_id: general, topic: 'x' })).status, 200,
    'the direct-message setting does not govern channels');
  await setting(api.as(ann), 'send_stream_typing_notifications', false);
  t.equal((await api.as(ann).post('/typing', { type: 'channel', op: 'start', stream_id: general, topic: 'x' })).body.msg,
    'User has disabled typing notifications for channel messages');
});

t.test('typing while editing: typing_edit_message to whoever would see the edit', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const cat = await api.createUser('cat@example.com', 'Cat');
  const general = await channel(api, 'general', [1, ann.userId, bob.userId]);
  await channel(api, 'secret', [1], { invite_only: true });
  await setting(api.as(bob), 'receives_typing_notifications', false);
  const inChannel = await sendToChannel(api, general, 'plans', 'first draft');
  const direct = await sendDirect(api, [cat.userId], 'hello');
  const hidden = await sendToChannel(api, 'secret', 'x', 'hush');
  const annQueue = await api.as(ann).register({ event_types: ['typing_edit_message'] });
  const annTypingOnly = await api.as(ann).register({ event_types: ['typing'], ...STREAM_TYPING });
  const bobQueue = await api.as(bob).register({ event_types: ['typing_edit_message'] });
  const catQueue = await api.as(cat).register({ event_types: ['typing_edit_message'] });
  const ownerQueue = await api.register({ event_types: ['typing_edit_message'] });

  t.equal((await api.post(`/messages/${inChannel}/typing`, { op: 'start' })).status, 200);
  t.equal((await api.post(`/messages/${direct}/typing`, { op: 'stop' })).status, 200);

  t.same((await drain(api.as(ann), annQueue.queueId)).map(({ id: _id, ...event }) => event), [
    { type: 'typing_edit_message', op: 'start', sender_id: 1, message_id: inChannel, recipient: { type: 'channel', channel_id: general, topic: 'plans' } },
  ]);
  t.same((await drain(api.as(cat), catQueue.queueId)).map(({ id: _id, ...event }) => event), [
    { type: 'typing_edit_message', op: 'stop', sender_id: 1, message_id: direct, recipient: { type: 'direct', user_ids: [1, cat.userId] } },
  ]);
  t.same(await drain(api.as(ann), annTypingOnly.queueId), [], 'a separate event type from typing');
  t.same(await drain(api.as(bob), bobQueue.queueId), [], 'not to a user with receives_typing_notifications off');
  t.same(await drain(api, ownerQueue.queueId), [], 'not back to the editor');

  for (const id of [hidden, 999]) {
    t.equal((await api.as(ann).post(`/messages/${id}/typing`, { op: 'start' })).body.msg, 'Invalid message(s)', `message ${id}`);
  }
  t.equal((await api.post(`/messages/${inChannel}/typing`, { op: 'begin' })).body.msg, 'Invalid op');
  t.equal((await api.post(`/messages/${inChannel}/typing`, {})).body.code, 'REQUEST_VARIABLE_MISSING');
  await setting(api, 'send_stream_typing_notifications', false);
  t.equal((await api.post(`/messages/${inChannel}/typing`, { op: 'start' })).body.msg, 'User has disabled typing notifications for channel messages');
  t.equal((await api.post(`/messages/${direct}/typing`, { op: 'start' })).status, 200, 'direct messages follow their own setting');
  await setting(api, 'send_private_typing_notifications', false);
  t.equal((await api.post(`/messages/${direct}/typing`, { op: 'start' })).body.msg, 'User has disabled typing notifications for direct messages');
});

t.test('channels with more than 100 active subscribers get no typing notifications', async (t) => {
  const { api, server } = await startTestServer(t);
  const { runtime } = server;
  // Many users, made in-process: no password hashing per user.
  const userIds: number[] = [];
  for (let i = 0; i < 100; i++) {
    const [change] = await runtime.execute(1, { type: 'user.create', caller: { kind: 'operator' }, email: `u${i}@example.com`, fullName: `U${i}`, passwordHash: null });
    if (change?.type === 'user.created') userIds.push(change.user.userId);
  }
  const first = runtime.realmState(1).users.get(userIds[0]!)!;
  const firstApi = api.as({ email: first.email, key: first.apiKey });
  const small = await channel(api, 'small', [1, first.userId]);
  const crowd = await channel(api, 'crowd', [1, ...userIds]);
  const queue = await firstApi.register({ event_types: ['typing'], ...STREAM_TYPING });

  await api.post('/typing', { type: 'channel', op: 'start', stream_id: small, topic: 't' });
  t.equal((await drain(firstApi, queue.queueId)).length, 1, 'a small channel gets them');
  t.equal((await api.post('/typing', { type: 'channel', op: 'start', stream_id: crowd, topic: 't' })).status, 200);
  t.same(await drain(firstApi, queue.queueId), [], '101 subscribers: none');
  await api.delete(`/users/${userIds[99]}`);
  await api.post('/typing', { type: 'channel', op: 'start', stream_id: crowd, topic: 't' });
  t.equal((await drain(firstApi, queue.queueId)).length, 1, 'deactivated subscribers do not count: 100 is allowed');
});
