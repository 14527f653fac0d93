import t from 'tap';
import { topicKey } from '../actors/realm/messages/state.ts';
import { verifyRealm } from '../actors/verify.ts';
import { channel } from './helpers/messages.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const USERS = 150;
const TOPIC = 3000;

/**
 * A topic moved to another channel: each message's holders lose those who may not read it there and gain the
 * channel's subscribers. The holders after the move are made once per holder list the messages share
 * (messages/apply.ts moveHolders), here lists that differ over the topic's history (a member joined, another
 * left, midway), and shared again by chunk once read back from the data directory. Every message's holders
 * and starred flags are compared with those made from the rule, for a move into a private channel and back,
 * before and after a restart.
 */
t.test('a large topic moved between channels: every message\'s holders and flags follow the rule, hot and read back', async (t) => {
  const first = await startTestServer(t, { rateLimit: null });
  const { api, server } = first;
  const userIds: number[] = [];
  for (let i = 0; i < USERS; i++) {
    const [change] = await server.runtime.execute(1, { type: 'user.create', caller: { kind: 'operator' }, email: `u${i}@example.com`, fullName: `U${i}`, passwordHash: null });
    userIds.push((change as { user: { userId: number } }).user.userId);
  }
  const quiet = { send_new_subscription_messages: false };
  const source = await channel(api, 'source', [1, ...userIds.slice(0, 100)], quiet);
  const secret = await channel(api, 'secret', [1, ...userIds.slice(50, 130)], { ...quiet, invite_only: true });

  const send = async (count: number) => {
    for (let n = 0; n < count; n += 500) {
      await Promise.all(Array.from({ length: Math.min(500, count - n) }, (_, i) => server.runtime.execute(1, {
        type: 'message.send', caller: { kind: 'user', userId: 1 }, kind: 'channel', to: source, topic: 'big', content: `message ${n + i}`, client: 'API',
      })));
    }
  };
  // The holders differ over the topic: a member joins a third of the way in, another leaves at two thirds.
  await send(TOPIC / 3);
  t.equal((await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'source' }], principals: [userIds[140]], ...quiet })).status, 200);
  await send(TOPIC / 3);
  t.equal((await api.delete('/users/me/subscriptions', { subscriptions: ['source'], principals: [userIds[10]] })).status, 200);
  await send(TOPIC / 3);
  const state = () => first.server.runtime.realmState(1);
  const ids = [...state().messages.byTopic.get(topicKey(source, 'big'))!];
  t.equal(ids.length, TOPIC);
  // Starred by users who keep access (60) and who lose it (20, 140) in the private channel.
  for (const userId of [userIds[20]!, userIds[60]!, userIds[140]!]) {
    const starred = ids.filter((_, i) => i % 7 === userId % 7);
    await server.runtime.execute(1, { type: 'message.flags', caller: { kind: 'user', userId }, messageIds: starred, op: 'add', flag: 'starred' });
  }

  type Snapshot = Map<number, { holders: number[]; starred: number[] }>;
  const observed = (live: TestServer['server']): Snapshot => {
    const realm = live.runtime.realmState(1);
    return new Map(ids.map((id) => [id, {
      holders: [...realm.messages.byId.get(id)!.userIds],
      starred: [1, ...userIds].filter((userId) => realm.messages.flags.starred.get(userId)?.has(id)),
    }]));
  };
  /** The rule: holders who may not read the channel lose the message and its flags; its subscribers hold it. */
  const afterMove = (before: Snapshot, subscribers: number[], isPrivate: boolean): Snapshot => new Map([...before].map(([id, { holders, starred }]) => {
    const lost = new Set(isPrivate ? holders.filter((userId) => !subscribers.includes(userId)) : []);
    const kept = new Set([...holders.filter((userId) => !lost.has(userId)), ...subscribers]);
    return [id, { holders: [...kept].sort((a, b) => a - b), starred: starred.filter((userId) => !lost.has(userId)) }];
  }));
  const move = async (client: TestServer['api'], to: number) => {
    const moved = await client.patch(`/messages/${ids[0]}`, { stream_id: to, propagate_mode: 'change_all', send_notification_to_old_thread: false, send_notification_to_new_thread: false });
    t.equal(moved.status, 200, JSON.stringify(moved.body));
  };
  const subscribersOf = async (client: TestServer['api'], channelId: number) => ((await client.get(`/streams/${channelId}/members`)).body.subscribers as number[]).sort((a, b) => a - b);
  const compare = (got: Snapshot, want: Snapshot, step: string) => {
    const wrong = ids.filter((id) => JSON.stringify(got.get(id)) !== JSON.stringify(want.get(id)));
    t.same(wrong.slice(0, 3).map((id) => ({ id, got: got.get(id), want: want.get(id) })), [], `${step}: every message's holders and starred flags (${wrong.length} wrong)`);
  };

  const before = observed(server);
  t.ok(new Set([...before.values()].map(({ holders }) => holders.join())).size >= 3, 'the topic\'s messages have different holders');
  t.ok([...before.values()].some(({ starred }) => starred.includes(userIds[20]!)), 'a member who will lose access starred some');
  await move(api, secret);
  const inSecret = afterMove(before, await subscribersOf(api, secret), true);
  t.notOk([...inSecret.values()].some(({ holders }) => holders.includes(userIds[20]!)), 'who may not read the private channel loses every message');
  compare(observed(server), inSecret, 'into the private channel');
  t.same(verifyRealm(state()), [], 'the indexes agree with the messages');
  await server.runtime.snapshot();
  await first.stop();

  // Read back from the data directory, the holder lists are shared by chunk.
  const second = await startTestServer(t, { rateLimit: null, dataDir: first.dataDir });
  compare(observed(second.server), inSecret, 'read back');
  await move(second.api, source);
  compare(observed(second.server), afterMove(inSecret, await subscribersOf(second.api, source), false), 'back into the public channel, read back');
  t.same(verifyRealm(second.server.runtime.realmState(1)), [], 'the indexes agree with the messages after the second move');
});
