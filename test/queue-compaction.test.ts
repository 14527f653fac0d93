import t from 'tap';
import { channel, sendToChannel } from './helpers/messages.ts';
import { startTestServer, type ApiClient } from './helpers/server.ts';

const flags = (api: ApiClient, messages: number[], op: string, flag: string) =>
  api.post('/messages/flags', { messages: JSON.stringify(messages), op, flag });

t.test('unacknowledged flag events of the same operation and flag are merged into the newest', async (t) => {
  const { api } = await startTestServer(t);
  const general = await channel(api, 'general', [1]);
  const [a, b, c] = [
    await sendToChannel(api, general, 't', 'a'),
    await sendToChannel(api, general, 't', 'b'),
    await sendToChannel(api, general, 't', 'c'),
  ];
  const { queueId } = await api.register({ event_types: ['update_message_flags'] });
  await flags(api, [b], 'add', 'starred');
  await flags(api, [a, c], 'add', 'starred');
  await flags(api, [c], 'remove', 'starred');
  await flags(api, [a], 'remove', 'read');
  await flags(api, [b], 'remove', 'read');
  await flags(api, [a], 'remove', 'starred');

  const polled = await api.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  const events = polled.body.events as { id: number; op: string; flag: string; messages: number[] }[];
  t.same(
    events.map(({ op, flag, messages }) => ({ op, flag, messages })),
    [
      { op: 'add', flag: 'starred', messages: [a, b, c] },
      { op: 'remove', flag: 'read', messages: [a] },
      { op: 'remove', flag: 'read', messages: [b] },
      { op: 'remove', flag: 'starred', messages: [a, c] },
    ],
    'adds merge, removes of starred merge, removes of read stay apart',
  );
  t.ok(events.every((event, i) => i === 0 || event.id > events[i - 1]!.id), 'ids still grow');

  // Once acknowledged, an event is not merged into: the next one stands alone.
  const newest = events.at(-1)!.id;
  await api.get('/events', { queue_id: queueId, last_event_id: newest, dont_block: true });
  await flags(api, [c], 'add', 'starred');
  const after = await api.get('/events', { queue_id: queueId, last_event_id: newest, dont_block: true });
  t.same(after.body.events.map((event: { messages: number[] }) => event.messages), [[c]]);
});

t.test('a flag event a poll has handed out is not merged into a later one, so that its id can still be acknowledged', async (t) => {
  const { api } = await startTestServer(t);
  const general = await channel(api, 'general', [1]);
  const [a, b] = [await sendToChannel(api, general, 't', 'a'), await sendToChannel(api, general, 't', 'b')];
  const { queueId } = await api.register({ event_types: ['update_message_flags'] });
  await flags(api, [a], 'add', 'starred');
  const first = (await api.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).body.events;
  t.equal(first.length, 1);
  await flags(api, [b], 'add', 'starred');
  const next = await api.get('/events', { queue_id: queueId, last_event_id: first[0].id, dont_block: true });
  t.equal(next.status, 200, 'the id handed out is acknowledged');
  t.same(next.body.events.map((event: { messages: number[] }) => event.messages), [[b]], 'the later event stands alone');
});
