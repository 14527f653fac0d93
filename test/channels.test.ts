import t from 'tap';
import { channel } from './helpers/messages.ts';
import { startTestServer, type ApiClient, type ApiResult } from './helpers/server.ts';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

async function events(api: ApiClient, queueId: string) {
  return (await api.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).body.events as Record<string, unknown>[];
}

t.test('subscribing creates channels, answers by user id, and announces it', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const { queueId: annQueue } = await api.as(ann).register({ event_types: ['stream', 'subscription'] });

  const first = await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'general', description: 'The *main* channel' }] });
  t.same(first.body.subscribed, { 1: ['general'] });
  t.same(first.body.already_subscribed, {});
  t.notOk('unauthorized' in first.body, 'unauthorized only when errors are not fatal');
  const again = await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'GENERAL' }], principals: ['ann@example.com', 'owner@example.com'] });
  t.same(again.body, { result: 'success', msg: '', subscribed: { [ann.userId]: ['general'] }, already_subscribed: { 1: ['general'] }, new_subscription_messages_sent: true });

  const mine = (await api.as(ann).get('/users/me/subscriptions', { include_subscribers: true })).body.subscriptions;
  t.match(mine, [{
    name: 'general', description: 'The *main* channel', rendered_description: '<p>The <em>main</em> channel</p>', invite_only: false,
    creator_id: 1, subscribers: [1, ann.userId], color: /^#[0-9a-f]{6}$/, is_muted: false, in_home_view: true, pin_to_top: false,
    desktop_notifications: null, stream_post_policy: 1, is_announcement_only: false, is_archived: false, first_message_id: null,
    history_public_to_subscribers: true, message_retention_days: null, date_created: Number,
  }]);

  const seen = await events(api.as(ann), annQueue);
  t.match(seen, [
    { type: 'stream', op: 'create', streams: [{ name: 'general' }] },
    { type: 'subscription', op: 'peer_add', user_ids: [1] },
    { type: 'subscription', op: 'add', subscriptions: [{ name: 'general', subscribers: [1, ann.userId] }] },
  ]);

  const unknown = await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }], principals: [999] });
  t.equal(unknown.status, 400);
  t.equal(unknown.body.code, 'BAD_REQUEST');
  const long = await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'x'.repeat(61) }] });
  t.match(long.body.msg, /too long/);
  const bad = await api.post('/users/me/subscriptions', { subscriptions: [{ nom: 'x' }] });
  t.equal(bad.body.code, 'BAD_REQUEST');
});


