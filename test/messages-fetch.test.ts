import t from 'tap';
import { channel, fetchIds, sendDirect, sendToChannel } from './helpers/messages.ts';
import { startTestServer } from './helpers/server.ts';

const NEWEST = 10_000_000_000_000_000;

t.test('anchors, windows and the found_* answers', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const general = await channel(api, 'general', [1, ann.userId]);
  const ids: number[] = [];
  for (let i = 0; i < 10; i++) ids.push(await sendToChannel(api, general, 't', `m${i}`));
  const get = async (params: Record<string, unknown>) => (await api.as(ann).get('/messages', params)).body;
  const idsOf = (body: { messages: { id: number }[] }) => body.messages.map((m) => m.id);

  const newest = await get({ anchor: 'newest', num_before: 3, num_after: 0 });
  t.same(idsOf(newest), ids.slice(7));
  t.match(newest, { anchor: NEWEST, found_anchor: false, found_oldest: false, found_newest: true, history_limited: false });
  const oldest = await get({ anchor: 'oldest', num_before: 0, num_after: 3 });
  t.same(idsOf(oldest), ids.slice(0, 3));
  t.match(oldest, { anchor: 0, found_oldest: true, found_newest: false });
  const middle = await get({ anchor: ids[5], num_before: 2, num_after: 2 });
  t.same(idsOf(middle), ids.slice(3, 8));
  t.equal(middle.found_anchor, true);
  const without = await get({ anchor: ids[5], num_before: 2, num_after: 2, include_anchor: false });
  t.same(idsOf(without), [ids[3], ids[4], ids[6], ids[7]]);
  t.equal(without.found_anchor, false);
  const everything = await get({ anchor: ids[5], num_before: 5, num_after: 4 });
  t.match(everything, { found_oldest: true, found_newest: true }, 'exactly all: nothing beyond either end');
  t.same(idsOf(await get({ anchor: 'newest', num_before: 2, num_after: 0, narrow: [{ operator: 'id', operand: ids[2] }] })), [ids[2]]);
  t.same(idsOf(await get({ message_ids: [ids[1], 999, ids[0]] })), [ids[0], ids[1]], 'message_ids: the existing ones, sorted');

  // first_unread: the oldest unread message matching the narrow, else the newest.
  await api.as(ann).post('/messages/flags', { messages: ids.slice(0, 4), op: 'add', flag: 'read' });
  const firstUnread = await get({ anchor: 'first_unread', num_before: 1, num_after: 1 });
  t.equal(firstUnread.anchor, ids[4]);
  t.same(idsOf(firstUnread), ids.slice(3, 6));
  // The terminal client sends the legacy flag with anchor=0 beside it: the flag wins, as in the original.
  const legacy = await get({ anchor: 0, use_first_unread_anchor: true, num_before: 1, num_after: 1 });
  t.equal(legacy.anchor, ids[4], 'use_first_unread_anchor overrides the anchor sent with it');
  t.same(idsOf(legacy), ids.slice(3, 6));
  await api.as(ann).post('/mark_all_as_read');
  t.equal((await get({ anchor: 'first_unread', num_before: 1, num_after: 1 })).anchor, NEWEST);
  t.equal((await get({ use_first_unread_anchor: true, num_before: 0, num_after: 1 })).anchor, NEWEST, 'the legacy way to ask for first_unread');

  const errors: [Record<string, unknown>, string, string][] = [
    [{ num_before: 1, num_after: 1 }, 'REQUEST_VARIABLE_MISSING', "Missing 'anchor' argument"],
    [{ anchor: 'newest', num_after: 1 }, 'REQUEST_VARIABLE_MISSING', "Missing 'num_before' argument"],
    [{ anchor: 'sideways', num_before: 1, num_after: 1 }, 'BAD_REQUEST', 'anchor'],
    [{ anchor: 'newest', num_before: 4000, num_after: 1001 }, 'BAD_REQUEST', 'Too many messages requested (maximum 5000).'],
    [{ anchor: 'newest', num_before: -1, num_after: 1 }, 'BAD_REQUEST', 'num_before'],
    [{ anchor: 'newest', num_before: 1, num_after: 1, narrow: [{ operator: 'colour', operand: 'red' }] }, 'BAD_NARROW', 'Invalid narrow operator: unknown operator colour'],
    [{ anchor: 'newest', num_before: 1, num_after: 1, narrow: [['is', 'shiny']] }, 'BAD_NARROW', "unknown 'is' operand shiny"],
    [{ anchor: 'newest', num_before: 1, num_after: 1, narrow: [{ operator: 'channel', operand: 'nowhere' }] }, 'BAD_NARROW', 'unknown channel nowhere'],
    [{ anchor: 'newest', num_before: 1, num_after: 1, narrow: '[1' }, 'BAD_REQUEST', 'not valid JSON'],
    [{ message_ids: [1], anchor: 'newest' }, 'BAD_REQUEST', 'message_ids'],
  ];
  for (const [params, code, msg] of errors) {
    const result = await api.as(ann).get('/messages', params);
    t.equal(result.status, 400, msg);
    t.match(result.body, { code, msg: new RegExp(msg.replace(/[().]/g, '\\$&')) });
  }
  t.match((await api.as(ann).get('/messages', { anchor: 'newest', num_before: 1, num_after: 1, narrow: [['is', 'shiny']] })).body, { desc: "unknown 'is' operand shiny" });
});

