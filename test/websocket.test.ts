import t from 'tap';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { EventSocketClient, openSocket, type Frame } from './helpers/event-socket.ts';
import { startTestServer, type ApiClient, type Credentials } from './helpers/server.ts';
import { advanceClock } from './helpers/messages.ts';
import { MAX_TICKETS_PER_USER, SOCKET_TICKET_SECONDS } from '../src/http/socket-tickets.ts';
import { DEFAULT_PERSONAL_LIMITS } from '../actors/user/limits.ts';

const ids = (frame: Frame): number[] => frame.events.map((event: { id: number }) => event.id);

/** Waits until `check` holds, polling; fails after a few seconds instead of hanging. */
async function eventually(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await sleep(50);
  }
  throw new Error(`${what}: not within 5 s`);
}

/**
 * Opens an event socket by hand over TCP and stops reading once the upgrade is answered: a client that
 * has fallen behind, whose unread bytes pile up in the server.
 */
function stalledSocket(baseUrl: string, queueId: string, credentials: Credentials): Promise<Socket> {
  const { hostname, port } = new URL(baseUrl);
  const auth = Buffer.from(`${credentials.email}:${credentials.key}`).toString('base64');
  const socket = connect(Number(port), hostname);
  socket.write(
    `GET /api/v1/events/socket?queue_id=${queueId}&last_event_id=-1 HTTP/1.1\r\nHost: ${hostname}:${port}\r\n` +
      'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n' +
      `Authorization: Basic ${auth}\r\n\r\n`,
  );
  return new Promise((resolve, reject) => {
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      if (chunk.toString('latin1').startsWith('HTTP/1.1 101')) resolve(socket);
      else reject(new Error(`upgrade refused: ${chunk.toString('latin1').split('\r\n')[0]}`));
    });
    socket.once('error', reject);
  });
}

const dontBlock = (api: ApiClient, queueId: string, lastEventId: number) =>
  api.get('/events', { queue_id: queueId, last_event_id: lastEventId, dont_block: 'true' });

t.test('a socket gets the queued events at once, then each new one; acknowledged events are not sent again', async (t) => {
  const { api, url, owner } = await startTestServer(t);
  const { queueId } = await api.register({ event_types: ['realm_user'] });
  await api.createUser('ann@example.com', 'Ann');

  const socket = await openSocket(url, { queueId, lastEventId: -1, credentials: owner });
  const first = await socket.next();
  t.equal(first.result, 'success', 'frames are shaped like a GET /events answer');
  t.equal(first.msg, '');
  t.equal(first.queue_id, queueId);
  t.equal(first.events.length, 1, 'the event queued before the socket opened');
  t.match(first.events[0], { type: 'realm_user', op: 'add', person: { email: 'ann@example.com' } });

  await api.createUser('bob@example.com', 'Bob');
  const second = await socket.next();
  t.equal(second.events.length, 1, 'only the new event, not the one already sent');
  t.match(second.events[0], { type: 'realm_user', op: 'add', person: { email: 'bob@example.com' } });
  t.ok(ids(second)[0]! > ids(first)[0]!, 'ids grow');

  // Acknowledge the first; the second stays unacknowledged, as does everything after the socket closes.
  socket.acknowledge(ids(first)[0]!);
  await sleep(100);
  t.same((await socket.close()).code, 1005, 'the client closed it');

  await api.createUser('cat@example.com', 'Cat');
  const resumed = await openSocket(url, { queueId, lastEventId: ids(first)[0]!, credentials: owner });
  const backlog = await resumed.next();
  t.same(
    backlog.events.map((event: { person: { email: string } }) => event.person.email),
    ['bob@example.com', 'cat@example.com'],
    'a reconnect with last_event_id gets every event after it, the one sent before but never acknowledged too',
  );
  t.equal(backlog.events[0].id, ids(second)[0], 'with the ids they had');

  // The same queue still answers long-polls with the same ids once the socket is gone.
  await resumed.close();
  const polled = await dontBlock(api, queueId, backlog.events[0].id);
  t.equal(polled.status, 200);
  t.same(ids(polled.body), [backlog.events[1].id], 'a poll acknowledges and gets the rest, as ever');
});

