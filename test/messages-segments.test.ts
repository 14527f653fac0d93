import { SMALL_SEGMENT_BITS } from './helpers/small-segments.ts';
import { cpSync, rmSync } from 'node:fs';
import t from 'tap';
import { channel, sendDirect, sendToChannel } from './helpers/messages.ts';
import { startTestServer, tempDir, type ApiClient, type TestServer } from './helpers/server.ts';
import { SEGMENT_BITS, SEGMENT_SIZE } from '../actors/realm/messages/lazy-map.ts';
import { keyIndexes, topicKey, type MessageStore } from '../actors/realm/messages/state.ts';
import { StoredIdSet } from '../actors/realm/messages/stored-id-set.ts';
import { verifyRealm } from '../actors/verify.ts';

// The message indexes are kept in segments of 2^8 ids here (helpers/small-segments.ts): a history of 2,000
// messages spans eight, and a restart leaves every one of them on disk until a request needs it.

t.setTimeout(600_000);

const COUNT = 2000;
/** ids of stored segments each id list index may keep in memory: about two segments' worth */
const SEGMENT_CACHE = 2 * SEGMENT_SIZE;

/** A history over eight segments: topics `a` and `b` in general, every tenth message a direct one, every 25th in `other`. */
async function history(api: ApiClient, ann: ApiClient): Promise<number[]> {
  const ids: number[] = [];
  for (let n = 0; n < COUNT; n += 100) {
    const batch = Array.from({ length: 100 }, (_, i) => {
      const k = n + i;
      if (k % 10 === 3) return sendDirect(ann, [1], `dm ${k}`);
      if (k % 25 === 7) return sendToChannel(api, 'other', 'elsewhere', `other ${k}`);
      return sendToChannel(k % 3 === 0 ? ann : api, 'general', k % 2 === 0 ? 'a' : 'b', `note ${k}`);
    });
    // In order: each batch's ids follow the previous batch's.
    ids.push(...(await Promise.all(batch)));
  }
  return ids;
}

const NARROWS: unknown[][] = [
  [], [['channel', 'general']], [['channel', 'general'], ['topic', 'a']], [['channel', 'general'], ['topic', 'b']],
  [['channel', 'other']], [['dm', 'ann@example.com']], [['is', 'dm']], [['is', 'starred']], [['is', 'unread']],
  [['channel', 'general'], ['topic', 'moved']], [['sender', 'ann@example.com']],
];

/** Windows of every narrow: the newest and oldest, and around anchors on each side of segment boundaries. */
async function windows(api: ApiClient, ids: readonly number[]) {
  const anchors: (number | string)[] = ['newest', 'oldest', 'first_unread'];
  for (let boundary = SEGMENT_SIZE; boundary < ids[ids.length - 1]!; boundary += 3 * SEGMENT_SIZE) anchors.push(boundary - 1, boundary);
  const out: unknown[] = [];
  for (const narrow of NARROWS) {
    for (const anchor of anchors) {
      const { status, body } = await api.get('/messages', { anchor, num_before: 30, num_after: 30, narrow });
      if (status !== 200) throw new Error(`${JSON.stringify(narrow)} at ${anchor}: ${JSON.stringify(body)}`);
      out.push([narrow, anchor, body.messages.map((m: { id: number; flags: string[]; content: string; subject: string }) => [m.id, m.subject, m.content, m.flags]), body.found_oldest, body.found_newest, body.found_anchor]);
    }
  }
  const { body } = await api.register({ fetch_event_types: ['message', 'update_message_flags', 'recent_private_conversations', 'subscription'] });
  out.push(body.unread_msgs, body.max_message_id, body.recent_private_conversations);
  out.push(body.subscriptions.map((s: { name: string; stream_weekly_traffic: number | null }) => [s.name, s.stream_weekly_traffic]));
  for (const id of [await streamId(api, 'general'), await streamId(api, 'other')]) out.push((await api.get(`/users/me/${id}/topics`)).body);
  return out;
}

const streamId = async (api: ApiClient, name: string) => (await api.get('/get_stream_id', { stream: name })).body.stream_id as number;

