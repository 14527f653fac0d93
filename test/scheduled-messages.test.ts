import t from 'tap';
import { rmSync } from 'node:fs';
import { startChild } from './helpers/child.ts';
import { channel, drain, fetchIds, ofType } from './helpers/messages.ts';
import { startTestServer, tempDir, type ApiClient } from './helpers/server.ts';

const HOUR = 3600;

/** Stops the server's clock on a whole second; `later` moves it and lets the timer service see the new time. */
async function frozenServer(t: Parameters<typeof startTestServer>[0]) {
  const test = await startTestServer(t);
  let now = Math.ceil(Date.now() / 1000) * 1000;
  const { runtime } = test.server;
  runtime.clock.now = () => now;
  return {
    ...test,
    /** UNIX seconds on the server's clock */
    seconds: (offset = 0) => now / 1000 + offset,
    /** moves the clock forward and wakes the timer service, then waits for what it delivered to be durable */
    async later(seconds: number) {
      now += seconds * 1000;
      runtime.scheduled.wake();
      await new Promise((resolve) => setImmediate(resolve));
      await runtime.settled();
    },
  };
}

const schedule = (api: ApiClient, params: Record<string, unknown>) => api.post('/scheduled_messages', params);
const list = async (api: ApiClient) => (await api.get('/scheduled_messages')).body.scheduled_messages as Record<string, unknown>[];

async function scheduledId(api: ApiClient, params: Record<string, unknown>): Promise<number> {
  const result = await schedule(api, params);
  if (result.status !== 200) throw new Error(`schedule failed: ${JSON.stringify(result.body)}`);
  return result.body.scheduled_message_id;
}