t.test('frames are text frames of UTF-8 JSON, non-ASCII content included, with the events a poll gets', async (t) => {
  const { api, url, owner } = await startTestServer(t);
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'général' }] });
  const { queueId } = await api.register({ event_types: ['message'] });
  const auth = Buffer.from(`${owner.email}:${owner.key}`).toString('base64');
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/api/v1/events/socket?queue_id=${queueId}&last_event_id=-1`, { headers: { Authorization: `Basic ${auth}` } });
  const frames: { text: string; isBinary: boolean }[] = [];
  ws.on('message', (data: Buffer, isBinary) => frames.push({ text: data.toString('utf8'), isBinary }));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  for (const content of ['Zoë says 日本語 😀', 'plain']) await api.post('/messages', { type: 'stream', to: 'général', topic: 'café ☕', content });
  await eventually(() => frames.length === 2, 'two frames');
  ws.close();
  t.same(frames.map((frame) => frame.isBinary), [false, false], 'text frames');
  const pushed = frames.map((frame) => JSON.parse(frame.text));
  t.same(pushed.map((frame) => Object.keys(frame)), [['result', 'msg', 'queue_id', 'events'], ['result', 'msg', 'queue_id', 'events']]);
  t.match(pushed[0].events[0], { type: 'message', message: { subject: 'café ☕', display_recipient: 'général' } });
  t.match(pushed[0].events[0].message.content, /Zoë says 日本語 😀/);
  const polled = await dontBlock(api, queueId, -1);
  t.same([...pushed[0].events, ...pushed[1].events], polled.body.events, 'the events a poll gets, with the same ids');
});

t.test('acknowledgements over the socket follow the rules of GET /events', async (t) => {
  const { api, url, owner } = await startTestServer(t);
  const { queueId } = await api.register({ event_types: ['realm_user'] });
  await api.createUser('ann@example.com', 'Ann');
  await api.createUser('bob@example.com', 'Bob');

  const socket = await openSocket(url, { queueId, lastEventId: -1, credentials: owner });
  const [annId, bobId] = ids(await socket.next());
  socket.acknowledge(bobId!);
  socket.acknowledge(bobId!);
  await sleep(100);
  t.equal(socket.unread, 0, 'an acknowledgement has no answer; repeating one is harmless');
  socket.acknowledge(annId!);
  const error = await socket.next();
  t.same(error, { result: 'error', msg: `An event newer than ${annId} has already been pruned!`, code: 'BAD_REQUEST' });
  t.same(await socket.closed, { code: 4400, reason: 'BAD_REQUEST' }, 'the error ends the socket: close code 4000 + HTTP status');

  const polled = await dontBlock(api, queueId, bobId!);
  t.same(polled.body.events, [], 'the acknowledgements before the error took effect');

  const garbled = await openSocket(url, { queueId, lastEventId: bobId!, credentials: owner });
  garbled.send('last_event_id=3');
  t.match(await garbled.next(), { result: 'error', code: 'BAD_REQUEST', msg: /^Invalid acknowledgement: not JSON/ });
  t.equal((await garbled.closed).code, 4400);

  const wrongShape = await openSocket(url, { queueId, lastEventId: bobId!, credentials: owner });
  wrongShape.send('{"last_event_id":"x"}');
  t.match(await wrongShape.next(), { result: 'error', code: 'BAD_REQUEST', msg: /^Invalid acknowledgement/ });
  t.equal((await wrongShape.closed).code, 4400);

  const unknown = await openSocket(url, { queueId, lastEventId: bobId!, credentials: owner });
  unknown.acknowledge(bobId! + 1000);
  t.same(await unknown.next(), { result: 'error', msg: `Event ${bobId! + 1000} was not in this queue`, code: 'BAD_REQUEST' });
  t.equal((await unknown.closed).code, 4400);
});

t.test('flag events already pushed are not merged into later ones: each pushed id can be acknowledged', async (t) => {
  const { api, url, owner } = await startTestServer(t);
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }] });
  const sent: number[] = [];
  for (const content of ['a', 'b']) sent.push((await api.post('/messages', { type: 'stream', to: 'general', topic: 't', content })).body.id);
  const { queueId } = await api.register({ event_types: ['update_message_flags'] });
  const socket = await openSocket(url, { queueId, lastEventId: -1, credentials: owner });
  await api.post('/messages/flags', { messages: JSON.stringify([sent[0]]), op: 'add', flag: 'starred' });
  const first = await socket.next();
  t.match(first.events, [{ type: 'update_message_flags', op: 'add', flag: 'starred', messages: [sent[0]] }]);
  await api.post('/messages/flags', { messages: JSON.stringify([sent[1]]), op: 'add', flag: 'starred' });
  const second = await socket.next();
  t.match(second.events, [{ op: 'add', flag: 'starred', messages: [sent[1]] }], 'the later event stands alone');
  socket.acknowledge(ids(first)[0]!);
  socket.acknowledge(ids(second)[0]!);
  await sleep(100);
  t.equal(socket.unread, 0, 'both acknowledgements are taken');
  await socket.close();
});

t.test('attaching: bad queue ids, other users\' queues, bad and missing last_event_id end the socket with an error frame', async (t) => {
  const { api, url, owner } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const { queueId } = await api.register({ event_types: ['realm_user'] });
  const { queueId: annQueue } = await api.as(ann).register();
  await api.createUser('bob@example.com', 'Bob');

  const unknown = await openSocket(url, { queueId: 'no-such-queue', lastEventId: -1, credentials: owner });
  t.same(await unknown.next(), { result: 'error', msg: 'Bad event queue ID: no-such-queue', code: 'BAD_EVENT_QUEUE_ID', queue_id: 'no-such-queue' });
  t.same(await unknown.closed, { code: 4400, reason: 'BAD_EVENT_QUEUE_ID' });

  const foreign = await openSocket(url, { queueId: annQueue, lastEventId: -1, credentials: owner });
  t.same(await foreign.next(), { result: 'error', msg: `Bad event queue ID: ${annQueue}`, code: 'BAD_EVENT_QUEUE_ID', queue_id: annQueue });
  t.equal((await foreign.closed).code, 4400, 'another user\'s queue is as unknown as a missing one');

  const badId = await openSocket(url, { queueId, lastEventId: 12345, credentials: owner });
  t.same(await badId.next(), { result: 'error', msg: 'Event 12345 was not in this queue', code: 'BAD_REQUEST' });
  t.equal((await badId.closed).code, 4400);

  const missing = await openSocket(url, { queueId, credentials: owner });
  t.same(await missing.next(), { result: 'error', msg: "Missing 'last_event_id' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'last_event_id' });
  t.equal((await missing.closed).code, 4400);

  const notInteger = await openSocket(url, { queueId, credentials: owner, query: { last_event_id: 'x' } });
  t.same(await notInteger.next(), { result: 'error', msg: 'last_event_id is not an integer', code: 'BAD_REQUEST' });

  const noQueue = await openSocket(url, { lastEventId: -1, credentials: owner });
  t.match(await noQueue.next(), { code: 'REQUEST_VARIABLE_MISSING', var_name: 'queue_id' });

  // None of that touched the queue: its event is still there for a good attach.
  const good = await openSocket(url, { queueId, lastEventId: -1, credentials: owner });
  t.match((await good.next()).events, [{ type: 'realm_user', op: 'add', person: { email: 'bob@example.com' } }]);
  await good.close();
});

t.test('the upgrade takes the REST API\'s credentials: Basic auth, or a one-time ticket for browsers', async (t) => {
  const server = await startTestServer(t);
  const { api, url, owner } = server;
  const { queueId } = await api.register();

  const anonymous = await EventSocketClient.open(url, { queueId, lastEventId: -1 });
  t.notOk(anonymous instanceof EventSocketClient, 'no socket without credentials');
  t.same(anonymous, {
    status: 401,
    body: { result: 'error', msg: 'Missing authorization header for basic auth', code: 'UNAUTHORIZED' },
  });

  const wrongKey = await EventSocketClient.open(url, { queueId, lastEventId: -1, credentials: { email: owner.email, key: 'x'.repeat(32) } });
  t.same(wrongKey, { status: 401, body: { result: 'error', msg: 'Invalid API key', code: 'UNAUTHORIZED' } });

  const issued = await api.post('/events/socket/ticket');
  t.equal(issued.status, 200);
  t.match(issued.body, { result: 'success', ticket: /^[A-Za-z0-9]{32}$/, expires_in_seconds: 30 });
  t.equal((await api.as(null).post('/events/socket/ticket')).status, 401, 'tickets are for authenticated callers');

  const withTicket = await openSocket(url, { queueId, lastEventId: -1, ticket: issued.body.ticket });
  await api.createUser('ann@example.com', 'Ann');
  t.match((await withTicket.next()).events, [{ type: 'realm_user', op: 'add' }], 'a ticket opens the socket');
  await withTicket.close();

  const reused = await EventSocketClient.open(url, { queueId, lastEventId: -1, ticket: issued.body.ticket });
  t.same(reused, { status: 401, body: { result: 'error', msg: 'Invalid or expired WebSocket ticket', code: 'UNAUTHORIZED' } }, 'a ticket works once');
  const made = await EventSocketClient.open(url, { queueId, lastEventId: -1, ticket: 'A'.repeat(32) });
  t.equal((made as { status: number }).status, 401, 'a made-up ticket is refused');

  // A ticket is the user's: it opens only that user's queues.
  const ann = await api.createUser('bob@example.com', 'Bob');
  const annTicket = (await api.as(ann).post('/events/socket/ticket')).body.ticket;
  const annOnOwners = await openSocket(url, { queueId, lastEventId: -1, ticket: annTicket });
  t.match(await annOnOwners.next(), { code: 'BAD_EVENT_QUEUE_ID' });

  // A ticket is good for SOCKET_TICKET_SECONDS: one issued just under that ago opens the socket, an older one not.
  const [young, old] = [(await api.post('/events/socket/ticket')).body.ticket, (await api.post('/events/socket/ticket')).body.ticket];
  advanceClock(server, SOCKET_TICKET_SECONDS - 1);
  const opened = await openSocket(url, { queueId, lastEventId: -1, ticket: young });
  t.ok(Array.isArray((await opened.next()).events), `a ticket ${SOCKET_TICKET_SECONDS - 1} s old opens the socket`);
  await opened.close();
  advanceClock(server, 1);
  t.same(await EventSocketClient.open(url, { queueId, lastEventId: -1, ticket: old }), { status: 401, body: { result: 'error', msg: 'Invalid or expired WebSocket ticket', code: 'UNAUTHORIZED' } }, `one ${SOCKET_TICKET_SECONDS} s old is refused`);

  t.equal((await api.get('/events/socket')).status, 404, 'the path answers nothing but an upgrade');
});

t.test(`a user holds at most ${MAX_TICKETS_PER_USER} unused tickets: one more drops that user's oldest`, async (t) => {
  // Without the rate limit (an operator may switch it off), only this bound keeps a user's tickets in check.
  const { api, url } = await startTestServer(t, { rateLimit: null });
  const { queueId } = await api.register();
  const bob = await api.createUser('bob@example.com', 'Bob');
  const bobs = (await api.as(bob).post('/events/socket/ticket')).body.ticket as string;

  const tickets: string[] = [];
  for (let i = 0; i <= MAX_TICKETS_PER_USER; i++) tickets.push((await api.post('/events/socket/ticket')).body.ticket);
  const expired = { status: 401, body: { result: 'error', msg: 'Invalid or expired WebSocket ticket', code: 'UNAUTHORIZED' } };
  t.same(await EventSocketClient.open(url, { queueId, lastEventId: -1, ticket: tickets[0]! }), expired, `the oldest went with ticket ${MAX_TICKETS_PER_USER + 1}`);
  for (const ticket of [tickets[1]!, tickets[MAX_TICKETS_PER_USER]!]) {
    const socket = await openSocket(url, { queueId, lastEventId: -1, ticket });
    t.ok(Array.isArray((await socket.next()).events), 'the others still open a socket');
    await socket.close();
  }
  const bobsQueue = (await api.as(bob).register({ event_types: ['realm_user'] })).queueId;
  await api.createUser('cat@example.com', 'Cat');
  const bobsSocket = await openSocket(url, { queueId: bobsQueue, lastEventId: -1, ticket: bobs });
  t.ok(Array.isArray((await bobsSocket.next()).events), "another user's ticket is untouched");
  await bobsSocket.close();

  // The two redeemed tickets made room for two more: the oldest unused one is kept.
  const fresh = [(await api.post('/events/socket/ticket')).body.ticket as string, (await api.post('/events/socket/ticket')).body.ticket as string];
  const oldest = await openSocket(url, { queueId, lastEventId: -1, ticket: tickets[2]! });
  t.ok(Array.isArray((await oldest.next()).events), 'redeemed tickets count no more');
  await oldest.close();
  const last = await openSocket(url, { queueId, lastEventId: -1, ticket: fresh[1]! });
  t.ok(Array.isArray((await last.next()).events));
  await last.close();
});