/** Sends, edits, moves and flags over segment boundaries, most of the history cold. */
async function change(api: ApiClient, ids: readonly number[]) {
  let step = 0;
  const ok = (result: { status: number; body: unknown }) => {
    step++;
    if (result.status !== 200) throw new Error(`change ${step}: ${JSON.stringify(result.body)}`);
  };
  ok(await api.post('/messages', { type: 'stream', to: 'general', topic: 'a', content: 'a send after the restart' }));
  ok(await api.patch(`/messages/${ids[5]}`, { content: 'rewritten: the first segment' }));
  ok(await api.patch(`/messages/${ids[1100]}`, { content: 'rewritten: a middle segment' }));
  // `b` has messages in every segment: a part of it moves to another channel, then the rest is renamed.
  ok(await api.patch(`/messages/${ids[1501]}`, { stream_id: await streamId(api, 'other'), propagate_mode: 'change_later', send_notification_to_new_thread: false, send_notification_to_old_thread: false }));
  ok(await api.patch(`/messages/${ids[1]}`, { topic: 'moved', propagate_mode: 'change_all', send_notification_to_new_thread: false, send_notification_to_old_thread: false }));
  ok(await api.delete(`/messages/${ids[950]}`));
  ok(await api.post('/messages/flags', { messages: [ids[6], ids[250], ids[256], ids[1300], ids[1998]], op: 'add', flag: 'starred' }));
  ok(await api.post('/messages/flags', { messages: ids.slice(200, 900), op: 'add', flag: 'read' }));
  ok(await api.post('/mark_topic_as_read', { stream_id: await streamId(api, 'general'), topic_name: 'a' }));
  ok(await api.post('/messages/flags', { messages: [ids[210], ids[700]], op: 'remove', flag: 'read' }));
}

/** Segments of the channel, topic and conversation lists in memory, and their ids. */
function residentLists(store: MessageStore) {
  const lists = keyIndexes(store).filter(([code]) => code === 'c' || code === 't' || code === 'd');
  return lists.map(([, index]) => (index as { residentSegments: { segments: number; ids: number } }).residentSegments);
}

const sum = (counts: { segments: number; ids: number }[]) => counts.reduce((total, count) => ({ segments: total.segments + count.segments, ids: total.ids + count.ids }), { segments: 0, ids: 0 });

