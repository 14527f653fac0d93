import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import t, { type Test } from 'tap';
import { childServers } from './helpers/child.ts';
import { channel, sendDirect, sendToChannel } from './helpers/messages.ts';
import { openRuntime } from './helpers/runtime.ts';
import { startTestServer, tempDir, type ApiClient } from './helpers/server.ts';
import { MESSAGE_CHUNK_KIND } from '../actors/realm/snapshot.ts';
import type { MessageChunkRecord } from '../actors/realm/messages/chunks.ts';
import { verifyRealm } from '../actors/verify.ts';

const NARROWS: unknown[][] = [
  [], [['channel', 'general']], [['channel', 'general'], ['topic', 'moved']], [['is', 'dm']], [['is', 'starred']],
  [['search', 'plan']], [['search', 'rewritten']], [['has', 'link']], [['has', 'image']], [['has', 'reaction']],
];

/** What users read of messages: every narrow (with search highlights), edit histories and raw contents. */
async function everything(api: ApiClient, ids: readonly number[]) {
  const out: unknown[] = [];
  for (const narrow of NARROWS) out.push((await api.get('/messages', { anchor: 'newest', num_before: 2000, num_after: 0, narrow })).body);
  for (const id of ids) {
    out.push((await api.get(`/messages/${id}/history`)).body);
    out.push((await api.get(`/messages/${id}`, { apply_markdown: false })).body);
  }
  return out;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Sends `count` messages to general, a hundred at a time, in topics of ten; returns their ids. */
async function history(api: ApiClient, count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let n = 0; n < count; n += 100) {
    const batch = Array.from({ length: Math.min(100, count - n) }, (_, i) => sendToChannel(api, 'general', `topic ${Math.floor((n + i) / 10)}`, `note ${n + i}: the plan, in **bold**`));
    ids.push(...(await Promise.all(batch)));
  }
  return ids;
}

/**
 * The data directory as the next boot loads it: the messages are in memory without their bodies, the chunk
 * records hold no text, and every body reads back from the store.
 */
async function coldStore(t: Test, dataDir: string, expect: Map<number, { content: string; edits: number }>) {
  const { store, runtime } = openRuntime(dataDir, { now: Date.now });
  try {
    const messages = runtime.realmState(1).messages;
    t.ok(messages.byId.size > 1000, `${messages.byId.size} messages loaded`);
    t.ok([...messages.byId.values()].every((message) => message.body === null), 'no message holds its body in memory after the boot');
    const chunks = [...store.readSnapshots()].filter((record) => record.kind === MESSAGE_CHUNK_KIND);
    t.ok(chunks.length > 0 && chunks.every((record) => (record.data as MessageChunkRecord).text === undefined), 'the chunk records carry no text');
    for (const [id, { content, edits }] of expect) {
      const body = messages.bodies.of(messages.byId.get(id)!);
      t.same([body.content, body.editHistory.length], [content, edits], `message ${id}: its content and edit history read from the store`);
    }
  } finally {
    await store.close();
  }
}