t.test('an upgrade from a page of another site is refused, even with the credentials a browser remembers', async (t) => {
  const { api, url, owner } = await startTestServer(t);
  const { queueId } = await api.register();
  const foreign = await EventSocketClient.open(url, { queueId, lastEventId: -1, credentials: owner, origin: 'https://evil.example' });
  t.notOk(foreign instanceof EventSocketClient, 'no socket for a foreign page');
  t.match(foreign, { status: 403, body: { result: 'error', code: 'CSRF_FAILED' } });
  const opaque = await EventSocketClient.open(url, { queueId, lastEventId: -1, credentials: owner, origin: 'null' });
  t.match(opaque, { status: 403, body: { code: 'CSRF_FAILED' } }, 'nor for a sandboxed page (Origin: null)');

  // The server's own pages (its web client) share the host of the upgrade, and clients outside browsers send no Origin.
  const own = await openSocket(url, { queueId, lastEventId: -1, credentials: owner, origin: new URL(url).origin });
  await api.createUser('ann@example.com', 'Ann');
  t.match((await own.next()).events, [{ type: 'realm_user', op: 'add' }], 'a page of the same host opens the socket');
  await own.close();
});

t.test('an attached queue is not idle-collected; once the socket closes, the queue is under long-poll rules again', async (t) => {
  const { api, url, owner } = await startTestServer(t, { queueIdleMs: 300, sweepMs: 50 });
  const { queueId } = await api.register({ event_types: ['realm_user'] });
  const socket = await openSocket(url, { queueId, lastEventId: -1, credentials: owner });
  await sleep(1000);
  await api.createUser('ann@example.com', 'Ann');
  const frame = await socket.next();
  t.match(frame.events, [{ type: 'realm_user', op: 'add' }], 'the queue outlived its idle lifespan while attached');
  socket.acknowledge(ids(frame)[0]!);
  await socket.close();

  // The lifespan counts from the close (every poll would start it again, so none is made meanwhile).
  await sleep(1000);
  const gone = await openSocket(url, { queueId, lastEventId: -1, credentials: owner });
  t.match(await gone.next(), { code: 'BAD_EVENT_QUEUE_ID' });
});

