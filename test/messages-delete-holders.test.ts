import t from 'tap';
import { topicKey } from '../actors/realm/messages/state.ts';
import { verifyRealm } from '../actors/verify.ts';
import { channel } from './helpers/messages.ts';
import { startTestServer } from './helpers/server.ts';

const USERS = 150;
const TOPIC = 3000;

/**
 * delete_topic deletes a topic in batches; each batch's audience (every holder of a deleted message and the
 * channel's readers) is gathered once per holder list the messages share, and the holders' flags of the
 * deleted messages are dropped set by set (decide-misc.ts deletion, apply.ts dropFlagsOfDeleted). Over a
 * topic whose holders differ through its history, interleaved with a topic that stays, every batch's audience
 * is compared with the one made from the rule and every user's flag sets with what they held before, less the
 * deleted messages; then again after a restart.
 */
t.test('delete_topic of a large topic: each batch tells exactly its audience, and every holder\'s flags of it go, the rest kept', async (t) => {
  const first = await startTestServer(t, { rateLimit: null });
  const { api, server } = first;
  const runtime = server.runtime;
  const userIds: number[] = [];
  for (let i = 0; i < USERS; i++) {
    const [change] = await runtime.execute(1, { type: 'user.create', caller: { kind: 'operator' }, email: `u${i}@example.com`, fullName: `U${i}`, passwordHash: null });
    userIds.push((change as { user: { userId: number } }).user.userId);
  }
  const quiet = { send_new_subscription_messages: false };
  const source = await channel(api, 'source', [1, ...userIds.slice(0, 100)], quiet);
  const send = async (count: number) => {
    for (let n = 0; n < count; n += 500) {
      await Promise.all(Array.from({ length: Math.min(500, count - n) }, (_, i) => runtime.execute(1, {
        type: 'message.send', caller: { kind: 'user', userId: 1 }, kind: 'channel', to: source, topic: i % 5 === 0 ? 'stays' : 'doomed', content: `message ${n + i}`, client: 'API',
      })));
    }
  };
  // The holders differ over the topic: two members join a third of the way in, one of them and another leave
  // at two thirds (one who left holds only the middle third: told of a batch only through those).
  await send(TOPIC / 3);
  t.equal((await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'source' }], principals: [userIds[140], userIds[141]], ...quiet })).status, 200);
  await send(TOPIC / 3);
  t.equal((await api.delete('/users/me/subscriptions', { subscriptions: ['source'], principals: [userIds[10], userIds[141]] })).status, 200);
  await send(TOPIC / 3);
  const state = runtime.realmState(1);
  const doomed = [...state.messages.byTopic.get(topicKey(source, 'doomed'))!];
  const stays = [...state.messages.byTopic.get(topicKey(source, 'stays'))!];
  // Flags of both topics: starred by some, read by others.
  for (const [i, userId] of [userIds[10]!, userIds[60]!, userIds[140]!].entries()) {
    const some = [...doomed, ...stays].filter((id) => id % 3 === i);
    await runtime.execute(1, { type: 'message.flags', caller: { kind: 'user', userId }, messageIds: some, op: 'add', flag: 'starred' });
    await runtime.execute(1, { type: 'message.flags', caller: { kind: 'user', userId }, messageIds: some, op: 'add', flag: 'read' });
  }
  await runtime.snapshot();

  const flagsOf = () => new Map([1, ...userIds].map((userId) => [userId, {
    unread: [...(state.messages.flags.unread.get(userId) ?? [])],
    starred: [...(state.messages.flags.starred.get(userId) ?? [])],
  }]));
  const before = flagsOf();
  t.ok([...before.values()].some(({ starred }) => starred.some((id) => doomed.includes(id))), 'some deleted messages are starred');
  const holdersOf = new Map(doomed.map((id) => [id, state.messages.byId.get(id)!.userIds]));
  const subscribers = [...state.subscriptions.get(source)!.keys()];

  const gone = new Set<number>();
  let batches = 0;
  for (;;) {
    const changes = await runtime.execute(1, { type: 'topic.delete', caller: { kind: 'user', userId: 1 }, channelId: source, topic: 'doomed', limit: 1000 });
    if (changes.length === 0) break;
    batches++;
    const [deleted] = changes;
    if (deleted?.type !== 'messages.deleted') throw new Error(`not a deletion: ${deleted?.type}`);
    const ids = deleted.groups.flatMap((group) => group.messageIds);
    const audience = new Set(subscribers);
    for (const id of ids) for (const userId of holdersOf.get(id)!) audience.add(userId);
    t.same(deleted.groups[0]!.userIds, [...audience].sort((a, b) => a - b), `batch ${batches}: its audience`);
    for (const id of ids) gone.add(id);
  }
  t.equal(batches, 3, 'three batches of 1,000');
  t.same([...gone].sort((a, b) => a - b), doomed, 'every message of the topic deleted');
  t.ok(holdersOf.get(doomed[0]!)!.includes(userIds[10]!) && !subscribers.includes(userIds[10]!), 'a holder who left is told');

  const expected = new Map([...before].map(([userId, { unread, starred }]) => [userId, {
    unread: unread.filter((id) => !gone.has(id)),
    starred: starred.filter((id) => !gone.has(id)),
  }]));
  const compare = (got: typeof before, step: string) => {
    const wrong = [...expected.keys()].filter((userId) => JSON.stringify(got.get(userId)) !== JSON.stringify(expected.get(userId)));
    t.same(wrong, [], `${step}: every user's unread and starred sets`);
  };
  compare(flagsOf(), 'after the deletion');
  t.same(verifyRealm(state), [], 'the indexes agree with the messages');
  await runtime.snapshot();
  await first.stop();

  const second = await startTestServer(t, { rateLimit: null, dataDir: first.dataDir });
  const again = second.server.runtime.realmState(1);
  compare(new Map([1, ...userIds].map((userId) => [userId, {
    unread: [...(again.messages.flags.unread.get(userId) ?? [])],
    starred: [...(again.messages.flags.starred.get(userId) ?? [])],
  }])), 'after a restart');
});