t.test('many subscribed at once: each newcomer is told every channel with its full list of subscribers', async (t) => {
  const { api } = await startTestServer(t);
  const { userId: earlier } = await api.createUser('earlier@example.com', 'Earlier');
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'old' }], principals: [earlier] });
  const newcomers = [];
  for (const name of ['ann', 'bob', 'cat']) newcomers.push(await api.createUser(`${name}@example.com`, name));
  const queues = await Promise.all(newcomers.map(async (user) => (await api.as(user).register({ event_types: ['subscription'] })).queueId));

  const ids = newcomers.map((user) => user.userId);
  const added = await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'old' }, { name: 'new' }], principals: ids });
  t.equal(added.status, 200);
  for (const [i, user] of newcomers.entries()) {
    const adds = (await events(api.as(user), queues[i]!)).filter((event) => event.op === 'add') as { subscriptions: { name: string; subscribers: number[] }[] }[];
    t.equal(adds.length, 1, `${user.email}: one event`);
    const lists = Object.fromEntries(adds[0]!.subscriptions.map((subscription) => [subscription.name, subscription.subscribers]));
    t.same(lists, { old: [earlier, ...ids], new: ids }, `${user.email}: each channel's own subscribers, all of them`);
  }
});
t.test('many subscribed at once: newcomers with the same view share an event, one with its own color gets its own', async (t) => {
  const { api } = await startTestServer(t);
  const newcomers = [];
  for (const name of ['ann', 'bob', 'cat']) newcomers.push(await api.createUser(`${name}@example.com`, name));
  const bob = newcomers[1]!;
  // Bob was in the channel before, with a color of his own: he gets it back (the original keeps it).
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'news' }], principals: [bob.userId] });
  const news = (await api.get('/get_stream_id', { stream: 'news' })).body.stream_id as number;
  const own = await api.as(bob).post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: news, property: 'color', value: '#123456' }] });
  t.equal(own.status, 200);
  t.equal((await api.delete('/users/me/subscriptions', { subscriptions: ['news'], principals: [bob.userId] })).status, 200);
  const queues = await Promise.all(newcomers.map(async (user) => (await api.as(user).register({ event_types: ['subscription'] })).queueId));

  const ids = newcomers.map((user) => user.userId);
  t.equal((await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'news' }], principals: ids })).status, 200);
  const colors: string[] = [];
  for (const [i, user] of newcomers.entries()) {
    const adds = (await events(api.as(user), queues[i]!)).filter((event) => event.op === 'add') as { subscriptions: { name: string; color: string; subscribers: number[] }[] }[];
    t.equal(adds.length, 1, `${user.email}: one event`);
    t.match(adds[0]!.subscriptions, [{ name: 'news', subscribers: ids }], `${user.email}: the channel with all its subscribers`);
    const stored = (await api.as(user).get('/users/me/subscriptions')).body.subscriptions as { name: string; color: string }[];
    t.equal(adds[0]!.subscriptions[0]!.color, stored.find((subscription) => subscription.name === 'news')!.color, `${user.email}: the color stored for this user`);
    colors.push(adds[0]!.subscriptions[0]!.color);
  }
  t.equal(colors[1], '#123456', 'bob has his own color back');
  t.equal(colors[0], colors[2], 'ann and cat got the same first color');
  t.not(colors[0], colors[1]);
});

t.test('joining and leaving many channels at once: each observer told exactly the channels it sees, the public ones in one event', async (t) => {
  const { api } = await startTestServer(t, { rateLimit: null });
  const [ann, bob, gus, gil] = [
    await api.createUser('ann@example.com', 'Ann'), await api.createUser('bob@example.com', 'Bob'), await api.createUser('gus@example.com', 'Gus'), await api.createUser('gil@example.com', 'Gil'),
  ];
  for (const guest of [gus, gil]) t.equal((await api.patch(`/users/${guest.userId}`, { role: 600 })).status, 200, `${guest.email} is a guest`);
  const names = Array.from({ length: 300 }, (_, i) => `public ${i}`);
  t.equal((await api.post('/users/me/subscriptions', { subscriptions: names.map((name) => ({ name })) })).status, 200);
  t.equal((await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'with a guest' }], principals: [1, gus.userId] })).status, 200);
  t.equal((await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'public 7' }, { name: 'public 8' }], principals: [gil.userId] })).status, 200);
  t.equal((await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], invite_only: true })).status, 200);
  const idOf = async (name: string) => (await api.get('/get_stream_id', { stream: name })).body.stream_id as number;
  const publicIds = await Promise.all(names.map(idOf));
  const [withGuest, secret] = [await idOf('with a guest'), await idOf('secret')];
  const observers = { owner: api, bob: api.as(bob), gus: api.as(gus), gil: api.as(gil) };
  const queues = Object.fromEntries(await Promise.all(Object.entries(observers).map(async ([name, client]) => [name, (await client.register({ event_types: ['subscription'] })).queueId])));
  /** Each observer's peer events of `op`, and the (channel, user) pairs they tell. */
  const told = async (op: string) => {
    const out = {} as Record<keyof typeof observers, { events: number; pairs: string[] }>;
    for (const [name, client] of Object.entries(observers) as [keyof typeof observers, ApiClient][]) {
      const peer = (await events(client, queues[name]!)).filter((event) => event.op === op) as { stream_ids: number[]; user_ids: number[] }[];
      out[name] = { events: peer.length, pairs: peer.flatMap((event) => event.stream_ids.flatMap((channel) => event.user_ids.map((user) => `${channel}:${user}`))).sort() };
    }
    return out;
  };
  const pairs = (channels: number[]) => channels.map((channel) => `${channel}:${ann.userId}`).sort();
  const everyPublic = [...publicIds, withGuest];

  // Ann joins all 301 public channels; the owner adds her to the private one.
  t.equal((await api.as(ann).post('/users/me/subscriptions', { subscriptions: [...names, 'with a guest'].map((name) => ({ name })) })).status, 200);
  t.equal((await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], principals: [ann.userId] })).status, 200);
  let seen = await told('peer_add');
  t.same(seen.owner.pairs, pairs([...everyPublic, secret]), 'the owner (an administrator): every channel');
  t.same(seen.bob.pairs, pairs(everyPublic), 'a member: the public channels');
  t.same(seen.gus.pairs, pairs([withGuest]), 'a guest: only the channel it is in');
  t.same(seen.gil.pairs, pairs([publicIds[7]!, publicIds[8]!]), 'another guest: only its channels');
  t.equal(seen.bob.events, 1, 'the 301 public channels in one event, whichever guests they have');

  t.equal((await api.as(ann).delete('/users/me/subscriptions', { subscriptions: [...names, 'with a guest', 'secret'] })).status, 200);
  seen = await told('peer_remove');
  t.same(seen.owner.pairs, pairs([...everyPublic, secret]), 'leaving: the owner, every channel');
  t.same(seen.bob.pairs, pairs(everyPublic), 'leaving: a member, the public channels');
  t.same(seen.gus.pairs, pairs([withGuest]), 'leaving: a guest, only its channel');
  t.same(seen.gil.pairs, pairs([publicIds[7]!, publicIds[8]!]), 'leaving: another guest, only its channels');
  t.equal(seen.bob.events, 1, 'leaving: the public channels in one event');
});