t.test('a restart with a cold history reads only the segments a request needs, and serves the same answers', async (t) => {
  t.equal(SEGMENT_BITS, SMALL_SEGMENT_BITS, 'small segments for this test');
  const first = await startTestServer(t, { rateLimit: null });
  const ann = await first.api.createUser('ann@example.com', 'Ann');
  await channel(first.api, 'general', [1, ann.userId]);
  await channel(first.api, 'other', [1, ann.userId]);
  const ids = await history(first.api, first.api.as(ann));
  t.ok(ids[ids.length - 1]! >> SEGMENT_BITS >= 7, 'the history spans eight segments');
  await first.stop();
  const copy = tempDir();
  t.teardown(() => rmSync(copy, { recursive: true, force: true }));
  cpSync(first.dataDir, copy, { recursive: true });

  // One server keeps about two segments per index; the other keeps every one it reads.
  const cold = await startTestServer(t, { dataDir: first.dataDir, messageSegmentCache: SEGMENT_CACHE, rateLimit: null });
  const store = () => cold.server.runtime.realmState(1).messages;
  t.same(sum(residentLists(store())), { segments: 0, ids: 0 }, 'a boot reads no segment');
  const general = await streamId(cold.api, 'general');
  const newest = await cold.api.get('/messages', { anchor: 'newest', num_before: 20, num_after: 0, narrow: [['channel', 'general']] });
  t.equal(newest.body.messages.length, 20);
  const channelList = store().byChannel.peek(general)!;
  t.ok(channelList.segmentNumbers().length >= 8, 'the channel is stored in eight segments');
  t.equal(channelList.residentSegments, 1, 'the newest 20 of the channel read its newest segment only');
  await sendToChannel(cold.api, 'general', 'a', 'the first send after the restart');
  t.equal(channelList.residentSegments, 1, 'a send appends to the newest segment');
  t.equal(store().byTopic.peek(topicKey(general, 'a'))!.residentSegments, 1, "and to the topic's");
  const annUnread = store().flags.unread.peek(ann.userId);
  t.ok(annUnread instanceof StoredIdSet && annUnread.pendingSegments >= 7, "and to Ann's unread messages: their newest segment read, not the others");
  const middle = await cold.api.get('/messages', { anchor: ids[1000], num_before: 10, num_after: 10, narrow: [['channel', 'general'], ['topic', 'b']] });
  t.equal(middle.body.messages.length, 20);
  t.ok(store().byTopic.peek(topicKey(general, 'b'))!.residentSegments <= 2, 'a window around an anchor reads the segments around it');
  // Ann's window in a segment no lookup has reached: its ids stay as stored, and her unread flags read a part of one.
  const anchor = ids[1300]!;
  const inSegment = ids.filter((id, k) => k % 10 !== 3 && k % 25 !== 7 && id >> SEGMENT_BITS === anchor >> SEGMENT_BITS).length;
  const channelsBefore = store().byChannel.residentSegments;
  const annSet = annUnread as StoredIdSet;
  const pendingBefore = annSet.pendingSegments;
  const annWindow = await cold.api.as(ann).get('/messages', { anchor, num_before: 5, num_after: 5, narrow: [['channel', 'general']] });
  t.equal(annWindow.body.messages.length, 11);
  t.ok(annWindow.body.messages.some((m: { flags: string[] }) => !m.flags.includes('read')), 'with her unread flags');
  const channels = store().byChannel.residentSegments;
  t.equal(channels.segments, channelsBefore.segments + 1, 'the window read one more segment of the channel');
  t.ok(channels.ids - channelsBefore.ids < inSegment, `kept as stored: it weighs ${channels.ids - channelsBefore.ids} in the index's bound, not its ${inSegment} ids`);
  t.equal(annSet.pendingSegments, pendingBefore, 'her unread set read no segment whole for the flags');

  // What the history says the channel holds, against a walk of every segment of it.
  const generalIds = ids.filter((_, k) => k % 10 !== 3 && k % 25 !== 7);
  const all = await cold.api.get('/messages', { anchor: 'newest', num_before: 5000, num_after: 0, narrow: [['channel', 'general']] });
  t.same(all.body.messages.map((m: { id: number }) => m.id).slice(0, -1), generalIds, 'the whole channel, read segment by segment, in order');
  const topicB = await cold.api.get('/messages', { anchor: ids[1001], num_before: 3, num_after: 3, narrow: [['channel', 'general'], ['topic', 'b']] });
  const b = ids.filter((_, k) => k % 10 !== 3 && k % 25 !== 7 && k % 2 === 1);
  const at = b.indexOf(ids[1001]!);
  t.same(topicB.body.messages.map((m: { id: number }) => m.id), b.slice(at - 3, at + 4), 'a window around an anchor, as the history says');

  const whole = await startTestServer(t, { dataDir: copy, rateLimit: null });
  // The send above, on the other server too.
  await sendToChannel(whole.api, 'general', 'a', 'the first send after the restart');
  t.same(await windows(cold.api, ids), await windows(whole.api, ids), 'every window is the same, read by segment');

  // One clock for both: the edits' timestamps are the same.
  const now = Date.now();
  cold.server.runtime.clock.now = () => now;
  whole.server.runtime.clock.now = () => now;
  await change(cold.api, ids);
  await change(whole.api, ids);
  const changed = await windows(whole.api, ids);
  t.same(await windows(cold.api, ids), changed, 'sends, edits, moves, deletions and flags give the same windows');
  t.ok([...store().byTopic.get(topicKey(general, 'moved'))!].length > 100, 'the moved topic spans the segments');

  const bound = (server: TestServer) => residentLists(server.server.runtime.realmState(1).messages).every(({ ids }) => ids <= SEGMENT_CACHE + SEGMENT_SIZE);
  await cold.server.runtime.snapshot();
  t.same(verifyRealm(cold.server.runtime.realmState(1)), [], 'a walk of every list finds the index sound');
  t.ok(bound(cold), `and leaves about two segments per index in memory (${JSON.stringify(residentLists(store()))})`);
  t.same(await windows(cold.api, ids), changed, 'the same after the snapshot let the changed segments go');
  t.ok(bound(cold), 'still bounded');
  await cold.stop();
  await whole.stop();

  const again = await startTestServer(t, { dataDir: first.dataDir, messageSegmentCache: SEGMENT_CACHE, rateLimit: null });
  t.same(sum(residentLists(again.server.runtime.realmState(1).messages)), { segments: 0, ids: 0 }, 'a restart reads no segment');
  t.same(await windows(again.api, ids), changed, 'the same after a restart');
  t.ok(bound(again), 'bounded');
  await again.stop();
});
