import t from 'tap';
import { channel, drain, ofType, sendDirect, sendToChannel, type Event } from './helpers/messages.ts';
import { startTestServer, type ApiClient } from './helpers/server.ts';

const CAPS = { client_capabilities: { empty_topic_name: true } };
const ids = (events: Event[]) => ofType(events, 'message').map((event) => (event.message as { id: number }).id);

/** Registers a message queue for each narrow, as one user. */
async function queues(api: ApiClient, narrows: Record<string, unknown[]>, extra: Record<string, unknown> = {}) {
  const out: Record<string, string> = {};
  for (const [name, narrow] of Object.entries(narrows)) out[name] = (await api.register({ event_types: ['message'], narrow, ...CAPS, ...extra })).queueId;
  return out;
}

t.test('a narrowed queue takes only the message events matching every term', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const general = await channel(api, 'General', [1, ann.userId, bob.userId]);
  const other = await channel(api, 'other', [1, ann.userId, bob.userId]);
  const q = await queues(api.as(ann), {
    all: [],
    channel: [['stream', 'general']],
    channelById: [['channel', String(general)]],
    topic: [['topic', 'lunch']],
    exactTopic: [['exact-topic', 'Lunch plans']],
    sender: [['sender', bob.email.toUpperCase()]],
    dm: [['is', 'dm']],
    legacyPrivate: [['is', 'private']],
    mentioned: [['is', 'mentioned']],
    unread: [['is', 'unread']],
    resolved: [['is', 'resolved']],
    both: [['channel', 'general'], ['sender', bob.email]],
  });

  const m1 = await sendToChannel(api, general, 'Lunch plans', 'tacos?');
  const m2 = await sendToChannel(api.as(bob), other, 'lunch', 'pizza');
  const m3 = await sendToChannel(api.as(bob), general, 'work', 'hi @**Ann**');
  const m4 = await sendDirect(api.as(bob), [ann.userId], 'psst');
  const m5 = await sendToChannel(api.as(ann), general, '✔ done', 'closed');
  const m6 = await sendToChannel(api, general, 'brunch', 'not lunch');

  const got = async (name: string) => ids(await drain(api.as(ann), q[name]!));
  t.same(await got('all'), [m1, m2, m3, m4, m5, m6]);
  t.same(await got('channel'), [m1, m3, m5, m6], 'channel by name, ignoring case');
  t.same(await got('channelById'), [m1, m3, m5, m6], 'channel by id');
  t.same(await got('topic'), [m1, m2], 'topic: the whole topic or one of its words, ignoring case');
  t.same(await got('exactTopic'), [m1], 'exact-topic: exactly');
  t.same(await got('sender'), [m2, m3, m4], 'sender by email, ignoring case');
  t.same(await got('dm'), [m4]);
  t.same(await got('legacyPrivate'), [m4]);
  t.same(await got('mentioned'), [m3], 'by the recipient’s flags');
  t.same(await got('unread'), [m1, m2, m3, m4, m6], 'ann’s own message is read');
  t.same(await got('resolved'), [m5]);
  t.same(await got('both'), [m3], 'every term must match');
});

t.test('narrows filter message events only; other events are unaffected', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const general = await channel(api, 'general', [1, ann.userId]);
  const { queueId } = await api.as(ann).register({ event_types: ['message', 'reaction', 'update_message', 'typing'], narrow: [['is', 'dm']] });
  const message = await sendToChannel(api, general, 'x', 'hello');
  await api.post(`/messages/${message}/reactions`, { emoji_name: 'tada' });
  await api.patch(`/messages/${message}`, { content: 'edited' });
  await api.post('/typing', { op: 'start', to: [ann.userId] });
  t.same((await drain(api.as(ann), queueId)).map((event) => event.type), ['reaction', 'update_message', 'typing']);
});

