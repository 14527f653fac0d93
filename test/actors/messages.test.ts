import { rmSync } from 'node:fs';
import t from 'tap';
import { openRuntime } from '../helpers/runtime.ts';
import type { RealmCommand } from '../../actors/realm/commands.ts';
import type { MessageCommand } from '../../actors/realm/messages/commands.ts';
import type { MessageStore } from '../../actors/realm/messages/state.ts';
import { flagsFor } from '../../actors/realm/messages/access.ts';
// The runtime first: loading realm/state.ts before anything else trips an import cycle with groups/state.ts.
import { Runtime } from '../../actors/runtime.ts';
import { Role, realmToRecord } from '../../actors/realm/state.ts';
import { tempDir } from '../helpers/server.ts';

let now = Date.UTC(2026, 0, 1);
const clock = { now: () => now };
const as = (userId: number) => ({ kind: 'user', userId }) as const;

const open = (dir: string) => openRuntime(dir, clock);

/** A message history touching every change: sends, edits, moves, reactions, flags, deletions. */
async function history(runtime: Runtime, midway?: () => Promise<void>) {
  const { realmId } = await runtime.createRealm('', 'Test');
  const run = (command: RealmCommand) => runtime.execute(realmId, command);
  for (const [email, role] of [['owner@example.com', Role.owner], ['ann@example.com', Role.member], ['bob@example.com', Role.member]] as const) {
    await run({ type: 'user.create', caller: { kind: 'operator' }, email, fullName: email.split('@')[0]!, passwordHash: null, role });
  }
  const options = { inviteOnly: false, isWebPublic: false, messageRetentionDays: null, isDefault: false, permissions: {} };
  await run({ type: 'channel.subscribe', caller: as(1), channels: [{ name: 'general', description: '' }, { name: 'other', description: '' }], principals: [1, 2, 3], options, authorizationErrorsFatal: true });
  const send = (userId: number, to: Extract<MessageCommand, { type: 'message.send' }>['to'], topic: string | undefined, content: string, kind: 'channel' | 'direct' = 'channel') =>
    run({ type: 'message.send', caller: as(userId), kind, to, topic, content, client: 'test' });
  await send(1, 'general', 'lunch', 'hi @**ann** and @**all**');
  await send(2, 'general', 'lunch', 'yes @**topic**');
  await send(3, [1, 2], undefined, 'group dm', 'direct');
  now += 1000;
  if (midway) await midway();
  await send(2, [1], undefined, 'one to one', 'direct');
  await run({ type: 'message.edit', caller: as(2), messageId: 2, content: 'edited @**bob**', propagateMode: 'change_one' });
  await run({ type: 'message.edit', caller: as(1), messageId: 1, topic: 'dinner', channelId: 2, propagateMode: 'change_all' });
  await run({ type: 'reaction.add', caller: as(3), messageId: 1, reaction: { emojiName: 'tada' } });
  await run({ type: 'message.flags', caller: as(2), messageIds: [1, 3], op: 'add', flag: 'read' });
  await run({ type: 'message.flags', caller: as(2), messageIds: [2], op: 'add', flag: 'starred' });
  await send(1, 'general', 'later', 'to be deleted');
  await run({ type: 'message.delete', caller: as(1), messageId: 5 });
  return realmId;
}

/** The derived indexes, in a comparable form (they are rebuilt on load, so they must come out equal). */
function indexes(store: MessageStore) {
  const sorted = <V>(map: Map<string | number, V>) => [...map].sort(([a], [b]) => String(a).localeCompare(String(b)));
  return {
    byChannel: sorted(store.byChannel).map(([k, v]) => [k, [...v]]),
    byTopic: sorted(store.byTopic).map(([k, v]) => [k, [...v]]),
    byConversation: sorted(store.byConversation).map(([k, v]) => [k, [...v]]),
    conversationsOf: sorted(store.conversationsOf).map(([k, v]) => [k, [...v].sort()]),
    mentionedOf: sorted(store.mentionedOf).map(([k, v]) => [k, [...v].sort()]).filter(([, v]) => (v as number[]).length),
  };
}