t.test('private channels: only the allowed may join; non-fatal errors are listed', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], invite_only: true });
  const refused = await api.as(ann).post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }] });
  t.equal(refused.body.code, 'BAD_REQUEST');
  t.match(refused.body.msg, /Unable to access channel \(secret\)/);
  const soft = await api.as(ann).post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }, { name: 'open' }], authorization_errors_fatal: false });
  t.same(soft.body.unauthorized, ['secret']);
  t.same(soft.body.subscribed, { [ann.userId]: ['open'] });
  const id = (await api.get('/get_stream_id', { stream: 'secret' })).body.stream_id;
  t.equal((await api.as(ann).get(`/streams/${id}`)).body.code, 'BAD_REQUEST', 'a private channel is invisible to non-subscribers');
  t.equal((await api.as(ann).get('/get_stream_id', { stream: 'secret' })).body.code, 'BAD_REQUEST');
  // The owner (an administrator) adds Ann; now she sees it.
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], principals: [ann.userId] });
  t.same((await api.as(ann).get(`/streams/${id}/members`)).body.subscribers, [1, ann.userId]);
  t.same((await api.get(`/users/${ann.userId}/subscriptions/${id}`)).body.is_subscribed, true);
});

t.test('unsubscribe, properties, channel edits, archiving and default channels', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'a' }, { name: 'b' }], principals: [1, ann.userId] });
  const a = (await api.get('/get_stream_id', { stream: 'a' })).body.stream_id;
  const b = (await api.get('/get_stream_id', { stream: 'b' })).body.stream_id;
  const { queueId } = await api.as(ann).register({ event_types: ['subscription', 'stream', 'default_streams'], client_capabilities: { archived_channels: true } });
  const { queueId: legacyQueue } = await api.as(ann).register({ event_types: ['stream'] });

  t.equal((await api.as(ann).delete('/users/me/subscriptions', { subscriptions: ['a'], principals: [1] })).body.code, 'UNAUTHORIZED_PRINCIPAL', 'members cannot remove others');
  const left = await api.as(ann).delete('/users/me/subscriptions', { subscriptions: ['a', 'b'] });
  t.same([left.body.removed, left.body.not_removed], [['a', 'b'], []]);
  const twice = await api.as(ann).delete('/users/me/subscriptions', { subscriptions: ['a'] });
  t.same([twice.body.removed, twice.body.not_removed], [[], ['a']]);
  const registered = await api.as(ann).register({ fetch_event_types: ['subscription'] });
  t.same(registered.body.subscriptions, []);
  t.same(registered.body.unsubscribed.map((s: { name: string }) => s.name).sort(), ['a', 'b']);

  // Properties: all entries are checked before any applies.
  const atomic = await api.post('/users/me/subscriptions/properties', { subscription_data: [
    { stream_id: a, property: 'pin_to_top', value: true }, { stream_id: b, property: 'color', value: 'red' },
  ] });
  t.match(atomic.body.msg, /Invalid color/);
  t.equal((await api.get('/users/me/subscriptions')).body.subscriptions.find((s: { stream_id: number }) => s.stream_id === a).pin_to_top, false);
  t.equal((await api.post('/users/me/subscriptions/properties', { subscription_data: [
    { stream_id: a, property: 'is_muted', value: true }, { stream_id: b, property: 'color', value: '#AABBCC' },
  ] })).status, 200);
  const subs = (await api.get('/users/me/subscriptions')).body.subscriptions;
  t.match(subs.find((s: { stream_id: number }) => s.stream_id === a), { is_muted: true, in_home_view: false });
  t.match(subs.find((s: { stream_id: number }) => s.stream_id === b), { color: '#aabbcc' });
  t.match((await api.as(ann).post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: a, property: 'is_muted', value: true }] })).body.msg, /Not subscribed/);
  const { queueId: ownerQueue } = await api.register({ event_types: ['subscription'] });
  await api.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: a, property: 'in_home_view', value: true }] });
  t.match(await events(api, ownerQueue), [
    { type: 'subscription', op: 'update', stream_id: a, property: 'is_muted', value: false },
    { type: 'subscription', op: 'update', stream_id: a, property: 'in_home_view', value: true },
  ]);

  // Editing a channel needs administering rights.
  t.equal((await api.as(ann).patch(`/streams/${a}`, { description: 'x' })).body.code, 'UNAUTHORIZED_PRINCIPAL');
  t.equal((await api.patch(`/streams/${a}`, { new_name: 'alpha', description: '**bold**' })).status, 200);
  t.match((await api.get(`/streams/${a}`)).body.stream, { name: 'alpha', rendered_description: '<p><strong>bold</strong></p>' });
  t.match((await api.patch(`/streams/${b}`, { new_name: 'ALPHA' })).body.msg, /already exists/);
  t.equal((await api.post('/default_streams', { stream_id: b })).status, 200);
  t.match((await api.get('/streams', { include_default: true })).body.streams.find((s: { stream_id: number }) => s.stream_id === b), { is_default: true });
  t.notOk('is_default' in (await api.get('/streams')).body.streams.find((s: { stream_id: number }) => s.stream_id === b), 'is_default only when include_default asks for it');
  t.notOk('is_default' in (await api.get(`/streams/${b}`)).body.stream, 'nor in GET /streams/{id}');
  t.equal((await api.delete(`/streams/${b}`)).status, 200);
  t.notOk((await api.get('/streams')).body.streams.some((s: { stream_id: number }) => s.stream_id === b), 'archived channels are left out');
  t.match((await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'b' }] })).body.msg, /archived/);
  t.match(await events(api.as(ann), queueId), [
    { type: 'subscription', op: 'remove', subscriptions: [{ stream_id: a, name: 'a' }, { stream_id: b, name: 'b' }] },
    // Public channels stay visible after leaving them, so their updates still arrive.
    { type: 'stream', op: 'update', stream_id: a, property: 'name', value: 'alpha' },
    { type: 'stream', op: 'update', stream_id: a, property: 'description', value: '**bold**', rendered_description: '<p><strong>bold</strong></p>' },
    { type: 'default_streams', default_streams: [b] },
    { type: 'stream', op: 'update', stream_id: b, property: 'is_archived', value: true },
    { type: 'default_streams', default_streams: [] },
  ]);
  // A client without the archived_channels capability sees the archived channel deleted instead.
  const legacy = await events(api.as(ann), legacyQueue);
  t.match(legacy.at(-1), { type: 'stream', op: 'delete', stream_ids: [b], streams: [{ stream_id: b, name: 'b' }] });
  t.notOk(legacy.some((e) => e.property === 'is_archived'), 'no is_archived update for it');
});

