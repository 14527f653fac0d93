import { rmSync } from 'node:fs';
import t from 'tap';
import { openRuntime, TEST_QUEUE_TIMINGS } from '../helpers/runtime.ts';
import type { RealmCommand } from '../../actors/realm/commands.ts';
import type { MessageStoreRecord } from '../../actors/realm/messages/state.ts';
// The runtime first: loading realm/state.ts before anything else trips an import cycle with groups/state.ts.
import { Runtime } from '../../actors/runtime.ts';
import { chunkOf, MESSAGE_CHUNK_SIZE } from '../../actors/realm/messages/state.ts';
import { chunkRecordId, MESSAGE_CHUNK_KIND } from '../../actors/realm/snapshot.ts';
import { chunkTuples, messagesOfChunk, type MessageChunkRecord } from '../../actors/realm/messages/chunks.ts';
import { ChunkRecordSlots } from '../../actors/realm/messages/chunk-slots.ts';
import { Role, realmToRecord, type RealmRecord } from '../../actors/realm/state.ts';
import { verifyRealm } from '../../actors/verify.ts';
import { IdList } from '../../actors/realm/messages/id-list.ts';
import { StoredSegment } from '../../actors/realm/messages/stored-segment.ts';
import { segmentOf } from '../../actors/realm/messages/lazy-map.ts';
import { FORMAT_VERSION } from '../../snapshots/codec.ts';
import { Store } from '../../snapshots/store.ts';
import { tempDir } from '../helpers/server.ts';

const now = Date.UTC(2026, 0, 1);
const clock = { now: () => now };
const as = (userId: number) => ({ kind: 'user', userId }) as const;
const open = (dir: string) => openRuntime(dir, clock);

/** A realm of three users in one channel, and `count` messages: mostly in topics, every seventh a direct one. */
async function realmWithMessages(runtime: Runtime, count: number, topicOf: (n: number) => string) {
  const { realmId } = await runtime.createRealm('', 'Test');
  const run = (command: RealmCommand) => runtime.execute(realmId, command);
  for (const [email, role] of [['owner@example.com', Role.owner], ['ann@example.com', Role.member], ['bob@example.com', Role.member]] as const) {
    await run({ type: 'user.create', caller: { kind: 'operator' }, email, fullName: email.split('@')[0]!, passwordHash: null, role });
  }
  const options = { inviteOnly: false, isWebPublic: false, messageRetentionDays: null, isDefault: false, permissions: {} };
  await run({ type: 'channel.subscribe', caller: as(1), channels: [{ name: 'general', description: '' }], principals: [1, 2, 3], options, authorizationErrorsFatal: true });
  const ids: number[] = [];
  // Sent in batches of a few hundred: one group commit each, as under load.
  for (let n = 0; n < count; n += 500) {
    const batch = Array.from({ length: Math.min(500, count - n) }, (_, i) => {
      const k = n + i;
      const command: RealmCommand = k % 7 === 3
        ? { type: 'message.send', caller: as(2), kind: 'direct', to: [1], content: `direct ${k}`, client: 'test' }
        : { type: 'message.send', caller: as(1 + (k % 3)), kind: 'channel', to: 'general', topic: topicOf(k), content: `message ${k} for @**ann**`, client: 'test' };
      return run(command);
    });
    for (const [change] of await Promise.all(batch)) if (change?.type === 'message.sent') ids.push(change.message.id);
  }
  return { realmId, run, ids };
}

/**
 * A realm record in a form that does not depend on how the store was built: holder lists shared by identity
 * differ between a live store and one loaded in chunks, and users come in flag maps in the order first seen.
 */
function canonical(record: RealmRecord) {
  const messages = record.messages!;
  const lists = messages.holderLists ?? [];
  const byUser = (a: [number, number[]], b: [number, number[]]) => a[0] - b[0];
  const flags = Object.fromEntries(Object.entries(messages.flags).map(([flag, entries]) => [flag, [...entries].sort(byUser)]));
  return {
    ...record,
    messages: {
      ...messages,
      holderLists: undefined,
      messages: messages.messages.map((message) => ({ ...message, userIds: typeof message.userIds === 'number' ? lists[message.userIds] : message.userIds })),
      flags: flags as MessageStoreRecord['flags'],
    },
  };
}