t.test('an attached socket gets heartbeat events, which it acknowledges like any event', async (t) => {
  const { api, url, owner } = await startTestServer(t, { heartbeatMs: 300, sweepMs: 50 });
  const { queueId } = await api.register({ event_types: ['realm_user'] });
  const socket = await openSocket(url, { queueId, lastEventId: -1, credentials: owner });
  const beat = await socket.next();
  t.match(beat.events, [{ type: 'heartbeat' }]);
  socket.acknowledge(ids(beat)[0]!);
  const again = await socket.next();
  t.match(again.events, [{ type: 'heartbeat' }], 'and another while nothing else is sent');
  t.ok(ids(again)[0]! > ids(beat)[0]!);
  await socket.close();
});

t.test('a poll and a socket on one queue: the newer connection takes it', async (t) => {
  const { api, url, owner } = await startTestServer(t);
  const { queueId } = await api.register({ event_types: ['realm_user'] });

  // A socket attaching completes the poll held on the queue, as a newer poll would.
  const held = api.get('/events', { queue_id: queueId, last_event_id: -1 });
  await sleep(300);
  const socket = await openSocket(url, { queueId, lastEventId: -1, credentials: owner });
  const polled = await held;
  t.equal(polled.status, 200);
  t.same(polled.body.events, [], 'the held poll completes with what was queued');

  // A poll takes the queue from the socket: the socket ends with an error frame, 4409.
  const poll = await dontBlock(api, queueId, -1);
  t.equal(poll.status, 200, 'the poll is answered');
  t.same(await socket.next(), { result: 'error', msg: 'A newer connection took over this event queue', code: 'BAD_REQUEST', queue_id: queueId });
  t.same(await socket.closed, { code: 4409, reason: 'BAD_REQUEST' });

  // A second socket takes the queue from the first the same way.
  const first = await openSocket(url, { queueId, lastEventId: -1, credentials: owner });
  const second = await openSocket(url, { queueId, lastEventId: -1, credentials: owner });
  t.match(await first.next(), { code: 'BAD_REQUEST', msg: 'A newer connection took over this event queue' });
  t.equal((await first.closed).code, 4409);
  await api.createUser('ann@example.com', 'Ann');
  t.match((await second.next()).events, [{ type: 'realm_user', op: 'add' }], 'the newer socket gets the events');

  // A bad attach does not take the queue from its holder.
  const bad = await openSocket(url, { queueId, lastEventId: 999, credentials: owner });
  t.match(await bad.next(), { code: 'BAD_REQUEST', msg: 'Event 999 was not in this queue' });
  await api.createUser('bob@example.com', 'Bob');
  t.match((await second.next()).events, [{ person: { email: 'bob@example.com' } }], 'the holder keeps the queue');
  await second.close();
});