interface Sent { id: number; sender: number; channel: string | null; topic: string; dm: number[] | null; content: string }

t.test('narrows agree with a brute-force filter over generated messages', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const people = [{ api, id: 1 }, { api: api.as(ann), id: ann.userId }, { api: api.as(bob), id: bob.userId }];
  const channels = { red: await channel(api, 'red', [1, ann.userId, bob.userId]), blue: await channel(api, 'blue', [1, ann.userId]) };
  const words = ['apple', 'Banana', 'cherry pie', 'date'];
  const topics = ['alpha', 'Beta', 'gamma'];
  const sent: Sent[] = [];
  let seed = 7;
  const pick = <T>(list: readonly T[]): T => list[(seed = (seed * 1103515245 + 12345) % 2147483648) % list.length]!;
  for (let i = 0; i < 60; i++) {
    const from = pick(people);
    const content = `${pick(words)} ${pick(words)} #${i}`;
    const kind = pick(['red', 'blue', 'dm'] as const);
    if (kind === 'dm') {
      const others = people.filter((p) => p.id !== from.id);
      const to = pick([[others[0]!.id], [others[1]!.id], others.map((p) => p.id)]);
      sent.push({ id: await sendDirect(from.api, to, content), sender: from.id, channel: null, topic: '', dm: [...new Set([from.id, ...to])].sort(), content });
    } else {
      if (kind === 'blue' && from.id === bob.userId) continue;
      const topic = pick(topics);
      sent.push({ id: await sendToChannel(from.api, kind, topic, content), sender: from.id, channel: kind, topic, dm: null, content });
    }
  }
  // Ann stars a few, and reads some.
  const seenByAnn = sent.filter((m) => m.channel !== null || m.dm!.includes(ann.userId));
  const starred = seenByAnn.filter((_, i) => i % 7 === 0).map((m) => m.id);
  t.same((await api.as(ann).post('/messages/flags', { messages: starred, op: 'add', flag: 'starred' })).body.messages, starred);
  await api.as(ann).post('/messages/flags', { messages: seenByAnn.filter((_, i) => i % 3 === 0).map((m) => m.id), op: 'add', flag: 'read' });
  const unread = new Set((await api.as(ann).get('/messages', { anchor: 'newest', num_before: 1000, num_after: 0 })).body.messages
    .filter((m: { flags: string[] }) => !m.flags.includes('read')).map((m: { id: number }) => m.id));

  const dmKey = (ids: number[]) => [...new Set([...ids, ann.userId])].sort().join(',');
  const cases: [unknown[], (m: Sent) => boolean][] = [
    [[], () => true],
    [[{ operator: 'channel', operand: 'red' }], (m) => m.channel === 'red'],
    [[{ operator: 'stream', operand: channels.blue }], (m) => m.channel === 'blue'],
    [[['stream', 'red'], ['topic', 'beta']], (m) => m.channel === 'red' && m.topic === 'Beta'],
    [[{ operator: 'channel', operand: 'red', negated: true }], (m) => m.channel !== 'red'],
    [[{ operator: 'topic', operand: 'GAMMA' }, { operator: 'sender', operand: 'bob@example.com', negated: true }], (m) => m.topic === 'gamma' && m.sender !== bob.userId],
    [[{ operator: 'sender', operand: bob.userId }], (m) => m.sender === bob.userId],
    [[{ operator: 'dm', operand: [bob.userId] }], (m) => m.dm !== null && m.dm.join(',') === dmKey([bob.userId])],
    [[['pm-with', 'owner@example.com,bob@example.com']], (m) => m.dm !== null && m.dm.join(',') === dmKey([1, bob.userId])],
    [[{ operator: 'dm-including', operand: bob.userId }], (m) => m.dm !== null && m.dm.includes(bob.userId)],
    [[['is', 'dm']], (m) => m.dm !== null],
    [[['is', 'private'], ['search', 'apple']], (m) => m.dm !== null && m.content.toLowerCase().includes('apple')],
    [[{ operator: 'search', operand: 'banana DATE' }], (m) => /banana/i.test(m.content) && /date/i.test(m.content)],
    [[{ operator: 'search', operand: 'alpha' }], (m) => m.topic === 'alpha'],
    [[{ operator: 'search', operand: 'cherry', negated: true }, ['channel', 'red']], (m) => m.channel === 'red' && !m.content.includes('cherry')],
    [[['is', 'starred']], (m) => starred.includes(m.id)],
    [[['is', 'unread'], ['channel', 'red']], (m) => unread.has(m.id) && m.channel === 'red'],
    [[{ operator: 'is', operand: 'starred', negated: true }, ['is', 'dm']], (m) => !starred.includes(m.id) && m.dm !== null],
    [[['channels', 'public']], (m) => m.channel !== null],
  ];
  for (const [narrow, filter] of cases) {
    const expected = sent.filter((m) => (m.channel !== null || m.dm!.includes(ann.userId)) && filter(m)).map((m) => m.id);
    t.same(await fetchIds(api.as(ann), narrow), expected, JSON.stringify(narrow));
    // Windows over the same narrow agree too: the middle one and its neighbours.
    if (expected.length > 4) {
      const anchor = expected[Math.floor(expected.length / 2)]!;
      const window = (await api.as(ann).get('/messages', { anchor, num_before: 2, num_after: 2, narrow })).body;
      const at = expected.indexOf(anchor);
      t.same(window.messages.map((m: { id: number }) => m.id), expected.slice(at - 2, at + 3), `window of ${JSON.stringify(narrow)}`);
    }
  }
});