t.test('schedule, list, edit and delete; events to the sender’s own queues; registration', async (t) => {
  const test = await frozenServer(t);
  const { api } = test;
  const bob = await api.createUser('bob@example.com', 'Bob');
  const carol = await api.createUser('carol@example.com', 'Carol');
  const general = await channel(api, 'general', [1, bob.userId]);
  const { queueId } = await api.register({ event_types: ['scheduled_messages'] });
  const bobQueue = (await api.as(bob).register({ event_types: ['scheduled_messages'] })).queueId;

  const inChannel = await scheduledId(api, { type: 'stream', to: String(general), topic: 'plans', content: 'See **you**\n\n', scheduled_delivery_timestamp: test.seconds(2 * HOUR) });
  const direct = await scheduledId(api, { type: 'direct', to: [carol.userId, bob.userId, carol.userId], content: 'psst', scheduled_delivery_timestamp: test.seconds(HOUR) });
  const toSelf = await scheduledId(api, { type: 'private', to: [1], content: 'note', scheduled_delivery_timestamp: test.seconds(3 * HOUR) });
  const asChannel = await scheduledId(api, { type: 'channel', to: String(general), topic: '(no topic)', content: 'x', scheduled_delivery_timestamp: test.seconds(4 * HOUR) });
  t.equal(new Set([inChannel, direct, toSelf, asChannel]).size, 4, 'each gets its own id');

  const listed = await list(api);
  t.same(listed.map((m) => m.scheduled_message_id), [direct, inChannel, toSelf, asChannel], 'soonest first');
  t.same(listed[1], {
    scheduled_message_id: inChannel, type: 'stream', to: general, topic: 'plans', content: 'See **you**',
    rendered_content: '<p>See <strong>you</strong></p>', scheduled_delivery_timestamp: test.seconds(2 * HOUR), failed: false,
  }, 'a channel message: one channel id and a topic; content as the send stores it');
  t.same(listed[0], {
    scheduled_message_id: direct, type: 'private', to: [bob.userId, carol.userId].sort((a, b) => a - b), content: 'psst',
    rendered_content: '<p>psst</p>', scheduled_delivery_timestamp: test.seconds(HOUR), failed: false,
  }, 'a direct message: the other participants, unique and sorted, and no topic');
  t.same(listed[2]!.to, [1], 'a note to self names the sender');
  t.match(listed[3], { type: 'stream', topic: '' }, '`channel` is accepted; `(no topic)` is the empty topic');
  t.same(await list(api.as(bob)), [], 'nobody else sees them');

  t.equal((await api.patch(`/scheduled_messages/${inChannel}`, { content: 'Changed _text_' })).status, 200);
  t.equal((await api.patch(`/scheduled_messages/${inChannel}`, { topic: 'general chat' })).status, 200);
  t.match((await list(api)).find((m) => m.scheduled_message_id === inChannel), { content: 'Changed _text_', rendered_content: '<p>Changed <em>text</em></p>', topic: '', to: general });
  t.equal((await api.patch(`/scheduled_messages/${direct}`, { topic: 'ignored' })).status, 200, 'a topic for a direct message is ignored');
  t.notOk('topic' in (await list(api)).find((m) => m.scheduled_message_id === direct)!);
  t.equal((await api.patch(`/scheduled_messages/${direct}`, { type: 'stream', to: String(general), topic: 'now public' })).status, 200);
  t.match((await list(api)).find((m) => m.scheduled_message_id === direct), { type: 'stream', to: general, topic: 'now public', content: 'psst' });
  t.equal((await api.patch(`/scheduled_messages/${direct}`, { type: 'direct', to: [bob.userId] })).status, 200);
  t.match((await list(api)).find((m) => m.scheduled_message_id === direct), { type: 'private', to: [bob.userId] });
  t.notOk('topic' in (await list(api)).find((m) => m.scheduled_message_id === direct)!);
  t.equal((await api.patch(`/scheduled_messages/${direct}`, { to: [carol.userId] })).status, 200, '`to` alone keeps the type');
  t.equal((await api.patch(`/scheduled_messages/${toSelf}`, { scheduled_delivery_timestamp: test.seconds(30) })).status, 200);
  t.same((await list(api)).map((m) => m.scheduled_message_id), [toSelf, direct, inChannel, asChannel], 'a new time reorders the list');

  t.equal((await api.delete(`/scheduled_messages/${asChannel}`)).status, 200);
  t.equal((await list(api)).length, 3);

  const events = await drain(api, queueId);
  t.same(events.map((e) => `${e.type}:${e.op}`), [
    ...Array(4).fill('scheduled_messages:add'), ...Array(7).fill('scheduled_messages:update'), 'scheduled_messages:remove',
  ]);
  t.same((events[0]!.scheduled_messages as { scheduled_message_id: number }[]).map((m) => m.scheduled_message_id), [inChannel]);
  t.match(events[4], { scheduled_message: { scheduled_message_id: inChannel, content: 'Changed _text_', rendered_content: '<p>Changed <em>text</em></p>', failed: false } });
  t.same(events[11], { type: 'scheduled_messages', op: 'remove', scheduled_message_id: asChannel, id: events[11]!.id });
  t.same(await drain(api.as(bob), bobQueue), [], "another user's queue gets none of them");

  const registered = (await api.register({ fetch_event_types: ['scheduled_messages'] })).body;
  t.same(registered.scheduled_messages, await list(api), 'registration: the same list');
  t.notOk('scheduled_messages' in (await api.register({ fetch_event_types: ['drafts'] })).body, 'only when asked for');
});