t.test('a channel narrow yields nothing unless subscribed; all_public_streams widens it to public channels', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const eve = await api.createUser('eve@example.com', 'Eve');
  const general = await channel(api, 'general', [1, ann.userId]);
  const secret = await channel(api, 'secret', [1, ann.userId], { invite_only: true });
  const eveNarrow = await api.as(eve).register({ event_types: ['message'], narrow: [['channel', 'general']] });
  const eveAll = await api.as(eve).register({ event_types: ['message'], all_public_streams: true, ...CAPS });
  const eveAllNarrow = await api.as(eve).register({ event_types: ['message'], all_public_streams: true, narrow: [['channel', 'general']], ...CAPS });
  const eveAllSecret = await api.as(eve).register({ event_types: ['message'], all_public_streams: true, narrow: [['channel', 'secret']] });
  const eveAllDm = await api.as(eve).register({ event_types: ['message'], all_public_streams: true, narrow: [['is', 'dm']] });
  const annAll = await api.as(ann).register({ event_types: ['message'], all_public_streams: true, ...CAPS });

  const inGeneral = await sendToChannel(api, general, 't', 'public news');
  await sendToChannel(api, secret, 't', 'private news');
  const toEve = await sendDirect(api, [eve.userId], 'hi eve');

  t.same(ids(await drain(api.as(eve), eveNarrow.queueId)), [], 'not subscribed: nothing');
  const all = ofType(await drain(api.as(eve), eveAll.queueId), 'message');
  t.same(ids(all), [inGeneral, toEve], 'public channel messages and her own, never the private channel');
  t.same(all[0]!.flags, [], 'a message received only through all_public_streams has no flags (as the original)');
  t.same(ids(await drain(api.as(eve), eveAllNarrow.queueId)), [inGeneral], 'the channel narrow matches with all_public_streams');
  t.same(ids(await drain(api.as(eve), eveAllSecret.queueId)), [], 'but never opens a private channel');
  t.same(ids(await drain(api.as(eve), eveAllDm.queueId)), [toEve]);
  const annEvents = ofType(await drain(api.as(ann), annAll.queueId), 'message');
  t.same(ids(annEvents), [inGeneral, inGeneral + 1], 'a subscriber gets each message once');
  t.same(annEvents[0]!.flags, [], 'with her own flags (unread)');

  // Without the notification bot's "subscribed you" message, which would reach Eve's queues as well.
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }], principals: [eve.userId], send_new_subscription_messages: false });
  const later = await sendToChannel(api, general, 't', 'now subscribed');
  t.same(ids(await drain(api.as(eve), eveNarrow.queueId)), [later], 'once subscribed, the channel narrow matches');
  t.same(ids(await drain(api.as(eve), eveAll.queueId)), [later], 'and the all_public_streams queue gets it once');
});

t.test('register refuses narrows an event queue cannot filter by, and all_public_streams for guests', async (t) => {
  const { api } = await startTestServer(t);
  const guest = await api.createUser('guest@example.com', 'Guest');
  await api.patch(`/users/${guest.userId}`, { role: 600 });
  const cases: [Record<string, unknown>, string | RegExp][] = [
    [{ narrow: [['search', 'lunch']] }, 'Operator search not supported.'],
    [{ narrow: [['dm', 'ann@example.com']] }, 'Operator dm not supported.'],
    [{ narrow: [['is', 'followed']] }, 'Operand followed not supported.'],
    [{ narrow: [['stream']] }, /^narrow\[0\]: /],
    [{ narrow: '[["stream"' }, '"narrow" is not valid JSON.'],
  ];
  for (const [params, msg] of cases) {
    const result = await api.post('/register', params);
    t.match({ status: result.status, code: result.body.code, msg: result.body.msg }, { status: 400, code: 'BAD_REQUEST', msg }, JSON.stringify(params));
  }
  t.equal((await api.get('/events', { dont_block: true, narrow: [['search', 'x']] })).body.msg, 'Operator search not supported.',
    'also when GET /events makes the queue');
  t.equal((await api.as(guest).post('/register', { all_public_streams: true })).body.msg, 'User not authorized for this query');
  t.equal((await api.as(guest).post('/register', { all_public_streams: false })).status, 200);
});

t.test('a queue keeps its narrow and all_public_streams across a graceful restart', async (t) => {
  const first = await startTestServer(t);
  const ann = await first.api.createUser('ann@example.com', 'Ann');
  const eve = await first.api.createUser('eve@example.com', 'Eve');
  const general = await channel(first.api, 'general', [1, ann.userId]);
  const other = await channel(first.api, 'other', [1, ann.userId]);
  const narrowed = await first.api.as(ann).register({ event_types: ['message'], narrow: [['channel', 'general']] });
  const everything = await first.api.as(eve).register({ event_types: ['message'], all_public_streams: true });
  await first.stop();
  const second = await startTestServer(t, { dataDir: first.dataDir });
  const api = second.api;
  const inGeneral = await sendToChannel(api, general, 't', 'kept');
  await sendToChannel(api, other, 't', 'filtered');
  t.same(ids(await drain(api.as(ann), narrowed.queueId)), [inGeneral]);
  t.same(ids(await drain(api.as(eve), everything.queueId)), [inGeneral, inGeneral + 1]);
});
