import t from 'tap';
import { startTestServer } from './helpers/server.ts';
import { channel, sendToChannel } from './helpers/messages.ts';

type Message = { id: number; sender_full_name: string; content: string; subject: string };

t.test('moves are announced by the notification bot in the old and new threads, as asked', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const general = await channel(api, 'general', [1, ann.userId]);
  const topic = async (name: string): Promise<Message[]> =>
    (await api.get('/messages', { anchor: 'newest', num_before: 50, num_after: 0, apply_markdown: false,
      narrow: [{ operator: 'channel', operand: general }, { operator: 'topic', operand: name }] })).body.messages;
  const first = await sendToChannel(api, general, 'old', 'one');
  await sendToChannel(api, general, 'old', 'two');
  const { queueId } = await api.as(ann).register({ event_types: ['message'] });

  t.equal((await api.patch(`/messages/${first}`, { topic: 'new', propagate_mode: 'change_all' })).status, 200);
  const moved = await topic('new');
  t.same(moved.map((m) => m.content), ['one', 'two', 'This topic was moved here from #**general>old** by @_**Owner|1**.'],
    'by default only the new thread is told');
  t.equal(moved.at(-1)!.sender_full_name, 'Notification Bot');
  t.same(await topic('old'), [], 'the old thread stays empty');
  const events = (await api.as(ann).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).body.events;
  t.match(events, [{ type: 'message', message: { sender_full_name: 'Notification Bot', subject: 'new' } }], 'subscribers get the notice');

  await api.patch(`/messages/${first}`, { topic: 'third', propagate_mode: 'change_one', send_notification_to_old_thread: true });
  t.same((await topic('new')).at(-1)!.content, 'A message was moved from this topic to #**general>third** by @_**Owner|1**.');
  t.same((await topic('third')).map((m) => m.content), ['one', 'A message was moved here from #**general>new** by @_**Owner|1**.']);

  const before = (await topic('third')).map((m) => m.content);
  await api.patch(`/messages/${first}`, { topic: '✔ third', propagate_mode: 'change_all', send_notification_to_old_thread: true });
  t.same((await topic('✔ third')).map((m) => m.content), before, 'resolving a topic announces nothing');
  await api.patch(`/messages/${first}`, { topic: 'quiet', propagate_mode: 'change_all', send_notification_to_new_thread: false });
  t.same((await topic('quiet')).map((m) => m.content), before, 'no notice when neither thread is to be told');
  const registered = await api.register({ fetch_event_types: ['realm_user'] });
  t.match(registered.body.cross_realm_bots, [{ full_name: 'Notification Bot', is_system_bot: true }]);
});