t.test('scheduling errors: the checks of a send, now', async (t) => {
  const test = await frozenServer(t);
  const { api } = test;
  const bob = await api.createUser('bob@example.com', 'Bob');
  const general = await channel(api, 'general', [1]);
  await channel(api, 'secret', [bob.userId], { invite_only: true });
  const secret = (await api.as(bob).get('/get_stream_id', { stream: 'secret' })).body.stream_id;
  const at = test.seconds(HOUR);
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ type: 'stream', to: String(general), topic: 't', content: 'x', scheduled_delivery_timestamp: test.seconds(0) }, 'BAD_REQUEST', /^Scheduled delivery time must be in the future\.$/],
    [{ type: 'stream', to: String(general), topic: 't', content: 'x', scheduled_delivery_timestamp: test.seconds(-60) }, 'BAD_REQUEST', /must be in the future/],
    [{ type: 'stream', to: '999', topic: 't', content: 'x', scheduled_delivery_timestamp: at }, 'STREAM_DOES_NOT_EXIST', /^Channel with ID '999' does not exist$/],
    [{ type: 'stream', to: String(secret), topic: 't', content: 'x', scheduled_delivery_timestamp: at }, 'BAD_REQUEST', /Not authorized to send/],
    [{ type: 'stream', to: 'general', topic: 't', content: 'x', scheduled_delivery_timestamp: at }, 'BAD_REQUEST', /^Invalid data type for channel ID$/],
    [{ type: 'stream', to: String(general), content: 'x', scheduled_delivery_timestamp: at }, 'BAD_REQUEST', /^Missing topic$/],
    [{ type: 'stream', to: String(general), topic: 't', content: ' ', scheduled_delivery_timestamp: at }, 'BAD_REQUEST', /^Message must not be empty$/],
    [{ type: 'direct', to: [999], content: 'x', scheduled_delivery_timestamp: at }, 'BAD_REQUEST', /^Invalid user ID 999$/],
    [{ type: 'direct', to: 5, content: 'x', scheduled_delivery_timestamp: at }, 'BAD_REQUEST', /^Invalid data type for recipients$/],
    [{ type: 'direct', to: ['bob@example.com'], content: 'x', scheduled_delivery_timestamp: at }, 'BAD_REQUEST', /^Recipient list may only contain user IDs$/],
    [{ type: 'letter', to: [bob.userId], content: 'x', scheduled_delivery_timestamp: at }, 'BAD_REQUEST', /type/],
    [{ type: 'direct', to: [bob.userId], content: 'x' }, 'REQUEST_VARIABLE_MISSING', /scheduled_delivery_timestamp/],
    [{ type: 'direct', to: [bob.userId], content: 'x', scheduled_delivery_timestamp: 'soon' }, 'BAD_REQUEST', /scheduled_delivery_timestamp/],
  ];
  for (const [params, code, msg] of cases) {
    const result = await schedule(api, params);
    t.equal(result.status, 400, String(msg));
    t.match(result.body, { result: 'error', code, msg }, String(msg));
  }
  t.match((await schedule(api, { type: 'stream', to: '999', topic: 't', content: 'x', scheduled_delivery_timestamp: at })).body, { stream_id: 999 });
  await api.delete(`/users/${bob.userId}`);
  t.match((await schedule(api, { type: 'direct', to: [bob.userId], content: 'x', scheduled_delivery_timestamp: at })).body, { code: 'BAD_REQUEST', msg: /no longer using/ });
  t.same(await list(api), [], 'nothing was scheduled');
});