/** The message chunk records in the store: chunk index -> the log position of the snapshot that wrote it. */
function storedChunks(store: Store): Map<number, number> {
  const chunks = new Map<number, number>();
  for (const record of store.readSnapshots()) if (record.kind === MESSAGE_CHUNK_KIND) chunks.set(Number(record.id.split(':')[1]), record.seq);
  return chunks;
}

t.test('messages spanning several chunks survive restarts with edits, reactions, flags and deletions in old chunks', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const live = open(dir);
  // Four chunks, the last with about a hundred messages.
  const { realmId, run, ids } = await realmWithMessages(live.runtime, 3 * MESSAGE_CHUNK_SIZE + 100, (k) => `topic ${k % 5}`);
  const state = live.runtime.realmState(realmId);
  const firstChunk = chunkOf(ids[0]!);
  const lastChunk = chunkOf(ids.at(-1)!);
  t.ok(lastChunk - firstChunk >= 3, `the messages span chunks ${firstChunk} to ${lastChunk}`);

  await live.runtime.snapshot();
  const first = storedChunks(live.store);
  t.same([...first.keys()].sort((a, b) => a - b), Array.from({ length: lastChunk - firstChunk + 1 }, (_, i) => firstChunk + i), 'one record per chunk');

  // Changes in the oldest chunk and the next; the chunk after stays untouched; the newest loses every message.
  const inChunk = (chunk: number, nth: number) => ids.filter((id) => chunkOf(id) === chunk && state.messages.byId.get(id)!.recipient.kind === 'channel')[nth]!;
  const [a, b, c, d] = [inChunk(firstChunk, 1), inChunk(firstChunk, 2), inChunk(firstChunk + 1, 1), inChunk(firstChunk + 1, 2)];
  const sender = (id: number) => as(state.messages.byId.get(id)!.senderId);
  await run({ type: 'message.edit', caller: sender(a), messageId: a, content: 'edited, now for @**bob**', propagateMode: 'change_one' });
  await run({ type: 'message.edit', caller: as(1), messageId: c, topic: 'renamed', propagateMode: 'change_one' });
  await run({ type: 'reaction.add', caller: as(3), messageId: c, reaction: { emojiName: 'tada' } });
  await run({ type: 'message.flags', caller: as(2), messageIds: [a, d], op: 'add', flag: 'starred' });
  await run({ type: 'message.flags', caller: as(3), messageIds: ids.filter((id) => chunkOf(id) === firstChunk + 1 && state.messages.byId.get(id)!.recipient.kind === 'channel'), op: 'add', flag: 'read' });
  await run({ type: 'message.delete', caller: as(1), messageId: b });
  for (const id of ids.filter((id) => chunkOf(id) === lastChunk)) await run({ type: 'message.delete', caller: as(1), messageId: id });
  t.notOk(ids.some((id) => chunkOf(id) === lastChunk && state.messages.byId.has(id)), 'the newest chunk is empty');

  await live.runtime.snapshot();
  const second = storedChunks(live.store);
  t.equal(second.get(firstChunk + 2), first.get(firstChunk + 2), 'the untouched chunk was not written again');
  t.ok(second.get(firstChunk)! > first.get(firstChunk)! && second.get(firstChunk + 1)! > first.get(firstChunk + 1)!, 'the changed chunks were');
  t.notOk(second.has(lastChunk), "the emptied chunk's record is gone");

  // After the last snapshot, in the log only: an old chunk edited again, a star taken back, a message in the emptied chunk.
  await run({ type: 'message.edit', caller: sender(a), messageId: a, content: 'edited twice', propagateMode: 'change_one' });
  await run({ type: 'message.flags', caller: as(2), messageIds: [d], op: 'remove', flag: 'starred' });
  const [sent] = await run({ type: 'message.send', caller: as(1), kind: 'channel', to: 'general', topic: 'after', content: 'after the snapshot', client: 'test' });
  t.equal(chunkOf((sent as { message: { id: number } }).message.id), lastChunk, 'a new message in the emptied chunk');
  const expected = canonical(realmToRecord(state));
  t.same(verifyRealm(state), [], 'the live realm verifies');
  await live.store.close();

  const restored = open(dir);
  t.ok(restored.recovered.replayed > 0, 'the log tail was replayed');
  const again = restored.runtime.realmState(realmId);
  t.same(canonical(realmToRecord(again)), expected, 'snapshot chunks and log: the same messages and flags');
  t.same(verifyRealm(again), [], 'and the restored realm verifies (indexes included)');
  t.same(again.messages.bodies.of(again.messages.byId.get(a)!).editHistory.length, 2, 'both edits are in the history, once each');
  await restored.runtime.markRunning();
  t.ok(storedChunks(restored.store).has(lastChunk), "the boot's snapshot wrote the replayed chunk");
  await restored.store.close();

  const third = open(dir);
  t.equal(third.recovered.replayed, 0, 'nothing left to replay');
  const loaded = third.runtime.realmState(realmId);
  t.same(canonical(realmToRecord(loaded)), expected, 'snapshot chunks only: the same messages and flags');
  t.same(verifyRealm(loaded), []);
  const [next] = await third.runtime.execute(realmId, { type: 'message.send', caller: as(2), kind: 'direct', to: [1], content: 'next', client: 'test' });
  t.match(next, { message: { id: again.messages.nextId } }, 'ids continue');
  // What verify would say of a load that misplaced a message.
  const [someTopic, topicIds] = [...loaded.messages.byTopic].find(([, list]) => [...list].length > 1)!;
  // An id list keeps its ids in order: one read back out of order stands for a broken record.
  const swapped = [...topicIds];
  [swapped[0], swapped[1]] = [swapped[1]!, swapped[0]!];
  const misordered = IdList.stored([segmentOf(swapped[0]!)]);
  loaded.messages.byTopic.set(someTopic, misordered);
  misordered.source = { read: () => StoredSegment.ofIds(Int32Array.from(swapped)), used: () => {} };
  loaded.messages.byConversation.get([...loaded.messages.byConversation.keys()][0]!)!.add(ids[1]!);
  t.match(verifyRealm(loaded), [
    new RegExp(`topic index ${someTopic.split('\u0000')[0]}/.* is out of order`),
    /conversation index .* lists message \d+, which is missing or elsewhere/,
    /conversation index lists \d+ messages, expected \d+/,
  ], 'verify reports an index out of order or naming the wrong messages');
  await third.store.close();
});