t.test('deleting the queue ends its socket with BAD_EVENT_QUEUE_ID', async (t) => {
  const { api, url, owner } = await startTestServer(t);
  const { queueId } = await api.register();
  const socket = await openSocket(url, { queueId, lastEventId: -1, credentials: owner });
  t.equal((await api.delete('/events', { queue_id: queueId })).status, 200);
  t.same(await socket.next(), { result: 'error', msg: `Bad event queue ID: ${queueId}`, code: 'BAD_EVENT_QUEUE_ID', queue_id: queueId });
  t.same(await socket.closed, { code: 4400, reason: 'BAD_EVENT_QUEUE_ID' });
});

t.test('a socket of a user deactivated since it opened is closed with USER_DEACTIVATED', async (t) => {
  const { api, url } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const { queueId } = await api.as(ann).register({ event_types: ['realm_user'] });
  const socket = await openSocket(url, { queueId, lastEventId: -1, credentials: ann });
  t.equal((await api.delete(`/users/${ann.userId}`)).status, 200);
  t.same(await socket.next(), { result: 'error', msg: 'Account is deactivated', code: 'USER_DEACTIVATED' }, 'instead of the event of its deactivation');
  t.same(await socket.closed, { code: 4401, reason: 'USER_DEACTIVATED' });
  const again = await EventSocketClient.open(url, { queueId, lastEventId: -1, credentials: ann });
  t.match(again, { status: 401, body: { code: 'USER_DEACTIVATED' } }, 'and cannot open another');
});

