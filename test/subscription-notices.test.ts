import t from 'tap';
import { channel, drain, ofType } from './helpers/messages.ts';
import { startTestServer } from './helpers/server.ts';

/** Feature levels 397 and 412: who is told of a subscription made for them, and `include_subscribers=partial`. */
t.test('the notification bot tells people subscribed by someone else, unless asked not to', async (t) => {
  const { api: owner } = await startTestServer(t);
  const ann = await owner.createUser('ann@example.com', 'Ann');
  const bob = await owner.createUser('bob@example.com', 'Bob');
  await channel(owner, 'general', [1]);
  await channel(owner, 'random', [1]);
  const { queueId } = await owner.as(ann).register({ event_types: ['message'] });

  const added = await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }, { name: 'random' }, { name: 'brand new' }], principals: [ann.userId] });
  t.equal(added.body.new_subscription_messages_sent, true);
  const quiet = await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }], principals: [bob.userId], send_new_subscription_messages: false });
  t.equal(quiet.status, 200);
  t.notOk('new_subscription_messages_sent' in quiet.body, 'only when asked for');

  const told = ofType(await drain(owner.as(ann), queueId), 'message').map((event) => event.message as Record<string, any>);
  t.equal(told.length, 1, 'one message, for both existing channels (not the channel the request created)');
  t.match(told[0], { type: 'private', sender_full_name: 'Notification Bot', content: /subscribed you to the following channels:/ });
  t.match(told[0]!.content, /\n\n\* #\*\*general\*\*\n\* #\*\*random\*\*\n$/);
  const bobsDirect = await owner.as(bob).get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: 'is', operand: 'dm' }]) });
  t.same(bobsDirect.body.messages, [], 'nobody told when asked not to');
  const self = await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'random' }], principals: [bob.userId, 1] });
  t.equal(self.body.new_subscription_messages_sent, true);
  const bobs = await owner.as(bob).get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, apply_markdown: false, narrow: JSON.stringify([{ operator: 'is', operand: 'dm' }]) });
  t.match(bobs.body.messages.map((message: { content: string }) => message.content), [/^@_\*\*Owner\|1\*\* subscribed you to the channel #\*\*random\*\*\.$/]);
});

t.test('include_subscribers=partial is taken, and answered with every subscriber list', async (t) => {
  const { api: owner } = await startTestServer(t);
  const ann = await owner.createUser('ann@example.com', 'Ann');
  await channel(owner, 'general', [1, ann.userId]);
  for (const value of ['partial', '"partial"']) {
    const registered = await owner.register({ fetch_event_types: ['subscription'], include_subscribers: value });
    t.same(registered.body.subscriptions[0].subscribers, [1, ann.userId], `POST /register ${value}`);
    const listed = await owner.get('/users/me/subscriptions', { include_subscribers: value });
    t.same(listed.body.subscriptions[0].subscribers, [1, ann.userId], `GET /users/me/subscriptions ${value}`);
  }
  t.equal((await owner.get('/users/me/subscriptions', { include_subscribers: 'some' })).status, 400);
});