t.test('chunk records read through fewer slots than chunks: a page whose slot another took reads its record again, a rewritten one too', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const live = open(dir);
  const { realmId, run, ids } = await realmWithMessages(live.runtime, 3 * MESSAGE_CHUNK_SIZE, (k) => `topic ${k % 5}`);
  await live.runtime.snapshot();
  const chunks = [...new Set(ids.map(chunkOf))];
  t.ok(chunks.length >= 3, `${chunks.length} chunks, for 2 slots`);
  const bytesOf = (chunk: number) => () => live.store.readSnapshotBytes(MESSAGE_CHUNK_KIND, chunkRecordId(realmId, chunk));
  // What the page read from a copy of its record built, as the store read chunks before the slots.
  const copied = (chunk: number) => messagesOfChunk(live.store.readSnapshot(MESSAGE_CHUNK_KIND, chunkRecordId(realmId, chunk))!.data as MessageChunkRecord, chunk * MESSAGE_CHUNK_SIZE);
  const slots = new ChunkRecordSlots(2);
  const pages = new Map(chunks.map((chunk) => [chunk, slots.messagesOf(bytesOf(chunk), chunk * MESSAGE_CHUNK_SIZE)]));
  const expected = new Map(chunks.map((chunk) => [chunk, copied(chunk)]));
  // Every chunk in turn, a message of each at a time: each read takes a slot from another chunk's page.
  const built: unknown[] = [];
  const wanted: unknown[] = [];
  for (let position = 0; position < MESSAGE_CHUNK_SIZE; position += 7) {
    for (const chunk of chunks) {
      built.push(pages.get(chunk)!(position));
      wanted.push(expected.get(chunk)!(position));
    }
  }
  t.ok(built.filter((message) => message !== undefined).length > 500, 'hundreds of messages built');
  t.same(built, wanted, 'each as from a copy of its record');
  t.equal(pages.get(chunks[0]!)!(MESSAGE_CHUNK_SIZE + 5), undefined, 'no message past the chunk');

  // A page made before a snapshot rewrote its chunk (a message moved to a new topic: the record's tables
  // differ), its slot taken since: the messages it builds now come from the new record, and are the same.
  const first = chunks[0]!;
  const page = slots.messagesOf(bytesOf(first), first * MESSAGE_CHUNK_SIZE);
  const moved = ids.find((id) => chunkOf(id) === first && live.runtime.realmState(realmId).messages.byId.get(id)!.recipient.kind === 'channel')!;
  await run({ type: 'message.edit', caller: as(1), messageId: moved, topic: 'a new topic', propagateMode: 'change_one' });
  await live.runtime.snapshot();
  for (const chunk of chunks.slice(1)) pages.get(chunk)!(1);
  const rewritten = copied(first);
  const others = ids.filter((id) => chunkOf(id) === first && id !== moved).slice(0, 300).map((id) => id - first * MESSAGE_CHUNK_SIZE);
  t.same(others.map((position) => page(position)), others.map((position) => rewritten(position)), 'the unmoved messages, from the rewritten record');
  t.match(page(moved - first * MESSAGE_CHUNK_SIZE), { recipient: { topic: 'a new topic' } }, 'read again, the record has the move');
  await live.store.close();
});