t.test('channels and subscriptions survive a restart', async (t) => {
  const first = await startTestServer(t);
  await first.api.post('/channels/create', { name: 'kept', description: 'd', subscribers: [1] });
  await first.api.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: 1, property: 'pin_to_top', value: true }] });
  t.equal((await first.api.post('/channels/create', { name: 'kept', subscribers: [1] })).body.code, 'BAD_REQUEST', 'create refuses an existing name');
  await first.stop();
  const second = await startTestServer(t, { dataDir: first.dataDir });
  t.match((await second.api.get('/users/me/subscriptions')).body.subscriptions, [{ name: 'kept', description: 'd', pin_to_top: true }]);
  const created = await second.api.post('/channels/create', { name: 'next', subscribers: [1] });
  t.equal(created.body.id, 2, 'channel ids continue after a restart');
});

t.test('new users join the default channels', async (t) => {
  const { api } = await startTestServer(t);
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'welcome' }, { name: 'other' }] });
  const welcome = (await api.get('/get_stream_id', { stream: 'welcome' })).body.stream_id;
  await api.post('/default_streams', { stream_id: welcome });
  const { queueId } = await api.register({ event_types: ['subscription'] });
  const ann = await api.createUser('ann@example.com', 'Ann');
  t.same((await api.as(ann).get('/users/me/subscriptions')).body.subscriptions.map((s: { name: string }) => s.name), ['welcome']);
  t.match(await events(api, queueId), [{ type: 'subscription', op: 'peer_add', stream_ids: [welcome], user_ids: [ann.userId] }]);
  t.equal((await api.as(ann).delete('/default_streams', { stream_id: welcome })).body.code, 'BAD_REQUEST', 'only administrators manage default channels');
});