t.test('editing errors: every rule of PATCH /scheduled_messages/{id}', async (t) => {
  const test = await frozenServer(t);
  const { api } = test;
  const bob = await api.createUser('bob@example.com', 'Bob');
  const general = await channel(api, 'general', [1]);
  const id = await scheduledId(api, { type: 'direct', to: [bob.userId], content: 'x', scheduled_delivery_timestamp: test.seconds(HOUR) });
  const before = await list(api);
  const cases: [string, Record<string, unknown>, number, string, RegExp][] = [
    [`/scheduled_messages/${id}`, {}, 400, 'BAD_REQUEST', /^Nothing to change$/],
    [`/scheduled_messages/${id}`, { type: 'stream' }, 400, 'BAD_REQUEST', /^Recipient required when updating type of scheduled message\.$/],
    [`/scheduled_messages/${id}`, { type: 'channel', to: String(general) }, 400, 'BAD_REQUEST', /^Topic required when updating scheduled message type to stream\.$/],
    [`/scheduled_messages/${id}`, { type: 'stream', to: '4040', topic: 't' }, 400, 'STREAM_DOES_NOT_EXIST', /^Channel with ID '4040' does not exist$/],
    [`/scheduled_messages/${id}`, { to: [bob.userId, 777] }, 400, 'BAD_REQUEST', /^Invalid user ID 777$/],
    [`/scheduled_messages/${id}`, { content: '' }, 400, 'BAD_REQUEST', /^Message must not be empty$/],
    [`/scheduled_messages/${id}`, { scheduled_delivery_timestamp: test.seconds(-1) }, 400, 'BAD_REQUEST', /^Scheduled delivery time must be in the future\.$/],
    [`/scheduled_messages/${id + 100}`, { content: 'y' }, 404, 'BAD_REQUEST', /^Scheduled message does not exist$/],
    [`/scheduled_messages/abc`, { content: 'y' }, 400, 'BAD_REQUEST', /scheduled_message_id/],
  ];
  for (const [path, params, status, code, msg] of cases) {
    const result = await api.patch(path, params);
    t.equal(result.status, status, String(msg));
    t.match(result.body, { result: 'error', code, msg }, String(msg));
  }
  t.match((await api.patch(`/scheduled_messages/${id}`, { type: 'stream', to: '4040', topic: 't' })).body, { stream_id: 4040 });
  t.same(await list(api), before, 'a refused edit changes nothing');
  t.match((await api.delete(`/scheduled_messages/${id + 100}`)), { status: 404, body: { code: 'BAD_REQUEST', msg: 'Scheduled message does not exist' } });
  t.match((await api.as(bob).delete(`/scheduled_messages/${id}`)), { status: 404 }, "another user's scheduled message does not exist for them");
  t.match((await api.as(bob).patch(`/scheduled_messages/${id}`, { content: 'mine now' })), { status: 404 });
});

t.test('delivery: sent as its sender at the scheduled second, then removed', async (t) => {
  const test = await frozenServer(t);
  const { api } = test;
  const bob = await api.createUser('bob@example.com', 'Bob');
  const general = await channel(api, 'general', [1, bob.userId]);
  const { queueId } = await api.register({ event_types: ['scheduled_messages', 'message'] });
  const bobQueue = (await api.as(bob).register({ event_types: ['message'] })).queueId;
  // Each sent as from the client that scheduled it: its User-Agent's product, or its `client` parameter.
  const fromMobile = api.as(api.credentials, { 'User-Agent': 'ZulipMobile/27.232 (Android 14)' });
  const first = await scheduledId(fromMobile, { type: 'stream', to: String(general), topic: 'later', content: 'hello @**Bob**', scheduled_delivery_timestamp: test.seconds(HOUR) });
  const second = await scheduledId(api, { type: 'direct', to: [bob.userId], content: 'and you', scheduled_delivery_timestamp: test.seconds(HOUR + 1), read_by_sender: false, client: 'website' });
  await drain(api, queueId);

  await test.later(HOUR - 1);
  t.same(await fetchIds(api), [], 'one second early: nothing yet');
  t.equal((await list(api)).length, 2);

  await test.later(1);
  const [sent] = await fetchIds(api);
  t.ok(sent, 'sent at its second');
  const message = (await api.get(`/messages/${sent}`)).body.message;
  t.match(message, { sender_id: 1, type: 'stream', stream_id: general, subject: 'later', timestamp: test.seconds(), flags: ['read'], client: 'ZulipMobile' });
  t.match((await api.as(bob).get(`/messages/${sent}`)).body.message, { flags: ['mentioned'] }, 'rendered and checked now, as a send: Bob is mentioned');
  t.same((await list(api)).map((m) => m.scheduled_message_id), [second], 'the sent one left the list');
  const events = await drain(api, queueId);
  t.same(events.map((e) => `${e.type}:${e.op ?? ''}`), ['message:', 'scheduled_messages:remove'], 'the message, then its removal');
  t.equal(events[1]!.scheduled_message_id, first);
  t.equal(ofType(await drain(api.as(bob), bobQueue), 'message').length, 1);

  await test.later(1);
  const ids = await fetchIds(api);
  t.equal(ids.length, 2);
  t.same((await api.get(`/messages/${ids[1]}`)).body.message.flags, [], 'read_by_sender false leaves it unread');
  t.equal((await api.get(`/messages/${ids[1]}`)).body.message.client, 'website', 'the client the request named');
  t.same(await list(api), []);
  t.equal(test.server.runtime.scheduled.pending, 0);

  await test.later(HOUR);
  t.equal((await fetchIds(api)).length, 2, 'nothing is sent twice');
});