// A data directory written before chunks existed holds each realm's messages inside its realm record.
t.test('a snapshot of format 1, messages inside the realm record, loads; the next snapshot writes chunks', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const live = open(dir);
  const { realmId, run, ids } = await realmWithMessages(live.runtime, MESSAGE_CHUNK_SIZE + 500, (k) => `topic ${k % 3}`);
  await run({ type: 'message.flags', caller: as(2), messageIds: ids.slice(0, 10), op: 'add', flag: 'starred' });
  await run({ type: 'reaction.add', caller: as(3), messageId: ids[5]!, reaction: { emojiName: 'tada' } });
  await live.runtime.snapshot();
  const state = live.runtime.realmState(realmId);
  const expected = canonical(realmToRecord(state));
  // The realm record as format 1 wrote it, in place of the chunked one; its chunk records removed.
  const seq = live.runtime.logPosition;
  const chunkKeys = [...live.store.readSnapshots()].filter((record) => record.kind === MESSAGE_CHUNK_KIND).map((record): [string, string] => [record.kind, record.id]);
  await live.store.writeSnapshots(seq, [{ v: 1, seq, kind: 'realm', id: String(realmId), data: realmToRecord(state) }], chunkKeys);
  await live.store.close();

  const old = open(dir);
  t.equal(storedChunks(old.store).size, 0, 'no chunk records: the messages are in the realm record');
  const loaded = old.runtime.realmState(realmId);
  t.same(canonical(realmToRecord(loaded)), expected, 'the same messages and flags');
  t.same(verifyRealm(loaded), []);
  await old.runtime.markRunning();
  const realmRecord = [...old.store.readSnapshots()].find((record) => record.kind === 'realm')!;
  t.match(realmRecord, { v: FORMAT_VERSION, data: { messageHead: { nextId: state.messages.nextId } } }, 'the boot wrote the realm record of the current format');
  t.notOk((realmRecord.data as RealmRecord).messages, 'without the messages');
  t.same([...storedChunks(old.store).keys()], [chunkOf(ids[0]!), chunkOf(ids.at(-1)!)], 'which are in chunk records');
  await old.store.close();

  const converted = open(dir);
  t.same(canonical(realmToRecord(converted.runtime.realmState(realmId))), expected, 'loaded from chunks: the same again');
  await converted.store.close();
});

