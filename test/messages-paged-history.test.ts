import { cpSync, rmSync } from 'node:fs';
import t from 'tap';
import { childServers } from './helpers/child.ts';
import { channel, sendDirect, sendToChannel } from './helpers/messages.ts';
import { openRuntime } from './helpers/runtime.ts';
import { startTestServer, tempDir, type ApiClient, type TestServer } from './helpers/server.ts';
import { keyIndexes, MESSAGE_CHUNK_SIZE, type MessageStore } from '../actors/realm/messages/state.ts';
import { verifyRealm } from '../actors/verify.ts';

// Two servers and a history of thousands of messages per test, on a loaded machine.
t.setTimeout(600_000);

// Message metadata pages in by chunk (actors/realm/messages/paged.ts): with a cache of one chunk and a
// history of three, nearly every view, narrow, edit and flag change reads a chunk back from the data
// directory, evicting another.

const NARROWS: unknown[][] = [
  [], [['channel', 'general']], [['channel', 'general'], ['topic', 'spread']], [['channel', 'other']], [['is', 'dm']],
  [['dm', 'ann@example.com']], [['is', 'starred']], [['is', 'unread']], [['is', 'mentioned']], [['sender', 'ann@example.com']],
  [['search', 'plan']], [['search', 'rewritten']], [['has', 'link']], [['has', 'reaction']], [['topic', 'moved']],
];

/** What users read: every narrow, edit histories, raw contents, a registration's unread counts and the topics. */
async function everything(api: ApiClient, ids: readonly number[], channelIds: readonly number[]) {
  const out: unknown[] = [];
  for (const narrow of NARROWS) out.push((await api.get('/messages', { anchor: 'newest', num_before: 5000, num_after: 0, narrow })).body);
  for (const id of ids) {
    out.push((await api.get(`/messages/${id}/history`)).body);
    out.push((await api.get(`/messages/${id}`, { apply_markdown: false })).body);
  }
  const { body } = await api.register({ fetch_event_types: ['message', 'update_message_flags', 'starred_messages', 'recent_private_conversations'] });
  out.push(body.unread_msgs, body.starred_messages, body.max_message_id, body.recent_private_conversations);
  for (const id of channelIds) out.push((await api.get(`/users/me/${id}/topics`)).body);
  return out;
}

/**
 * Three chunks of history: topics of ten in general, a topic `spread` with a message every 200 ids, every
 * twentieth message a direct one from Ann mentioning the owner, every fiftieth in `other` with a link.
 */
async function history(api: ApiClient, ann: ApiClient, count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let n = 0; n < count; n += 100) {
    const batch = Array.from({ length: Math.min(100, count - n) }, (_, i) => {
      const k = n + i;
      if (k % 20 === 7) return sendDirect(ann, [1], `dm ${k}: @**Owner** the plan`);
      if (k % 50 === 11) return sendToChannel(api, 'other', `links ${k % 3}`, `link ${k}: https://example.com/${k}`);
      return sendToChannel(k % 20 === 3 ? ann : api, 'general', k % 200 === 0 ? 'spread' : `topic ${Math.floor(k / 10)}`, `note ${k}: the plan`);
    });
    ids.push(...(await Promise.all(batch)));
  }
  return ids;
}

/** Edits, moves, deletions, reactions and flags over every chunk of the history, most of it cold. */
async function changeOldMessages(api: ApiClient, ids: readonly number[]) {
  let step = 0;
  const ok = (result: { status: number; body: unknown }) => {
    step++;
    if (result.status !== 200) throw new Error(`change ${step}: ${JSON.stringify(result.body)}`);
  };
  ok(await api.patch(`/messages/${ids[1]}`, { content: 'rewritten: the first chunk' }));
  ok(await api.patch(`/messages/${ids[4100]}`, { content: 'rewritten: the last chunk' }));
  // `spread` has a message in every chunk: moved whole, then a part of it to another channel.
  ok(await api.patch(`/messages/${ids[200]}`, { topic: 'moved', propagate_mode: 'change_all', send_notification_to_new_thread: false, send_notification_to_old_thread: false }));
  ok(await api.patch(`/messages/${ids[2200]}`, { stream_id: await streamId(api, 'other'), propagate_mode: 'change_later', send_notification_to_new_thread: false, send_notification_to_old_thread: false }));
  ok(await api.delete(`/messages/${ids[2]}`));
  ok(await api.delete(`/messages/${ids[3001]}`));
  ok(await api.post(`/messages/${ids[5]}/reactions`, { emoji_name: 'tada' }));
  ok(await api.post(`/messages/${ids[3005]}/reactions`, { emoji_name: 'tada' }));
  ok(await api.post('/messages/flags', { messages: [ids[6], ids[2006], ids[4006], ids[27]], op: 'add', flag: 'starred' }));
  ok(await api.post('/messages/flags', { messages: ids.slice(10, 1500), op: 'add', flag: 'read' }));
  ok(await api.post('/messages/flags', { messages: [ids[47], ids[3047]], op: 'remove', flag: 'read' }));
}

const streamId = async (api: ApiClient, name: string) => (await api.get('/get_stream_id', { stream: name })).body.stream_id as number;

const resident = (server: TestServer) => server.server.runtime.realmState(1).messages.byId.residentChunks;

/** How many keys of the per-key indexes (channels, topics, conversations, flags, mentions) are in memory. */
function residentKeys(store: MessageStore): number {
  return keyIndexes(store).reduce((sum, [, index]) => sum + index.residentKeys, 0);
}