t.test('messages restored from snapshots, from the log, or from both equal the live ones', async (t) => {
  const ways: Record<string, (runtime: Runtime) => Promise<number>> = {
    'log only': (runtime) => history(runtime),
    'snapshot at the end': async (runtime) => {
      const id = await history(runtime);
      await runtime.snapshot();
      return id;
    },
    'snapshot midway, log after': (runtime) => history(runtime, async () => void (await runtime.snapshot())),
  };
  for (const [way, build] of Object.entries(ways)) {
    const dir = tempDir();
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const live = open(dir);
    const realmId = await build(live.runtime);
    const state = live.runtime.realmState(realmId);
    t.same([...state.messages.byId.keys()], [1, 2, 3, 4], `${way}: the deleted message is gone`);
    t.same(state.channels.get(2)!.firstMessageId, 1, `${way}: the moved message opened the other channel`);
    const expected = realmToRecord(state);
    const expectedIndexes = indexes(state.messages);
    await live.store.close();

    const restored = open(dir);
    const again = restored.runtime.realmState(realmId);
    t.same(realmToRecord(again), expected, `${way}: same messages, flags and channels`);
    t.same(indexes(again.messages), expectedIndexes, `${way}: same indexes`);
    const [next] = await restored.runtime.execute(realmId, { type: 'message.send', caller: as(2), kind: 'direct', to: [1], content: 'after', client: 'test' });
    t.match(next, { type: 'message.sent', message: { id: 6, recipientId: again.messages.byId.get(4)!.recipientId } }, `${way}: ids continue, the conversation keeps its recipient id`);
    await restored.store.close();
  }
});

/** A realm in a fresh data directory with these users (ids from 1 in this order, the first its owner). */
async function realmWith(t: { teardown(fn: () => void): void }, names: string[]) {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { store, runtime } = open(dir);
  const { realmId } = await runtime.createRealm('', 'Test');
  const run = (command: RealmCommand) => runtime.execute(realmId, command);
  for (const [index, name] of names.entries()) {
    await run({ type: 'user.create', caller: { kind: 'operator' }, email: `${name}@example.com`, fullName: name, passwordHash: null, role: index === 0 ? Role.owner : Role.member });
  }
  return { store, runtime, realmId, run, dir };
}

t.test('messages to the same subscribers share one holder list, copied before it changes', async (t) => {
  const { store, runtime, realmId, run } = await realmWith(t, ['owner', 'ann', 'cat']);
  const options = { inviteOnly: false, isWebPublic: false, messageRetentionDays: null, isDefault: false, permissions: {} };
  await run({ type: 'channel.subscribe', caller: as(1), channels: [{ name: 'general', description: '' }], principals: [1, 2], options, authorizationErrorsFatal: true });
  const send = () => run({ type: 'message.send', caller: as(1), kind: 'channel', to: 'general', topic: 't', content: 'x', client: 'test' });
  await send();
  await send();
  const state = runtime.realmState(realmId);
  const [a, b] = [state.messages.byId.get(1)!, state.messages.byId.get(2)!];
  t.equal(a.userIds, b.userIds, 'one list for both');
  t.equal(realmToRecord(state).messages!.holderLists!.length, 1, 'written once in a snapshot');
  await run({ type: 'message.flags', caller: as(3), messageIds: [1], op: 'add', flag: 'starred' });
  t.same([a.userIds, b.userIds], [[1, 2, 3], [1, 2]], 'starring puts Cat in the first message only');
  await run({ type: 'channel.subscribe', caller: as(1), channels: [{ name: 'general', description: '' }], principals: [3], options, authorizationErrorsFatal: true });
  await send();
  t.not(state.messages.byId.get(3)!.userIds, b.userIds, 'a new subscriber: a new list');
  await store.close();
});

t.test("a channel message's holders are in ascending order whatever the order its subscribers joined in", async (t) => {
  const { store, runtime, realmId, run } = await realmWith(t, ['owner', 'ann', 'bob', 'cat', 'dan', 'eve']);
  const options = { inviteOnly: false, isWebPublic: false, messageRetentionDays: null, isDefault: false, permissions: {} };
  // Joined newest first, the sender (3) not among them; then one in order.
  for (const principals of [[6], [5], [2], [1]]) {
    await run({ type: 'channel.subscribe', caller: as(1), channels: [{ name: 'general', description: '' }], principals, options, authorizationErrorsFatal: true });
  }
  await run({ type: 'channel.subscribe', caller: as(1), channels: [{ name: 'other', description: '' }], principals: [1, 2, 4], options, authorizationErrorsFatal: true });
  const send = (to: string, userId: number) => run({ type: 'message.send', caller: as(userId), kind: 'channel', to, topic: 't', content: 'x', client: 'test' });
  await send('general', 1);
  await send('other', 6);
  const state = runtime.realmState(realmId);
  t.same(state.messages.byId.get(1)!.userIds, [1, 2, 5, 6], 'joined out of order');
  t.same(state.messages.byId.get(2)!.userIds, [1, 2, 4, 6], 'joined in order, the sender after them');
  await store.close();
});