// A data directory of format 2 holds the messages' bodies inside the chunk records, as `text`.
t.test('chunks of format 2, bodies inside, load; the next snapshot stores the bodies apart', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const live = open(dir);
  const { realmId, run, ids } = await realmWithMessages(live.runtime, MESSAGE_CHUNK_SIZE + 300, (k) => `topic ${k % 3}`);
  await run({ type: 'message.edit', caller: as(1), messageId: ids[0]!, content: 'edited', propagateMode: 'change_one' });
  await live.runtime.snapshot();
  const state = live.runtime.realmState(realmId);
  const expected = canonical(realmToRecord(state));
  // Each chunk record as format 2 wrote it, with its messages' text, lengths and edit histories; no body stored apart.
  const seq = live.runtime.logPosition;
  const old = [...live.store.readSnapshots()].filter((record) => record.kind === MESSAGE_CHUNK_KIND).map((record) => {
    const chunk = record.data as MessageChunkRecord;
    const text: string[] = [];
    const messages = chunkTuples(chunk);
    for (const tuple of messages) {
      const body = state.messages.bodies.peek(state.messages.byId.get(tuple[0])!);
      text.push(body.content, body.renderedContent);
      Object.assign(tuple, { 5: body.content.length, 6: body.renderedContent.length, 10: body.editHistory.length ? body.editHistory : null });
    }
    return { ...record, v: 2, data: { strings: chunk.strings, lists: chunk.lists, messages, text: text.join('') } };
  });
  await live.store.writeSnapshots(seq, old, [], false, [...state.messages.byId.keys()].map((messageId) => ({ realmId, messageId, body: null })));
  await live.store.close();

  const upgraded = open(dir);
  const loaded = upgraded.runtime.realmState(realmId);
  t.same(canonical(realmToRecord(loaded)), expected, 'the same messages, bodies and edit histories');
  t.ok([...loaded.messages.byId.values()].every((message) => message.body !== null), 'the bodies are in memory until stored apart');
  await upgraded.runtime.markRunning();
  t.ok([...loaded.messages.byId.values()].every((message) => message.body === null), "the boot's snapshot stored them");
  const chunks = [...upgraded.store.readSnapshots()].filter((record) => record.kind === MESSAGE_CHUNK_KIND);
  t.ok(chunks.every((record) => record.v === FORMAT_VERSION && (record.data as MessageChunkRecord).text === undefined), 'and wrote the chunks again, without text');
  await upgraded.store.close();

  const again = open(dir);
  t.same(canonical(realmToRecord(again.runtime.realmState(realmId))), expected, 'loaded with the bodies apart: the same again');
  await again.store.close();
});

// A send reads the unread set of every recipient. With fewer sets kept in memory than the organization has
// users, a channel of them all had each snapshot let most go and the next send read them all back.
t.test('the per-user flag sets keep as many users in memory as the organization has, whatever the key cache', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = new Store(dir, { waitForFlush: false });
  t.teardown(() => store.close());
  const runtime = new Runtime(store, { clock, queues: TEST_QUEUE_TIMINGS, keyCache: 16 });
  runtime.recover();
  const { realmId } = await runtime.createRealm('', 'Test');
  const run = (command: RealmCommand) => runtime.execute(realmId, command);
  const users = 40;
  for (let i = 1; i <= users; i++) {
    await run({ type: 'user.create', caller: { kind: 'operator' }, email: `user${i}@example.com`, fullName: `User ${i}`, passwordHash: null, role: i === 1 ? Role.owner : Role.member });
  }
  const everyone = Array.from({ length: users }, (_, i) => i + 1);
  await run({ type: 'channel.subscribe', caller: as(1), channels: [{ name: 'all', description: '' }], principals: everyone, options: { inviteOnly: false, isWebPublic: false, messageRetentionDays: null, isDefault: false, permissions: {} }, authorizationErrorsFatal: true });
  const send = (n: number) => run({ type: 'message.send', caller: as(1), kind: 'channel', to: 'all', topic: 'news', content: `news ${n}`, client: 'test' });
  await send(1);
  await runtime.snapshot();
  const unread = () => runtime.realmState(realmId).messages.flags.unread;
  t.equal(unread().residentKeys, users - 1, 'every recipient\'s unread set stays in memory after the snapshot wrote them');
  const readIdsOf = store.readSnapshotIdsOf.bind(store);
  let setsRead = 0;
  store.readSnapshotIdsOf = (kind, prefix) => {
    if (prefix.startsWith(`${realmId}:u:`)) setsRead++;
    return readIdsOf(kind, prefix);
  };
  await send(2);
  t.equal(unread().size, users - 1);
  t.equal(setsRead, 0, 'the next send to them all reads none back');
  t.same([...unread().get(2)!], [...unread().get(users)!], 'each has both messages');
});
