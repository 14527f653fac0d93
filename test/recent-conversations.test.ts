import t from 'tap';
import { channel, sendDirect, sendToChannel } from './helpers/messages.ts';
import { startTestServer, type ApiClient } from './helpers/server.ts';
import { RECENT_CONVERSATIONS_LIMIT } from '../actors/register/builders/messages.ts';

// A thousand accounts and as many conversations, and a restart.
t.setTimeout(600_000);

type Conversation = { max_message_id: number; user_ids: number[] };

const recent = async (api: ApiClient): Promise<Conversation[]> =>
  (await api.register({ fetch_event_types: ['recent_private_conversations'] })).body.recent_private_conversations;

/** The owner and 46 people in 1,081 direct conversations with the owner, a message each, saved by a snapshot. */
async function manyConversations(first: { api: ApiClient; server: { runtime: { snapshot(): Promise<unknown> } } }) {
  const { api } = first;
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
  /** conversation (the other participants, sorted, joined) -> its messages, oldest first */
  const sent = new Map<string, number[]>();
  const dm = async (to: number[]) => {
    const id = await sendDirect(api, to, 'hello');
    const key = [...to].sort((a, b) => a - b).join();
    sent.set(key, [...(sent.get(key) ?? []), id]);
    return id;
  };
  const conversations: number[][] = people.map((person) => [person]);
  for (const [i, a] of people.entries()) for (const b of people.slice(i + 1)) conversations.push([a, b]);
  for (let start = 0; start < conversations.length; start += 100) await Promise.all(conversations.slice(start, start + 100).map((to) => dm(to)));
  await first.server.runtime.snapshot();
  return { people, firstPerson, sent, dm };
}