t.test('search results carry highlighted matches; matches_narrow', async (t) => {
  const { api } = await startTestServer(t);
  const general = await channel(api, 'general', [1]);
  const hit = await sendToChannel(api, general, 'Fruit salad', 'I like **apples** & pears');
  const miss = await sendToChannel(api, general, 'other', 'nothing here');
  const found = (await api.get('/messages', { anchor: 'newest', num_before: 5, num_after: 0, narrow: [{ operator: 'search', operand: 'apple' }] })).body.messages;
  t.same(found.map((m: { id: number }) => m.id), [hit]);
  t.equal(found[0].match_content, '<p>I like <strong><span class="highlight">apple</span>s</strong> &amp; pears</p>');
  t.equal(found[0].match_subject, 'Fruit salad');
  const checked = (await api.get('/messages/matches_narrow', { msg_ids: [hit, miss, 999], narrow: [{ operator: 'search', operand: 'fruit' }] })).body.messages;
  t.same(Object.keys(checked), [String(hit)]);
  t.same(checked[hit], { match_content: '<p>I like <strong>apples</strong> &amp; pears</p>', match_subject: '<span class="highlight">Fruit</span> salad' });
  t.same(Object.keys((await api.get('/messages/matches_narrow', { msg_ids: [hit, miss], narrow: [{ operator: 'topic', operand: 'other' }] })).body.messages), [String(miss)]);
  t.equal((await api.get('/messages/matches_narrow', { msg_ids: [hit] })).body.code, 'REQUEST_VARIABLE_MISSING');
});