t.test("a new message's unread flags, added to the sets later, are those it had at once, through flag changes, deletions and a restart", async (t) => {
  const { store, runtime, realmId, run, dir } = await realmWith(t, ['owner', 'ann', 'bob', 'cat']);
  const options = { inviteOnly: false, isWebPublic: false, messageRetentionDays: null, isDefault: false, permissions: {} };
  await run({ type: 'channel.subscribe', caller: as(1), channels: [{ name: 'general', description: '' }], principals: [1, 2, 3, 4], options, authorizationErrorsFatal: true });
  await run({ type: 'channel.subscribe', caller: as(1), channels: [{ name: 'small', description: '' }], principals: [1, 2], options, authorizationErrorsFatal: true });
  const send = (userId: number, to: string, readBySender?: boolean) =>
    run({ type: 'message.send', caller: as(userId), kind: 'channel', to, topic: 't', content: 'x', client: 'test', ...(readBySender === undefined ? {} : { readBySender }) });
  const state = runtime.realmState(realmId);
  const users = [1, 2, 3, 4];
  const unreadByFlags = (ids: number[]) => users.map((userId) => ids.filter((id) => !flagsFor(state, userId, state.messages.byId.get(id)!).includes('read')));
  const unreadSets = (messages: MessageStore) => users.map((userId) => [...(messages.flags.unread.get(userId) ?? [])]);
  // 1-2 general, 3 small, 4-5 general: runs of two holder lists; 5 unread for its sender too.
  await send(1, 'general');
  await send(2, 'general');
  await send(1, 'small');
  await send(3, 'general');
  await send(4, 'general', false);
  t.equal(state.messages.pendingUnread.length, 5, 'the sends left their unread flags pending');
  const atOnce = [[2, 4, 5], [1, 3, 4, 5], [1, 2, 5], [1, 2, 4, 5]];
  t.same(unreadByFlags([1, 2, 3, 4, 5]), atOnce, "each message's flags: unread for every recipient but a sender who read it");
  t.equal(state.messages.pendingUnread.length, 5, "a message's own flags read nothing of the sets");
  t.same(unreadSets(state.messages), atOnce, 'the sets, read, hold the same');
  t.equal(state.messages.pendingUnread.length, 0, 'reading the sets added the pending flags');
  await send(1, 'general');
  await send(1, 'small');
  await run({ type: 'message.flags', caller: as(2), messageIds: [3, 4, 7], op: 'add', flag: 'read' });
  t.equal(state.messages.pendingUnread.length, 0, 'a flag change adds the pending first');
  await send(3, 'general');
  await run({ type: 'message.delete', caller: as(1), messageId: 8 });
  await send(2, 'general');
  const expected = [[2, 4, 5, 9], [1, 5, 6], [1, 2, 5, 6, 9], [1, 2, 4, 5, 6, 9]];
  t.same(unreadByFlags([1, 2, 3, 4, 5, 6, 7, 9]), expected, 'Ann read 3, 4 and 7 herself; 8 is deleted');
  await runtime.snapshot();
  t.same(unreadSets(state.messages), expected, 'the sets hold them once a snapshot read them');
  await send(4, 'general');
  await store.close();

  const restored = openRuntime(dir, clock);
  t.same(unreadSets(restored.runtime.realmState(realmId).messages), expected.map((ids, i) => (i === 3 ? ids : [...ids, 10])), 'a restart reads them back, and replays the last send');
  await restored.store.close();
});

t.test('unread flags past the pending limit are added while sends go on, as ranges broken by each sender', async (t) => {
  const names = Array.from({ length: 200 }, (_, i) => `user${i + 1}`);
  const { store, runtime, realmId, run } = await realmWith(t, names);
  const options = { inviteOnly: false, isWebPublic: false, messageRetentionDays: null, isDefault: false, permissions: {} };
  const everyone = names.map((_, i) => i + 1);
  await run({ type: 'channel.subscribe', caller: as(1), channels: [{ name: 'general', description: '' }], principals: everyone, options, authorizationErrorsFatal: true });
  const state = runtime.realmState(realmId);
  // 400 sends to 200 (80,000 flags, past the 65,536 that may wait), from senders in turn; one left unread for its sender.
  const expected = new Map(everyone.map((userId) => [userId, [] as number[]]));
  const sends = [];
  for (let n = 0; n < 400; n++) {
    const sender = (n % 7) + 1;
    const readBySender = n !== 123;
    sends.push(run({ type: 'message.send', caller: as(sender), kind: 'channel', to: 'general', topic: 't', content: 'x', client: 'test', readBySender }));
    for (const userId of everyone) if (userId !== sender || !readBySender) expected.get(userId)!.push(n + 1);
  }
  await Promise.all(sends);
  t.ok(state.messages.pendingUnread.length > 0 && state.messages.pendingUnread.length < 400, `some added while sending, ${state.messages.pendingUnread.length} still pending`);
  const lastSender = (399 % 7) + 1;
  t.same(everyone.map((userId) => flagsFor(state, userId, state.messages.byId.get(400)!).includes('read')), everyone.map((userId) => userId === lastSender), "the last message's own flags, still pending");
  t.same(everyone.map((userId) => [...(state.messages.flags.unread.get(userId) ?? [])]), everyone.map((userId) => expected.get(userId)!), 'every unread set as the sends left it');
  await store.close();
});