t.test('recent_private_conversations: the newest 1,000 conversations, exact through sends, deletions, snapshots and a restart', async (t) => {
  // A key cache of 16: nearly every conversation's id list is read back from the data directory.
  const first = await startTestServer(t, { rateLimit: null, messageKeyCache: 16 });
  const { api, dataDir } = first;
  const { people, firstPerson, sent, dm: send } = await manyConversations(first);
  /** conversation -> its newest message */
  const newest = new Map([...sent].map(([key, ids]) => [key, ids[ids.length - 1]!]));
  const dm = async (to: number[]) => {
    const id = await send(to);
    newest.set([...to].sort((a, b) => a - b).join(), id);
  };
  const expected = () =>
    [...newest].sort((a, b) => b[1] - a[1]).slice(0, RECENT_CONVERSATIONS_LIMIT).map(([key, id]) => ({ max_message_id: id, user_ids: key.split(',').map(Number) }));

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

t.test('GET /messages over 1,081 conversations: windows at every anchor agree with the history, through changes, snapshots and a restart', async (t) => {
  const first = await startTestServer(t, { rateLimit: null, messageKeyCache: 16 });
  const { api, dataDir } = first;
  const { people, firstPerson, sent, dm } = await manyConversations(first);
  const general = await channel(api, 'general', [1, people[0]!, people[1]!]);
  const inChannel: number[] = [];
  // Three new conversations far past a window's worth, interleaved with a channel's messages, and a few from
  // a participant: a window's newest matches lie in a few lists among many, and below them one per list.
  const runs = [[people[2]!, people[3]!, people[4]!], [people[5]!, people[6]!, people[7]!], [people[8]!, people[9]!, people[10]!]];
  for (let i = 0; i < 70; i++) {
    for (const to of runs) await dm(to);
    if (i % 4 === 0) inChannel.push(await sendToChannel(api, general, 'plans', `plan ${i}`));
  }
  const fromPerson: number[] = [];
  for (let i = 0; i < 3; i++) {
    const id = await sendDirect(api.as(firstPerson), [1, people[11]!, people[12]!], `from person ${i}`);
    fromPerson.push(id);
    const key = [people[0]!, people[11]!, people[12]!].join();
    sent.set(key, [...(sent.get(key) ?? []), id]);
  }

  const sorted = (ids: Iterable<number>) => [...ids].sort((a, b) => a - b);
  const direct = () => sorted([...sent.values()].flat());
  const narrows: [string, unknown[], () => number[]][] = [
    ['all', [], () => sorted([...direct(), ...inChannel])],
    ['is:dm', [['is', 'dm']], direct],
    ['dm-including', [['dm-including', people[3]]], () => sorted([...sent].filter(([key]) => key.split(',').includes(String(people[3]))).flatMap(([, ids]) => ids))],
    ['a sender', [['sender', people[0]]], () => sorted(fromPerson)],
  ];
  const expectedWindow = (ids: number[], anchor: number, before: number, after: number) => {
    const below = ids.filter((id) => id < anchor);
    const above = ids.filter((id) => id > anchor);
    const foundAnchor = ids.includes(anchor);
    return {
      ids: [...below.slice(Math.max(0, below.length - before)), ...(foundAnchor ? [anchor] : []), ...above.slice(0, after)],
      found_anchor: foundAnchor, found_oldest: below.length <= before, found_newest: above.length <= after,
    };
  };
  const check = async (client: ApiClient, when: string) => {
    const all = direct();
    const anchors: [string | number, number, number][] = [
      ['newest', 50, 0], ['newest', 1200, 0], ['oldest', 0, 50], [all[all.length - 100]!, 20, 20], [inChannel[5]!, 10, 10], [all[500]!, 100, 100], [all[3]!, 5, 2000],
    ];
    for (const [name, narrow, ids] of narrows) {
      for (const [anchor, before, after] of anchors) {
        const { status, body } = await client.get('/messages', { anchor, num_before: before, num_after: after, narrow, apply_markdown: false });
        t.equal(status, 200);
        const at = anchor === 'newest' ? Infinity : anchor === 'oldest' ? 0 : Number(anchor);
        const got = { ids: body.messages.map((message: { id: number }) => message.id), found_anchor: body.found_anchor, found_oldest: body.found_oldest, found_newest: body.found_newest };
        t.same(got, expectedWindow(ids(), at, before, after), `${when}: ${name}, anchor ${anchor}, ${before} before, ${after} after`);
      }
    }
  };
  // A participant's first unread message (all it received is unread), among its 46 conversations and the channel.
  const firstUnread = async (person: ApiClient, when: string) => {
    const own = [...sent].filter(([key]) => key.split(',').includes(String(people[0])));
    const received = sorted([...own.flatMap(([, ids]) => ids), ...inChannel].filter((id) => !fromPerson.includes(id)));
    const everything = sorted([...own.flatMap(([, ids]) => ids), ...inChannel]);
    const direct = sorted(own.flatMap(([, ids]) => ids));
    for (const [name, narrow, ids] of [['all', [], everything], ['is:dm', [['is', 'dm']], direct]] as const) {
      const { body } = await person.get('/messages', { anchor: 'first_unread', num_before: 10, num_after: 10, narrow, apply_markdown: false });
      const anchor = received.find((id) => ids.includes(id))!;
      t.equal(body.anchor, anchor, `${when}: ${name}, the participant's first unread`);
      t.same(body.messages.map((message: { id: number }) => message.id), expectedWindow(ids, anchor, 10, 10).ids, `${when}: ${name}, around the participant's first unread`);
    }
  };
  await check(api, 'after a snapshot');
  await firstUnread(api.as(firstPerson), 'after a snapshot');

  // Changed since the snapshot: an old conversation becomes the newest, a run loses its newest message.
  await dm([people[40]!, people[41]!]);
  const runKey = runs[1]!.join();
  const dropped = sent.get(runKey)!.pop()!;
  t.equal((await api.delete(`/messages/${dropped}`)).status, 200);
  await check(api, 'after a send and a deletion');
  await first.server.runtime.snapshot();
  await dm([people[20]!]);
  await check(api, 'after a snapshot and a send');

  await first.stop();
  const second = await startTestServer(t, { rateLimit: null, messageKeyCache: 16, dataDir });
  await check(second.api, 'after a restart');
  await firstUnread(second.api.as(firstPerson), 'after a restart');
});