t.test('topics of a channel, and activity computed from its messages', async (t) => {
  const { api, server } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'work' }, { name: 'hidden' }] });
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], invite_only: true });
  const work = (await api.get('/get_stream_id', { stream: 'work' })).body.stream_id;
  const secret = (await api.get('/get_stream_id', { stream: 'secret' })).body.stream_id;
  const send = (to: string, topic: string) => api.post('/messages', { type: 'stream', to, topic, content: 'hi' });
  const first = (await send('work', 'Alpha')).body.id;
  const second = (await send('work', 'beta')).body.id;
  const third = (await send('work', 'alpha')).body.id;
  const empty = (await send('work', '')).body.id;
  await send('secret', 'plans');

  t.same((await api.get(`/users/me/${work}/topics`)).body.topics, [
    { name: 'general chat', max_id: empty }, { name: 'alpha', max_id: third }, { name: 'beta', max_id: second },
  ], 'newest first, one entry per topic whatever its case, the latest spelling');
  t.equal((await api.get(`/users/me/${work}/topics`, { allow_empty_topic_name: true })).body.topics[0].name, '');
  t.ok(first < second, 'ids grow');
  t.same((await api.as(ann).get(`/users/me/${work}/topics`)).body.topics.length, 3, 'a public channel is readable by members');
  t.equal((await api.as(ann).get(`/users/me/${secret}/topics`)).body.code, 'BAD_REQUEST', 'a private channel is not');

  const stream = (await api.get(`/streams/${work}`)).body.stream;
  t.equal(stream.is_recently_active, true);
  t.equal(stream.stream_weekly_traffic, null, 'no traffic figure for a channel under a week old');
  // Five weeks later: the channel is old enough for a traffic figure, and quiet.
  const clock = server.runtime.clock as { now: () => number };
  const realNow = clock.now;
  const later = realNow() + 35 * 24 * 3600 * 1000;
  clock.now = () => later;
  t.teardown(() => void (clock.now = realNow));
  const quiet = (await api.get(`/streams/${work}`)).body.stream;
  t.same([quiet.is_recently_active, quiet.stream_weekly_traffic], [false, 0]);
  await send('work', 'again');
  const busy = (await api.get(`/streams/${work}`)).body.stream;
  t.same([busy.is_recently_active, busy.stream_weekly_traffic], [true, 0], 'one message in four weeks rounds to 0 a week');
});