t.test('private channels and direct messages are invisible to outsiders on every read path', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const eve = await api.createUser('eve@example.com', 'Eve');
  const { queueId } = await api.as(eve).register({ event_types: ['message', 'update_message', 'reaction', 'delete_message', 'stream'], all_public_streams: true });
  const secret = await channel(api, 'secret', [1, ann.userId], { invite_only: true });
  const inSecret = await sendToChannel(api, secret, 'plans', 'the secret plan');
  const dm = await sendDirect(api, [ann.userId], 'a private plan');
  await api.as(ann).post(`/messages/${dm}/reactions`, { emoji_name: 'tada' });
  await api.patch(`/messages/${inSecret}`, { content: 'the edited plan' });
  const nonexistent = await api.as(eve).get('/messages/999');
  for (const id of [inSecret, dm]) {
    const result = await api.as(eve).get(`/messages/${id}`);
    t.same(result.body, nonexistent.body, 'answered exactly like a message that does not exist');
    t.same(await fetchIds(api.as(eve), [{ operator: 'id', operand: id }]), []);
    t.same((await api.as(eve).get('/messages', { message_ids: [id] })).body.messages, []);
    t.same((await api.as(eve).get('/messages/matches_narrow', { msg_ids: [id], narrow: [] })).body.messages, {});
    t.equal((await api.as(eve).post('/messages/flags', { messages: [id], op: 'add', flag: 'starred' })).body.msg, 'Invalid message(s)');
    t.equal((await api.as(eve).post(`/messages/${id}/reactions`, { emoji_name: 'tada' })).body.msg, 'Invalid message(s)');
    t.equal((await api.as(eve).patch(`/messages/${id}`, { content: 'x' })).body.msg, 'Invalid message(s)');
    t.equal((await api.as(eve).delete(`/messages/${id}`)).body.msg, 'Invalid message(s)');
  }
  t.same(await fetchIds(api.as(eve)), []);
  t.same(await fetchIds(api.as(eve), [{ operator: 'search', operand: 'plan' }]), []);
  t.same(await fetchIds(api.as(eve), [['is', 'dm']]), []);
  t.same(await fetchIds(api.as(eve), [['dm-including', ann.userId]]), []);
  t.same(await fetchIds(api.as(eve), [['channels', 'public']]), []);
  const narrowTo = async (name: string) => (await api.as(eve).get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [['channel', name]] })).body;
  const missing = await narrowTo('nosuch');
  t.same(await narrowTo('secret'), { ...missing, msg: missing.msg.replace('nosuch', 'secret'), desc: missing.desc.replace('nosuch', 'secret') }, 'a narrow to it fails as for a missing channel');
  t.same((await api.as(eve).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).body.events, [], 'no event about any of it');
  t.same(await fetchIds(api.as(ann)), [inSecret, dm], 'while the participants see both');
});

t.test('private channel history: protected unless public to subscribers', async (t) => {
  const { api } = await startTestServer(t);
  const cat = await api.createUser('cat@example.com', 'Cat');
  const closed = await channel(api, 'closed', [1], { invite_only: true });
  const open = await channel(api, 'open-history', [1], { invite_only: true, history_public_to_subscribers: true });
  const before = [await sendToChannel(api, closed, 't', 'old'), await sendToChannel(api, open, 't', 'old')];
  await channel(api, 'closed', [cat.userId]);
  await channel(api, 'open-history', [cat.userId]);
  const after = await sendToChannel(api, closed, 't', 'new');
  t.same(await fetchIds(api.as(cat), [['channel', 'closed']]), [after], 'only what Cat received');
  t.same(await fetchIds(api.as(cat), [['channel', 'open-history']]), [before[1]], 'the whole history');
  t.equal((await api.as(cat).get(`/messages/${before[0]}`)).body.msg, 'Invalid message(s)');
  t.equal((await api.as(cat).get(`/messages/${before[1]}`)).status, 200);
});

t.test('GET /messages/{id}: raw Markdown on request, and the flags of the caller', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const general = await channel(api, 'general', [1, ann.userId]);
  const id = await sendToChannel(api, general, 't', '*hi* @**Ann**');
  const raw = (await api.as(ann).get(`/messages/${id}`, { apply_markdown: false })).body;
  t.match(raw, { raw_content: '*hi* @**Ann**', message: { content: '*hi* @**Ann**', content_type: 'text/x-markdown', flags: ['mentioned'], sender_id: 1, sender_email: 'owner@example.com', sender_full_name: 'Owner' } });
  t.equal(raw.message.avatar_url, '/user_avatars/default/1/O.svg?version=1', 'the server\'s own default picture, relative to the realm');
  t.same(Object.keys(raw.message).sort(), ['avatar_url', 'client', 'content', 'content_type', 'display_recipient', 'flags', 'id', 'is_me_message', 'reactions',
    'recipient_id', 'sender_email', 'sender_full_name', 'sender_id', 'sender_realm_str', 'stream_id', 'subject', 'submessages', 'timestamp', 'topic_links', 'type']);
});
