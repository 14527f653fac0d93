import { rmSync } from 'node:fs';
import t from 'tap';
import type { EditHistoryEntry } from '../actors/realm/messages/state.ts';
import { topicKey } from '../actors/realm/messages/state.ts';
import { verifyRealm } from '../actors/verify.ts';
import { channel, drain, fetchIds, ofType, sendToChannel } from './helpers/messages.ts';
import { startTestServer, tempDir } from './helpers/server.ts';

/** A topic of this many messages, moved whole: its bodies are read over many turns of the event loop. */
const TOPIC = 20_000;

t.test('a move of a large topic reads its bodies between other requests, and moves exactly as before', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { rateLimit: null, dataDir });
  const { api, server } = first;
  const runtime = server.runtime;
  const general = await channel(api, 'general', [1]);
  await sendToChannel(api, general, 'elsewhere', 'not moved');
  for (let n = 0; n < TOPIC; n += 1000) {
    await Promise.all(Array.from({ length: 1000 }, (_, i) => runtime.execute(1, {
      type: 'message.send', caller: { kind: 'user', userId: 1 }, kind: 'channel', to: general, topic: 'big', content: `message ${n + i} of the big topic`, client: 'API',
    })));
  }
  const state = runtime.realmState(1);
  const ids = [...state.messages.byTopic.get(topicKey(general, 'big'))!];
  // Some with an edit history of their own already, stored with their bodies.
  for (const id of [ids[0]!, ids[7_000]!]) t.equal((await api.patch(`/messages/${id}`, { content: `edited ${id}` })).status, 200);
  await runtime.snapshot();
  t.ok(ids.every((id) => state.messages.byId.get(id)!.body === null), 'the bodies of the topic are only in the data directory');
  // A few sent since, their bodies in memory.
  for (let i = 0; i < 3; i++) ids.push(await sendToChannel(api, general, 'big', `late ${i}`));
  const before = new Map(ids.map((id) => {
    const body = state.messages.bodies.peek(state.messages.byId.get(id)!);
    return [id, { content: body.content, history: body.editHistory }] as const;
  }));
  const channelIds = [...state.messages.byChannel.get(general)!];
  const { queueId } = await api.register({ event_types: ['update_message'] });

  let moving = true;
  const move = api.patch(`/messages/${ids[0]}`, { topic: 'moved', propagate_mode: 'change_all', send_notification_to_old_thread: false, send_notification_to_new_thread: false })
    .finally(() => (moving = false));
  // An edit of one of its messages while its bodies are read: whichever is applied first, both are kept.
  const edited = ids[100]!;
  const edit = api.patch(`/messages/${edited}`, { content: 'edited while moving' });
  let answered = 0;
  let late: number | undefined;
  while (moving) {
    t.equal((await api.get('/users/me')).status, 200);
    if (moving) answered++;
    // A message sent to the topic while its bodies are read: the move decided again at its apply takes it along.
    if (moving && late === undefined) {
      late = await sendToChannel(api, general, 'big', 'sent while moving');
      t.ok(moving, 'sent before the move was applied');
    }
  }
  t.equal((await move).status, 200);
  t.equal((await edit).status, 200);
  t.ok(late !== undefined, 'a message was sent while the bodies were read');
  const movedIds = [...ids, late!];
  channelIds.push(late!);
  // Read in the turn that applied the move, the bodies held every other request (one at most slipped in, before
  // the move arrived or while it was committed).
  t.ok(answered >= 3, `GET /users/me answered ${answered} times while ${ids.length} messages moved`);

  const movedEvent = ofType(await drain(api, queueId), 'update_message').find((event) => event.subject === 'moved')!;
  t.same(movedEvent.message_ids, movedIds, 'the event names every message of the topic, the one sent meanwhile too');
  t.match(movedEvent, { orig_subject: 'big', propagate_mode: 'change_all', stream_id: general });
  t.notOk(state.messages.byTopic.has(topicKey(general, 'big')), 'the old topic is empty');
  t.same([...state.messages.byTopic.get(topicKey(general, 'moved'))!], movedIds, 'the new topic holds them, in order');
  t.same([...state.messages.byChannel.get(general)!], channelIds, 'the channel holds the same messages');
  t.same(verifyRealm(state), [], 'the indexes agree with the messages');

  const movedAt = movedEvent.edit_timestamp as number;
  const expected = (id: number) => {
    const { content, history } = before.get(id)!;
    const entry: EditHistoryEntry = { userId: 1, timestamp: movedAt, prevTopic: 'big', topic: 'moved' };
    return { content, history: [entry, ...history] };
  };
  const wrong = ids.filter((id) => {
    if (id === edited) return false;
    const body = state.messages.bodies.peek(state.messages.byId.get(id)!);
    return JSON.stringify({ content: body.content, history: body.editHistory }) !== JSON.stringify(expected(id));
  });
  t.same(wrong, [], 'every moved message keeps its content and history, the move on top');
  const editedBody = state.messages.bodies.peek(state.messages.byId.get(edited)!);
  t.equal(editedBody.content, 'edited while moving');
  t.same(editedBody.editHistory.map((entry) => (entry.prevTopic ? 'move' : 'edit')).sort(), ['edit', 'move'], 'the message edited meanwhile has both entries');

  const shown = [ids[0]!, ids[7_000]!, edited, ids.at(-1)!];
  const histories = async (client: typeof api) => Promise.all(shown.map(async (id) => (await client.get(`/messages/${id}/history`)).body));
  const live = await histories(api);
  const liveIds = await fetchIds(api, [{ operator: 'channel', operand: 'general' }, { operator: 'topic', operand: 'moved' }], { anchor: 'oldest', num_before: 0, num_after: 4000 });
  await first.stop();
  const second = await startTestServer(t, { rateLimit: null, dataDir });
  t.same(await histories(second.api), live, 'the same histories after a restart');
  t.same(await fetchIds(second.api, [{ operator: 'channel', operand: 'general' }, { operator: 'topic', operand: 'moved' }], { anchor: 'oldest', num_before: 0, num_after: 4000 }), liveIds);
});