type View = Record<string, unknown> & { stream_id: number };

/**
 * Reads the owner's channel lists (subscriptions, streams, registration) and compares each entry with its
 * channel's own view (GET /streams/{id}, built afresh each time) and subscribers (GET /streams/{id}/members).
 * Reading them also keeps each channel's texts (channels/view-json.ts) for the next call to compare.
 */
async function checkLists(t: Test, api: ApiClient, step: string, lengths?: number[]) {
  const lists: [string, View[]][] = [];
  lists.push(['GET /users/me/subscriptions', (await api.get('/users/me/subscriptions', { include_subscribers: true })).body.subscriptions]);
  lists.push(['GET /streams', (await api.get('/streams')).body.streams]);
  const { body } = await api.register({ fetch_event_types: ['subscription', 'stream'], include_subscribers: true });
  for (const key of ['subscriptions', 'unsubscribed', 'never_subscribed', 'streams']) lists.push([`registration ${key}`, body[key]]);
  if (lengths) t.same(lists.map(([, list]) => list.length), lengths, `${step}: every list`);
  for (const [name, list] of lists) {
    for (const entry of list) {
      const own = (await api.get(`/streams/${entry.stream_id}`)).body.stream as View;
      t.same(Object.fromEntries(Object.keys(own).map((key) => [key, entry[key]])), own, `${step}: ${name}, channel ${entry.stream_id}`);
      if ('subscribers' in entry) t.same(entry.subscribers, (await api.get(`/streams/${entry.stream_id}/members`)).body.subscribers, `${step}: ${name} subscribers`);
    }
  }
}

t.test('the channel lists (subscriptions, streams, registration) follow every change as one channel\'s view does', async (t) => {
  // The lists keep each channel's settled fields as text until a change touches the channel; a message sent
  // or deleted touches none, and the traffic follows the clock.
  const { api, server } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'work' }, { name: 'left' }] });
  await api.as(ann).post('/users/me/subscriptions', { subscriptions: [{ name: 'other' }] });
  await api.delete('/users/me/subscriptions', { subscriptions: ['left'] });
  const ids = Object.fromEntries(((await api.get('/streams')).body.streams as { name: string; stream_id: number }[]).map((s) => [s.name, s.stream_id]));
  const work = ids.work!;

  const check = (step: string) => checkLists(t, api, step, [1, 3, 1, 1, 1, 3]);

  await check('at first');
  const sent = await api.post('/messages', { type: 'stream', to: work, topic: 't', content: 'first' });
  await check('after the first message');
  t.equal((await api.get(`/streams/${work}`)).body.stream.first_message_id, sent.body.id);

  const clock = server.runtime.clock as { now: () => number };
  const realNow = clock.now;
  const later = realNow() + 35 * 24 * 3600 * 1000;
  clock.now = () => later;
  t.teardown(() => void (clock.now = realNow));
  await check('five weeks later');
  t.equal((await api.get(`/streams/${work}`)).body.stream.is_recently_active, false);
  const again = await api.post('/messages', { type: 'stream', to: work, topic: 't', content: 'again' });
  await check('after a message five weeks later');

  t.equal((await api.patch(`/streams/${work}`, { new_name: 'work2', description: 'new *words*' })).status, 200);
  await check('after a rename');
  t.equal((await api.get(`/streams/${work}`)).body.stream.name, 'work2');
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'work2' }], principals: [ann.userId] });
  await check('after a subscriber joined');
  t.equal((await api.get(`/streams/${work}`)).body.stream.subscriber_count, 2);
  t.equal((await api.delete(`/messages/${sent.body.id}`)).status, 200);
  await check('after the first message was deleted');
  t.equal((await api.get(`/streams/${work}`)).body.stream.first_message_id, again.body.id);
});