t.test('a send refused at delivery marks the message failed; an edit with a new time makes it pending again', async (t) => {
  const test = await frozenServer(t);
  const { api } = test;
  const bob = await api.createUser('bob@example.com', 'Bob');
  const general = await channel(api, 'general', [1, bob.userId]);
  const { queueId } = await api.as(bob).register({ event_types: ['scheduled_messages'] });
  const id = await scheduledId(api.as(bob), { type: 'stream', to: String(general), topic: 't', content: 'x', scheduled_delivery_timestamp: test.seconds(HOUR) });
  await drain(api.as(bob), queueId);
  t.equal((await api.delete(`/streams/${general}`)).status, 200, 'the channel is archived');

  await test.later(HOUR);
  t.same(await fetchIds(api), [], 'nothing was sent');
  t.match(await list(api.as(bob)), [{ scheduled_message_id: id, failed: true, content: 'x' }], 'kept, failed');
  t.match(await drain(api.as(bob), queueId), [{ type: 'scheduled_messages', op: 'update', scheduled_message: { scheduled_message_id: id, failed: true } }]);
  t.equal(test.server.runtime.scheduled.pending, 0, 'a failed message is not tried again');

  const refused = await api.as(bob).patch(`/scheduled_messages/${id}`, { content: 'y' });
  t.match(refused, { status: 400, body: { code: 'BAD_REQUEST', msg: 'Scheduled delivery time must be in the future.' } }, 'a failed message needs a new time');
  const general2 = await channel(api, 'general2', [1, bob.userId]);
  t.equal((await api.as(bob).patch(`/scheduled_messages/${id}`, { to: String(general2), scheduled_delivery_timestamp: test.seconds(60) })).status, 200);
  t.match(await list(api.as(bob)), [{ failed: false, to: general2, scheduled_delivery_timestamp: test.seconds(60) }], 'pending again');
  t.match(await drain(api.as(bob), queueId), [{ op: 'update', scheduled_message: { failed: false } }]);
  await test.later(60);
  t.equal((await fetchIds(api)).length, 1, 'and sent at its new time');
  t.same(await list(api.as(bob)), []);
});

t.test('a deactivated sender’s due message fails; the failure survives reactivation', async (t) => {
  const test = await frozenServer(t);
  const { api } = test;
  const bob = await api.createUser('bob@example.com', 'Bob');
  const id = await scheduledId(api.as(bob), { type: 'direct', to: [1], content: 'x', scheduled_delivery_timestamp: test.seconds(HOUR) });
  await api.delete(`/users/${bob.userId}`);
  await test.later(HOUR);
  t.same(await fetchIds(api), []);
  await api.post(`/users/${bob.userId}/reactivate`);
  t.match(await list(api.as(bob)), [{ scheduled_message_id: id, failed: true }]);
});

