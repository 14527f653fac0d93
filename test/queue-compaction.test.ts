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

t.test('merged at size: overlapping batches in any order arrive as one event, ascending, each message once', async (t) => {
  const { api, server } = await startTestServer(t, { rateLimit: null });
  const general = await channel(api, 'general', [1]);
  for (let start = 0; start < 3000; start += 500) {
    await Promise.all(Array.from({ length: 500 }, (_, i) => server.runtime.execute(1, {
      type: 'message.send', caller: { kind: 'user', userId: 1 }, kind: 'channel', to: general, topic: 't', content: `m ${start + i}`, client: 'API',
    })));
  }
  const sent = ((await api.get('/messages', { anchor: 'oldest', num_before: 0, num_after: 5000, narrow: [] })).body.messages as { id: number }[]).map((m) => m.id);
  t.equal(sent.length, 3000);
  const { queueId } = await api.register({ event_types: ['update_message_flags'] });
  // 30 batches of 150 overlapping by 50, given newest first and out of order; each batch's first 50 unstarred
  // after it, so that the next overlapping batch stars them again: the adds hold them twice.
  const batches = Array.from({ length: 30 }, (_, i) => sent.slice(Math.max(0, i * 100 - 50), i * 100 + 100));
  const unstarred = new Set<number>();
  for (const i of [...batches.keys()].sort((a, b) => ((a * 7) % 30) - ((b * 7) % 30))) {
    t.equal((await flags(api, [...batches[i]!].reverse(), 'add', 'starred')).status, 200);
    for (const id of batches[i]!.slice(0, 50)) unstarred.add(id);
    t.equal((await flags(api, batches[i]!.slice(0, 50), 'remove', 'starred')).status, 200);
  }
  const events = (await api.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).body.events as { op: string; messages: number[] }[];
  t.same(events.map((event) => event.op), ['add', 'remove'], 'one event of each');
  t.same(events[0]!.messages, sent, 'the adds: every message once, ascending');
  t.same(events[1]!.messages, [...unstarred].sort((a, b) => a - b), 'the removes: each once, ascending');
});
