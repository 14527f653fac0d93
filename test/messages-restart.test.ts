import { rmSync } from 'node:fs';
import t from 'tap';
import { startChild } from './helpers/child.ts';
import { channel, sendDirect, sendToChannel } from './helpers/messages.ts';
import { startTestServer, tempDir, type ApiClient } from './helpers/server.ts';

const NARROWS: unknown[][] = [
  [], [['channel', 'general']], [['channel', 'general'], ['topic', 'moved']], [['is', 'dm']], [['is', 'starred']],
  [['is', 'unread']], [['is', 'mentioned']], [['search', 'plan']], [['has', 'reaction']],
];

/** Everything a user can read about messages, to compare before and after a restart. */
async function everything(api: ApiClient) {
  const out: unknown[] = [];
  for (const narrow of NARROWS) out.push((await api.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow })).body);
  out.push((await api.post('/register', { fetch_event_types: ['message', 'update_message_flags', 'starred_messages', 'stream'] })).body);
  return out.map((body) => {
    const { queue_id: _q, last_event_id: _l, server_generation: _g, ...rest } = body as Record<string, unknown>;
    // Channel activity fields depend on the time of the request, not on the stored state.
    return JSON.parse(JSON.stringify(rest, (key, value) => (key === 'is_recently_active' || key === 'stream_weekly_traffic' ? undefined : value)));
  });
}

t.test('messages, edits, reactions and flags survive a graceful restart', async (t) => {
  const first = await startTestServer(t);
  const ann = await first.api.createUser('ann@example.com', 'Ann');
  const annApi = () => first.api.as(ann);
  const general = await channel(first.api, 'general', [1, ann.userId]);
  await channel(first.api, 'secret', [1], { invite_only: true });
  const ids = [
    await sendToChannel(first.api, general, 'plans', 'the plan @**Ann**'),
    await sendToChannel(annApi(), general, 'plans', 'a better plan'),
    await sendToChannel(first.api, 'secret', 'hidden', 'secret plan'),
    await sendDirect(annApi(), [1], 'direct plan'),
  ];
  await first.api.patch(`/messages/${ids[0]}`, { topic: 'moved', propagate_mode: 'change_all', send_notification_to_new_thread: false });
  await annApi().patch(`/messages/${ids[1]}`, { content: 'the best plan' });
  await annApi().post(`/messages/${ids[0]}/reactions`, { emoji_name: 'tada' });
  await annApi().post('/messages/flags', { messages: [ids[0]], op: 'add', flag: 'starred' });
  await first.api.post('/messages/flags', { messages: [ids[3]], op: 'add', flag: 'read' });
  const doomed = await sendToChannel(first.api, general, 'moved', 'to delete');
  await first.api.delete(`/messages/${doomed}`);
  const before = { owner: await everything(first.api), ann: await everything(annApi()) };
  const count = (view: unknown[], at: number) => (view[at] as { messages: unknown[] }).messages.length;
  t.same([count(before.owner, 0), count(before.ann, 0), count(before.ann, 4)], [4, 3, 1], 'the views compared hold the messages');
  t.match(before.ann[NARROWS.length], { max_message_id: ids[3], starred_messages: [ids[0]] });
  await first.stop();

  const second = await startTestServer(t, { dataDir: first.dataDir });
  const annAgain = second.api.as(ann);
  t.same(await everything(second.api), before.owner, "the owner's view is the same");
  t.same(await everything(annAgain), before.ann, "Ann's view is the same");
  const next = await sendDirect(second.api, [ann.userId], 'after');
  t.equal(next, doomed + 1, 'ids continue after the deleted one');
  const [a, b] = [(await annAgain.get(`/messages/${next}`)).body.message, (await annAgain.get(`/messages/${ids[3]}`)).body.message];
  t.equal(a.recipient_id, b.recipient_id, 'the conversation keeps its recipient id');
  t.same((await annAgain.get(`/messages/${ids[2]}`)).body.msg, 'Invalid message(s)', 'and the private channel stays private');
});

t.test('acknowledged messages survive SIGKILL (log replay)', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const server = await startChild(dataDir);
  const general = await channel(server.api, 'general', [1]);
  const sent = await Promise.all(Array.from({ length: 8 }, (_, i) => sendToChannel(server.api, general, `t${i % 2}`, `message ${i}`)));
  await server.api.patch(`/messages/${sent[0]}`, { content: 'edited' });
  await server.api.post(`/messages/${sent[1]}/reactions`, { emoji_name: 'eyes' });
  await server.api.patch(`/messages/${sent[2]}`, { topic: 'renamed', send_notification_to_new_thread: false });
  const before = await everything(server.api);
  t.equal((before[0] as { messages: unknown[] }).messages.length, 8);
  server.process.kill('SIGKILL');
  await server.exited;
  const again = await startChild(dataDir);
  t.teardown(() => void again.process.kill('SIGKILL'));
  t.same(await everything(again.api), before, 'replaying the log gives the same messages');
  t.same((await again.api.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [['topic', 'renamed']] })).body.messages.map((m: { id: number }) => m.id), [sent[2]]);
  t.equal(await sendToChannel(again.api, general, 't', 'next'), Math.max(...sent) + 1);
});
