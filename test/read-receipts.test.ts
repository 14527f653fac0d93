import t from 'tap';
import { Role } from '../actors/realm/state.ts';
import { startTestServer } from './helpers/server.ts';
import { sendToChannel } from './helpers/messages.ts';

t.test('read receipts of a message held by more users than are looked up in one turn, read back from the data directory', async (t) => {
  // The holders' unread sets and settings are looked up a slice a turn before the answer (prepareReadReceipts).
  const first = await startTestServer(t, { rateLimit: null });
  const { api, server } = first;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const operator = { kind: 'operator' } as const;
  const holders = [1, ann.userId, bob.userId];
  for (let i = 0; i < 700; i++) {
    const [change] = await server.runtime.execute(1, { type: 'user.create', caller: operator, email: `holder${i}@example.com`, fullName: `Holder ${i}`, passwordHash: null, role: Role.member });
    if (change?.type !== 'user.created') throw new Error('no user made');
    holders.push(change.user.userId);
  }
  t.equal((await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'all hands' }], principals: holders })).status, 200);
  t.equal((await api.patch('/realm', { enable_read_receipts: true })).status, 200);
  const id = await sendToChannel(api.as(ann), 'all hands', 'news', 'Read me');
  const older = await sendToChannel(api.as(ann), 'all hands', 'news', 'And me');

  // Every third holder reads it; one of them is deactivated, Bob keeps his reading private, Ann sent it.
  const readers = holders.filter((_, i) => i % 3 === 0);
  for (const userId of [...readers, ann.userId, bob.userId]) {
    await server.runtime.execute(1, { type: 'message.flags', caller: { kind: 'user', userId }, messageIds: [id], op: 'add', flag: 'read' });
  }
  const gone = readers[5]!;
  await server.runtime.execute(1, { type: 'user.deactivate', caller: { kind: 'user', userId: 1 }, userId: gone });
  t.equal((await api.as(bob).patch('/settings', { send_read_receipts: false })).status, 200);
  const expected = readers.filter((userId) => userId !== gone).sort((a, b) => a - b);
  t.same((await api.get(`/messages/${id}/read_receipts`)).body.user_ids, expected, 'with the sets in memory');
  await server.runtime.snapshot();
  await first.stop();

  const second = await startTestServer(t, { dataDir: first.dataDir, rateLimit: null, messageKeyCache: 16 });
  const answers = await Promise.all([id, older, id].map((messageId) => second.api.get(`/messages/${messageId}/read_receipts`)));
  t.same(answers.map((answer) => answer.body.user_ids), [expected, [], expected], 'read back, several at once');
  await second.api.as(ann).post('/messages/flags', { messages: [older], op: 'add', flag: 'read' });
  t.same((await second.api.get(`/messages/${older}/read_receipts`)).body.user_ids, [], 'never its sender');
  await second.api.post('/messages/flags', { messages: [older], op: 'add', flag: 'read' });
  t.same((await second.api.get(`/messages/${older}/read_receipts`)).body.user_ids, [1]);
  t.same((await second.api.as(bob).get(`/messages/${id}/read_receipts`)).body.user_ids, expected, 'Bob reads the others\' receipts');
});