t.test('delivery with the real clock: at the scheduled second, by one timer', async (t) => {
  const { api, server } = await startTestServer(t);
  const bob = await api.createUser('bob@example.com', 'Bob');
  const deadline = Math.floor(Date.now() / 1000) + 2;
  await scheduledId(api, { type: 'direct', to: [bob.userId], content: 'on time', scheduled_delivery_timestamp: deadline });
  await scheduledId(api, { type: 'direct', to: [bob.userId], content: 'also on time', scheduled_delivery_timestamp: deadline });
  await scheduledId(api, { type: 'direct', to: [bob.userId], content: 'much later', scheduled_delivery_timestamp: deadline + HOUR });
  t.equal(server.runtime.scheduled.pending, 3);
  t.same(await fetchIds(api), []);
  let ids: number[] = [];
  const started = Date.now();
  while (ids.length < 2 && Date.now() - started < 5000) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    ids = await fetchIds(api);
  }
  t.ok(Date.now() >= deadline * 1000, 'not before its second');
  t.equal(ids.length, 2, 'both due messages went');
  const sent = await Promise.all(ids.map(async (id) => (await api.get(`/messages/${id}`)).body));
  t.same(sent.map((m) => m.raw_content), ['on time', 'also on time'], 'in the order they were scheduled');
  t.same(sent.map((m) => m.message.timestamp), [deadline, deadline], 'sent at the scheduled second');
  t.match(await list(api), [{ content: 'much later' }]);
});


t.test('a message that fell due while the server was down is sent at boot, once (SIGKILL, log replay)', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startChild(dataDir);
  const deadline = Math.floor(Date.now() / 1000) + 2;
  await scheduledId(first.api, { type: 'private', to: [1], content: 'while you were out', scheduled_delivery_timestamp: deadline });
  await scheduledId(first.api, { type: 'private', to: [1], content: 'next week', scheduled_delivery_timestamp: deadline + 7 * 24 * HOUR });
  first.process.kill('SIGKILL');
  await first.exited;
  while (Date.now() < deadline * 1000 + 300) await new Promise((resolve) => setTimeout(resolve, 100));

  const second = await startChild(dataDir);
  let ids: number[] = [];
  for (let tries = 0; ids.length === 0 && tries < 100; tries++) {
    ids = await fetchIds(second.api);
    if (!ids.length) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.equal(ids.length, 1, 'sent at boot');
  const sent = (await second.api.get(`/messages/${ids[0]}`)).body;
  t.equal(sent.raw_content, 'while you were out');
  t.ok(sent.message.timestamp >= deadline, 'not before its time');
  t.match(await list(second.api), [{ content: 'next week', failed: false }], 'the later one still waits');
  // Killed before any snapshot: the next boot replays the send, whose record also removes the scheduled entry.
  second.process.kill('SIGKILL');
  await second.exited;

  const third = await startChild(dataDir);
  t.teardown(() => void third.process.kill('SIGKILL'));
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.same(await fetchIds(third.api), ids, 'not sent again');
  t.match(await list(third.api), [{ content: 'next week' }]);
});

t.test('scheduled messages survive a graceful restart with their deadlines re-armed', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const before = await startTestServer(t, { dataDir });
  const at = Math.floor(Date.now() / 1000) + HOUR;
  const id = await scheduledId(before.api, { type: 'private', to: [1], content: 'kept', scheduled_delivery_timestamp: at, read_by_sender: false });
  const listed = await list(before.api);
  await before.stop();

  const after = await startTestServer(t, { dataDir });
  t.same(await list(after.api), listed, 'the same list');
  t.equal(after.server.runtime.scheduled.pending, 1, 'its deadline is armed again');
  const scheduledAgain = await scheduledId(after.api, { type: 'private', to: [1], content: 'new', scheduled_delivery_timestamp: at });
  t.ok(scheduledAgain > id, 'ids are not reused');
  after.server.runtime.clock.now = () => at * 1000;
  after.server.runtime.scheduled.wake();
  await new Promise((resolve) => setImmediate(resolve));
  await after.server.runtime.settled();
  const sent = await fetchIds(after.api);
  t.equal(sent.length, 2);
  t.same((await after.api.get(`/messages/${sent[0]}`)).body.message.flags, [], 'read_by_sender kept across the restart');
});