t.test('after each kind of realm change the lists rebuild the texts of the channels it touched, and only those stay as they were', async (t) => {
  // Each step reads the lists before its change, so that every channel's texts are kept, and compares them
  // with fresh views after it: a change classified as touching fewer channels than it does (channels/touched.ts)
  // would serve a kept text gone stale.
  const { api } = await startTestServer(t, { rateLimit: null });
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const work = await channel(api, 'work', [1, ann.userId]);
  const other = await channel(api.as(ann), 'other', [ann.userId]);
  const secret = await channel(api, 'secret', [1], { invite_only: true });
  const quiet = await channel(api, 'quiet', [1]);
  const groups = (await api.get('/user_groups')).body.user_groups as { name: string; id: number }[];
  const admins = groups.find((group) => group.name === 'role:administrators')!.id;
  await checkLists(t, api, 'at first', [3, 4, 3, 0, 1, 4]);

  async function step(name: string, change: () => Promise<ApiResult>) {
    const { status, body } = await change();
    t.equal(status, 200, `${name}: ${JSON.stringify(body)}`);
    await checkLists(t, api, `after ${name}`);
  }
  const stream = async (id: number) => (await api.get(`/streams/${id}`)).body.stream;

  await step('a description changed', () => api.patch(`/streams/${work}`, { description: 'new *words*' }));
  await step('posting left to administrators', () => api.patch(`/streams/${work}`, { can_send_message_group: { new: admins } }));
  t.match(await stream(work), { stream_post_policy: 2, is_announcement_only: true });
  await step('a channel made private', () => api.patch(`/streams/${other}`, { is_private: true }));

  await step('another user subscribed', () => api.post('/users/me/subscriptions', { subscriptions: [{ name: 'other' }], principals: [bob.userId] }));
  t.equal((await stream(other)).subscriber_count, 2);
  await step('another user subscribed to two channels at once', () => api.post('/users/me/subscriptions', { subscriptions: [{ name: 'work' }, { name: 'secret' }], principals: [bob.userId] }));
  await step('another user unsubscribed from three channels at once', () => api.delete('/users/me/subscriptions', { subscriptions: ['work', 'other', 'secret'], principals: [bob.userId] }));
  t.same([(await stream(work)).subscriber_count, (await stream(secret)).subscriber_count], [2, 1]);
  await step('another user unsubscribed', () => api.delete('/users/me/subscriptions', { subscriptions: ['work'], principals: [ann.userId] }));

  await step('a subscriber deactivated', () => api.delete(`/users/${ann.userId}`));
  await step('a subscriber reactivated', () => api.post(`/users/${ann.userId}/reactivate`));
  await step('a subscriber made a moderator', () => api.patch(`/users/${ann.userId}`, { role: 300 }));
  await step('a subscriber made a guest', () => api.patch(`/users/${ann.userId}`, { role: 600 }));

  const crew = (await api.post('/user_groups/create', { name: 'crew', description: 'd', members: [bob.userId] })).body.group_id as number;
  await step('a channel permission given to a group', () => api.patch(`/streams/${secret}`, { can_send_message_group: { new: crew } }));
  await step('a channel permission given to a group and a user', () => api.patch(`/streams/${work}`, { can_administer_channel_group: { new: { direct_members: [bob.userId], direct_subgroups: [crew] } } }));
  await step('members of that group changed', () => api.post(`/user_groups/${crew}/members`, { add: [1], delete: [bob.userId] }));
  await step('that group renamed', () => api.patch(`/user_groups/${crew}`, { name: 'crew2' }));

  await step('a user renamed', () => api.patch(`/users/${bob.userId}`, { full_name: 'Robert' }));
  await step('the organization renamed', () => api.patch('/realm', { name: 'Renamed' }));
  await step('a channel made a default one', () => api.post('/default_streams', { stream_id: work }));
  await step('a newcomer joined the default channels', async () => (await api.post('/users', { email: 'cat@example.com', password: 'a-Strong-passw0rd-for-tests', full_name: 'Cat' })));
  t.equal((await stream(work)).subscriber_count, 2);
  await step('a channel created by someone else', () => api.as(bob).post('/users/me/subscriptions', { subscriptions: [{ name: 'new' }] }));
  await step('a channel archived', () => api.delete(`/streams/${quiet}`));
  t.match((await api.get('/users/me/subscriptions')).body.subscriptions, [{}, {}, { stream_id: quiet, is_archived: true }], 'still in its subscribers\' lists');
});