t.test('a restart with a cold history serves old messages, edits, moves, searches and deletions as before', async (t) => {
  const first = await startTestServer(t, { rateLimit: null });
  const ann = await first.api.createUser('ann@example.com', 'Ann');
  await channel(first.api, 'general', [1, ann.userId]);
  // Over a chunk of ids (MESSAGE_CHUNK_SIZE), so the snapshot writes two.
  const ids = await history(first.api, 2100);
  const linked = await sendToChannel(first.api, 'general', 'links', 'see https://example.com/plan');
  const pictured = await sendToChannel(first.api, 'general', 'links', 'see https://example.com/plan.png');
  const dm = await sendDirect(first.api.as(ann), [1], 'a direct plan');
  await first.api.patch(`/messages/${ids[3]}`, { content: 'rewritten once' });
  await first.api.patch(`/messages/${ids[3]}`, { content: 'rewritten twice' });
  await first.api.patch(`/messages/${ids[20]}`, { topic: 'moved', propagate_mode: 'change_later', send_notification_to_new_thread: false, send_notification_to_old_thread: false });
  await first.api.post(`/messages/${ids[5]}/reactions`, { emoji_name: 'tada' });
  await first.api.post('/messages/flags', { messages: [ids[6], dm], op: 'add', flag: 'starred' });
  await first.api.delete(`/messages/${ids[7]}`);
  const shown = [ids[0]!, ids[3]!, ids[20]!, ids[25]!, linked, dm];
  const before = await everything(first.api, shown);
  t.ok((before[1] as { messages: unknown[] }).messages.length >= 2000, 'the views compared hold the messages');
  t.match(before[6], { messages: [{ id: ids[3], match_content: /highlight/ }] }, 'the edited content is searched');
  t.match(before.slice(7, 9), [{ messages: [{ id: linked }, { id: pictured }] }, { messages: [{ id: pictured }] }], 'has:link and has:image find them');
  t.match(before[NARROWS.length + 2], { message_history: { length: 3 } }, 'the edit history has both edits');
  await first.stop();

  // A cache of eight bodies: nearly every body read by the views comes from the data directory.
  const second = await startTestServer(t, { dataDir: first.dataDir, messageBodyCache: 8, rateLimit: null });
  t.same(await everything(second.api, shown), before, 'every view is the same, read from a cold history');
  // Edits of a message whose body is on disk: the history keeps the older edits.
  const current = (await second.api.get(`/messages/${ids[3]}`)).body.raw_content;
  t.equal((await second.api.patch(`/messages/${ids[3]}`, { content: 'rewritten thrice', prev_content_sha256: sha256('stale') })).status, 400, 'a stale prev_content_sha256 is refused');
  t.equal((await second.api.patch(`/messages/${ids[3]}`, { content: 'rewritten thrice', prev_content_sha256: sha256(current) })).status, 200);
  const edited = (await second.api.get(`/messages/${ids[3]}/history`)).body.message_history;
  t.same(edited.map((entry: { content: string }) => entry.content), [`note 3: the plan, in **bold**`, 'rewritten once', 'rewritten twice', 'rewritten thrice']);
  t.match(edited[3], { prev_content: 'rewritten twice', prev_rendered_content: '<p>rewritten twice</p>' });
  t.same((await second.api.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [['search', 'thrice']] })).body.messages.map((m: { id: number }) => m.id), [ids[3]]);
  await second.api.delete(`/messages/${ids[8]}`);
  await second.stop();

  await coldStore(t, first.dataDir, new Map([
    [ids[0]!, { content: 'note 0: the plan, in **bold**', edits: 0 }],
    [ids[3]!, { content: 'rewritten thrice', edits: 3 }],
    [ids[20]!, { content: 'note 20: the plan, in **bold**', edits: 1 }],
  ]));
});

t.test('edits of a cold history survive SIGKILL: the replay reads the stored bodies', async (t) => {
  const dataDir = tempDir();
  const servers = childServers(t, [dataDir]);
  const first = await servers.start(dataDir);
  await channel(first.api, 'general', [1]);
  const ids = await history(first.api, 1500);
  // The final snapshot stores every body; the next boot leaves them on disk.
  await servers.stop(first);

  const second = await servers.start(dataDir);
  await second.api.patch(`/messages/${ids[1]}`, { content: 'after the snapshot' });
  await second.api.patch(`/messages/${ids[1]}`, { content: 'after the snapshot, again' });
  await second.api.patch(`/messages/${ids[30]}`, { topic: 'moved', propagate_mode: 'change_all', send_notification_to_new_thread: false, send_notification_to_old_thread: false });
  await second.api.delete(`/messages/${ids[2]}`);
  const fresh = await sendToChannel(second.api, 'general', 'moved', 'sent after the snapshot');
  const shown = [ids[1]!, ids[30]!, fresh];
  const before = await everything(second.api, shown);
  second.process.kill('SIGKILL');
  await second.exited;

  const third = await servers.start(dataDir, { CHAT_MESSAGE_BODY_CACHE: '4' });
  t.same(await everything(third.api, shown), before, 'the log replayed over the stored bodies gives the same views');
  t.same((await third.api.get(`/messages/${ids[2]}`)).body.msg, 'Invalid message(s)', 'the deleted message stays deleted');
  await servers.stop(third);

  await coldStore(t, dataDir, new Map([
    [ids[1]!, { content: 'after the snapshot, again', edits: 2 }],
    [ids[30]!, { content: 'note 30: the plan, in **bold**', edits: 1 }],
    [fresh, { content: 'sent after the snapshot', edits: 0 }],
  ]));
});

t.test('verify reports messages whose body the data directory lost', async (t) => {
  const server = await startTestServer(t, { rateLimit: null });
  await channel(server.api, 'general', [1]);
  const ids = await history(server.api, 1200);
  await server.stop();
  const damaged = openRuntime(server.dataDir, { now: Date.now });
  t.same(verifyRealm(damaged.runtime.realmState(1)), [], 'sound before');
  // The snapshot as it is, less two bodies.
  const lost = [ids[10]!, ids[11]!].map((messageId) => ({ realmId: 1, messageId, body: null }));
  await damaged.store.writeSnapshots(damaged.store.snapshotSeq(), [], [], false, lost);
  await damaged.store.close();
  const { store, runtime } = openRuntime(server.dataDir, { now: Date.now });
  t.teardown(() => store.close());
  t.same(verifyRealm(runtime.realmState(1)), [`realm 1: message ${ids[10]} has no stored body`, `realm 1: message ${ids[11]} has no stored body`]);
});
