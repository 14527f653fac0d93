import t from 'tap';
import { sendDirect } from './helpers/messages.ts';
import { startTestServer, type ApiClient } from './helpers/server.ts';
import { RECENT_CONVERSATIONS_LIMIT } from '../actors/register/builders/messages.ts';

// A thousand accounts and as many conversations, and a restart.
t.setTimeout(600_000);

type Conversation = { max_message_id: number; user_ids: number[] };

const recent = async (api: ApiClient): Promise<Conversation[]> =>
  (await api.register({ fetch_event_types: ['recent_private_conversations'] })).body.recent_private_conversations;

t.test('recent_private_conversations: the newest 1,000 conversations, exact through sends, deletions, snapshots and a restart', async (t) => {
  // A key cache of 16: nearly every conversation's id list is read back from the data directory.
  const first = await startTestServer(t, { rateLimit: null, messageKeyCache: 16 });
  const { api, dataDir } = first;
  const people: number[] = [];
  const firstPerson = await api.createUser('person0@example.com', 'Person 0');
  people.push(firstPerson.userId);
  // 46 people (logins have a budget of their own: the others are not logged in): 46 conversations of two
  // and 1,035 of three, past the 1,000 listed.
  for (let i = 1; i < 46; i++) {
    const { status, body } = await api.post('/users', { email: `person${i}@example.com`, password: 'a-Strong-passw0rd-for-tests', full_name: `Person ${i}` });
    if (status !== 200) throw new Error(JSON.stringify(body));
    people.push(body.user_id);
  }
  /** conversation (the other participants, sorted, joined) -> its newest message */
  const newest = new Map<string, number>();
  const dm = async (to: number[]) => {
    const id = await sendDirect(api, to, 'hello');
    newest.set([...to].sort((a, b) => a - b).join(), id);
    return id;
  };
  const conversations: number[][] = people.map((person) => [person]);
  for (const [i, a] of people.entries()) for (const b of people.slice(i + 1)) conversations.push([a, b]);
  for (let start = 0; start < conversations.length; start += 100) await Promise.all(conversations.slice(start, start + 100).map((to) => dm(to)));
  const expected = () =>
    [...newest].sort((a, b) => b[1] - a[1]).slice(0, RECENT_CONVERSATIONS_LIMIT).map(([key, id]) => ({ max_message_id: id, user_ids: key.split(',').map(Number) }));
  await first.server.runtime.snapshot();

  // The owner's 1,081 conversations are more than a fetch keeps in memory (query.ts): read without the cache.
  const newestFirst = () => [...newest.values()].sort((a, b) => b - a);
  for (const narrow of [[], [['is', 'dm']]]) {
    const fetched = await api.get('/messages', { anchor: 'newest', num_before: 50, num_after: 0, narrow });
    t.same(fetched.body.messages.map((message: { id: number }) => message.id), newestFirst().slice(0, 50).reverse(), `GET /messages ${JSON.stringify(narrow)}: the newest`);
  }

  const listed = await recent(api);
  t.equal(listed.length, RECENT_CONVERSATIONS_LIMIT, 'at most 1,000');
  t.same(listed, expected(), 'the newest ones, newest first');
  t.same(await recent(api), expected(), 'asked again');

  // The oldest conversation becomes the newest; a conversation loses its only message.
  await dm([people[0]!]);
  const lone = newest.get(String(people[7]))!;
  t.equal((await api.delete(`/messages/${lone}`)).status, 200);
  newest.delete(String(people[7]));
  t.same(await recent(api), expected(), 'after a send and a deletion');
  // Changed, then saved by a snapshot before the next registration.
  await dm([people[9]!]);
  await first.server.runtime.snapshot();
  t.same(await recent(api), expected(), 'after a send, then a snapshot');
  const own = (await recent(api.as(firstPerson))).map((conversation) => conversation.user_ids.join());
  t.equal(own.length, 46, "a participant's own list: the conversation with the owner, and the 45 of three");
  t.equal(own[0], '1', 'the newest first');

  await first.stop();
  const second = await startTestServer(t, { rateLimit: null, messageKeyCache: 16, dataDir });
  t.same(await recent(second.api), expected(), 'after a restart');
});