t.test('a server stop closes sockets with 1001; after the restart a reconnect resumes the saved queue', async (t) => {
  const first = await startTestServer(t);
  const { queueId } = await first.api.register({ event_types: ['realm_user'] });
  const socket = await openSocket(first.url, { queueId, lastEventId: -1, credentials: first.owner });
  await first.api.createUser('ann@example.com', 'Ann');
  const frame = await socket.next();
  await first.stop();
  t.same(await socket.closed, { code: 1001, reason: 'Server is shutting down' });

  const second = await startTestServer(t, { dataDir: first.dataDir });
  const resumed = await openSocket(second.url, { queueId, lastEventId: -1, credentials: first.owner });
  const backlog = await resumed.next();
  t.same(backlog.events.map((event: { type: string }) => event.type), ['realm_user', 'restart'], 'the unacknowledged event, then the restart');
  t.equal(backlog.events[0].id, ids(frame)[0], 'with the id it had');
  resumed.acknowledge(backlog.events[1].id);
  await second.api.createUser('bob@example.com', 'Bob');
  t.match((await resumed.next()).events, [{ person: { email: 'bob@example.com' } }]);
  await resumed.close();
});

t.test('a socket that falls too far behind is dropped; its events stay queued for the reconnect', async (t) => {
  // Each alert_words event carries the whole list: six events of 2 MB, more than the kernel's socket
  // buffers hold, so that most of the backlog frame waits in the server (past the default bound on a
  // user's alert words).
  const personalLimits = { ...DEFAULT_PERSONAL_LIMITS, alertWords: 20_010 };
  const { api, url, owner, server } = await startTestServer(t, { socketMaxBufferedBytes: 64 * 1024, rateLimit: null, personalLimits });
  const { queueId } = await api.register({ event_types: ['alert_words'] });
  const words = Array.from({ length: 20_000 }, (_, i) => String(i).padStart(100, 'w'));
  t.equal((await api.post('/users/me/alert_words', { alert_words: words })).status, 200);
  for (let i = 0; i < 5; i++) await api.post('/users/me/alert_words', { alert_words: [`extra${i}`] });

  // The backlog goes out in one frame however large; the next frame finds it mostly unsent and drops the socket.
  const stalled = await stalledSocket(url, queueId, owner);
  const { queues } = server.runtime;
  t.equal(queues.attachedCount(), 1, 'the stalled socket is attached, its backlog sent');
  await api.post('/users/me/alert_words', { alert_words: ['one more'] });
  await eventually(() => queues.attachedCount() === 0, 'the stalled socket dropped');
  const ended = new Promise<void>((resolve) => stalled.once('close', () => resolve()));
  stalled.on('data', () => {});
  stalled.resume();
  await ended;
  t.pass('the server closed the stalled connection');

  const socket = await openSocket(url, { queueId, lastEventId: -1, credentials: owner });
  const backlog = await socket.next(30_000);
  t.equal(backlog.events.length, 7, 'a reconnect gets every event, none lost with the dropped socket');
  t.equal(backlog.events[6].alert_words.length, 20_006);
  await socket.close();
});