const COUNT = 4200;

t.test('with a cache of one chunk, every view, narrow, edit, move, deletion and flag works on a paged history', async (t) => {
  t.ok(COUNT > 2 * MESSAGE_CHUNK_SIZE, 'the history spans three chunks');
  const first = await startTestServer(t, { rateLimit: null });
  const ann = await first.api.createUser('ann@example.com', 'Ann');
  const general = await channel(first.api, 'general', [1, ann.userId]);
  const other = await channel(first.api, 'other', [1, ann.userId]);
  const ids = await history(first.api, first.api.as(ann), COUNT);
  const shown = [ids[1]!, ids[200]!, ids[2200]!, ids[4100]!, ids[7]!];
  const before = await everything(first.api, shown, [general, other]);
  await first.stop();

  // The same directory twice: one server pages with a cache of one chunk, the other keeps all three.
  const copy = tempDir();
  t.teardown(() => rmSync(copy, { recursive: true, force: true }));
  cpSync(first.dataDir, copy, { recursive: true });
  const paged = await startTestServer(t, { dataDir: first.dataDir, messageChunkCache: 1, messageKeyCache: 1, messageBodyCache: 8, rateLimit: null });
  t.equal(resident(paged), 0, 'the boot decoded no chunk');
  t.equal(residentKeys(paged.server.runtime.realmState(1).messages), 0, 'and read no index, flag or mention');
  t.same(await everything(paged.api, shown, [general, other]), before, 'every view is the same, paged');
  t.ok(resident(paged) <= 1, `one chunk stays decoded (${resident(paged)})`);
  const whole = await startTestServer(t, { dataDir: copy, rateLimit: null });

  // One clock for both: the edits' timestamps are the same.
  const now = Date.now();
  paged.server.runtime.clock.now = () => now;
  whole.server.runtime.clock.now = () => now;
  await changeOldMessages(paged.api, ids);
  await changeOldMessages(whole.api, ids);
  const changed = await everything(whole.api, shown, [general, other]);
  t.same(await everything(paged.api, shown, [general, other]), changed, 'the changes give the same views, paged or not');
  t.match(changed[NARROWS.length - 1], { messages: { length: 21 } }, 'the moved topic spans the chunks');
  await paged.server.runtime.snapshot();
  t.same(await everything(paged.api, shown, [general, other]), changed, 'and after a snapshot that lets the changed chunks go');
  t.ok(resident(paged) <= 1, `one chunk stays decoded after the snapshot (${resident(paged)})`);
  await paged.stop();
  await whole.stop();

  const again = await startTestServer(t, { dataDir: first.dataDir, messageChunkCache: 1, messageKeyCache: 1, messageBodyCache: 8, rateLimit: null });
  t.equal(residentKeys(again.server.runtime.realmState(1).messages), 0, 'a restart reads no index, flag or mention');
  t.same(await everything(again.api, shown, [general, other]), changed, 'the same after a restart');
  t.ok(keyIndexes(again.server.runtime.realmState(1).messages).every(([, index]) => index.residentKeys <= 1), 'one key per index stays in memory');
  t.same(verifyRealm(again.server.runtime.realmState(1)), [], 'verify finds the paged store sound');
  await again.stop();
  const { store, runtime } = openRuntime(first.dataDir, { now: Date.now });
  t.teardown(() => store.close());
  t.equal(runtime.realmState(1).messages.byId.residentChunks, 0, 'a boot decodes no chunk');
  t.equal(residentKeys(runtime.realmState(1).messages), 0, 'nor any index');
});

t.test('changes to paged-out chunks survive SIGKILL, with and without a snapshot between', async (t) => {
  const dataDir = tempDir();
  const servers = childServers(t, [dataDir]);
  const env = { CHAT_MESSAGE_CHUNK_CACHE: '1', CHAT_MESSAGE_KEY_CACHE: '1', CHAT_MESSAGE_BODY_CACHE: '4' };
  const first = await servers.start(dataDir, env);
  const ann = await first.api.createUser('ann@example.com', 'Ann');
  const general = await channel(first.api, 'general', [1, ann.userId]);
  const other = await channel(first.api, 'other', [1, ann.userId]);
  const ids = await history(first.api, first.api.as(ann), COUNT);
  await servers.stop(first);

  const second = await servers.start(dataDir, env);
  await changeOldMessages(second.api, ids);
  const shown = [ids[1]!, ids[200]!, ids[2200]!, ids[4100]!, ids[7]!];
  const before = await everything(second.api, shown, [general, other]);
  second.process.kill('SIGKILL');
  await second.exited;

  const third = await servers.start(dataDir, env);
  t.same(await everything(third.api, shown, [general, other]), before, 'the log replayed over paged chunks gives the same views');
  // Changed again, then killed: the boot's snapshot stored the first changes, the log holds these.
  await third.api.patch(`/messages/${ids[10]}`, { content: 'rewritten after the kill' });
  await third.api.post('/messages/flags', { messages: [ids[2010]], op: 'add', flag: 'starred' });
  const after = await everything(third.api, shown, [general, other]);
  third.process.kill('SIGKILL');
  await third.exited;

  const fourth = await servers.start(dataDir, env);
  t.same(await everything(fourth.api, shown, [general, other]), after, 'the same after the second kill');
  await servers.stop(fourth);
});
