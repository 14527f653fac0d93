import t from 'tap';
import { channel, sendToChannel } from './helpers/messages.ts';
import { startTestServer, type ApiClient } from './helpers/server.ts';

// A channel of thousands of topics, a restart, and the messages fetched whole for each check.
t.setTimeout(600_000);

type Topic = { name: string; max_id: number };

/** What GET /users/me/{stream_id}/topics must say, worked out from the channel's messages: per topic, its newest one. */
async function expectedTopics(api: ApiClient, channelId: number): Promise<Topic[]> {
  const { body } = await api.get('/messages', { anchor: 'newest', num_before: 5000, num_after: 0, narrow: [['channel', channelId]], apply_markdown: false });
  const newest = new Map<string, Topic>();
  for (const message of body.messages as { id: number; subject: string }[]) {
    const key = message.subject.toLowerCase();
    if ((newest.get(key)?.max_id ?? 0) < message.id) newest.set(key, { name: message.subject, max_id: message.id });
  }
  return [...newest.values()].sort((a, b) => b.max_id - a.max_id);
}

const topicsOf = async (api: ApiClient, channelId: number): Promise<Topic[]> => (await api.get(`/users/me/${channelId}/topics`)).body.topics;

async function ok(result: Promise<{ status: number; body: unknown }>) {
  const { status, body } = await result;
  if (status !== 200) throw new Error(JSON.stringify(body));
}

t.test("a channel's topics stay exact through sends, edits, moves, deletions, snapshots and a restart, most lists not in memory", async (t) => {
  // A key cache of 16: nearly every topic's id list is read back from the data directory.
  const first = await startTestServer(t, { rateLimit: null, messageKeyCache: 16 });
  const { api, dataDir } = first;
  const big = await channel(api, 'big', [1]);
  const other = await channel(api, 'other', [1]);
  // More topics than a summary reads in one turn (newest-ids.ts, 2,000).
  const topics = 2500;
  const ids: number[] = [];
  for (let start = 0; start < topics; start += 100) {
    ids.push(...(await Promise.all(Array.from({ length: 100 }, (_, i) => sendToChannel(api, big, `topic ${start + i}`, `message ${start + i}`)))));
  }
  const seconds: number[] = [];
  for (const n of [3, 5, 8, 13]) seconds.push(await sendToChannel(api, big, `topic ${n}`, 'a second message'));
  await sendToChannel(api, other, 'elsewhere', 'not in big');
  await first.server.runtime.snapshot();

  const [a, b] = await Promise.all([topicsOf(api, big), topicsOf(api, big)]);
  const expected = await expectedTopics(api, big);
  t.equal(expected.length, topics);
  t.same(a, expected, 'the first ask, made a slice at a time');
  t.same(b, expected, 'an ask made while the first was being made');
  t.same(await topicsOf(api, other), await expectedTopics(api, other), 'another channel');

  const check = async (what: string) => t.same(await topicsOf(api, big), await expectedTopics(api, big), what);
  await sendToChannel(api, big, 'topic 5', 'newest now');
  await sendToChannel(api, big, 'Brand new', 'a new topic');
  await sendToChannel(api, big, 'TOPIC 7', 'the same topic, written otherwise');
  await check('after sends');
  await ok(api.delete(`/messages/${ids[9]}`));
  await ok(api.delete(`/messages/${ids[11]}`));
  await ok(api.delete(`/messages/${seconds[0]}`));
  await sendToChannel(api, big, 'topic 15', 'newest of its topic');
  // Changed, then saved by a snapshot, before the next ask: no longer among the index's changed keys.
  await first.server.runtime.snapshot();
  await check('after deleting a topic’s only message and another’s newest, and a send, then a snapshot');
  await ok(api.patch(`/messages/${ids[12]}`, { stream_id: other, propagate_mode: 'change_all', send_notification_to_new_thread: false, send_notification_to_old_thread: false }));
  await ok(api.patch(`/messages/${ids[13]}`, { topic: 'renamed 13', propagate_mode: 'change_all', send_notification_to_new_thread: false, send_notification_to_old_thread: false }));
  await ok(api.post(`/streams/${big}/delete_topic`, { topic_name: 'topic 14' }));
  await check('after a move to another channel, a rename and a deleted topic');
  t.same((await topicsOf(api, other)).map((topic) => topic.name).sort(), ['elsewhere', 'topic 12'], 'the moved topic is in the other channel');
  await first.server.runtime.snapshot();
  await sendToChannel(api, big, 'topic 100', 'after the snapshot');
  await check('after a snapshot and a send');
  const before = await topicsOf(api, big);

  await first.stop();
  const second = await startTestServer(t, { rateLimit: null, messageKeyCache: 16, dataDir });
  t.same(await topicsOf(second.api, big), before, 'after a restart, read from the data directory');
  await sendToChannel(second.api, big, 'topic 200', 'after the restart');
  t.same(await topicsOf(second.api, big), await expectedTopics(second.api, big), 'and a send after it');
});

t.test("a private channel's protected history: a subscriber sees the topics of the messages it received, at their newest it holds", async (t) => {
  const { api } = await startTestServer(t, { rateLimit: null });
  const ann = await api.createUser('ann@example.com', 'Ann');
  const secret = await channel(api, 'secret', [1], { invite_only: true, history_public_to_subscribers: false });
  await sendToChannel(api, secret, 'before', 'ann never sees this');
  await sendToChannel(api, secret, 'shared', 'nor this');
  await ok(api.post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], principals: [ann.userId] }));
  const shared = await sendToChannel(api, secret, 'shared', 'ann sees this');
  const after = await sendToChannel(api, secret, 'after', 'and this');
  t.same(await topicsOf(api.as(ann), secret), [{ name: 'after', max_id: after }, { name: 'shared', max_id: shared }]);
  t.same((await topicsOf(api, secret)).map((topic) => topic.name), ['after', 'shared', 'before'], 'the owner, subscribed from the start, sees them all');
});
