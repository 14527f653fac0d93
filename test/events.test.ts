import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_QUEUE_LIMITS } from '../actors/queue/limits.ts';
import { startTestServer, type ApiClient, type ApiResult } from './helpers/server.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A request started now and not awaited yet: tells whether (and when) it has completed. */
function track(promise: Promise<ApiResult>) {
  const started = Date.now();
  const state = { settled: false, settledAt: 0 };
  const done = promise.then((result) => {
    state.settled = true;
    state.settledAt = Date.now();
    return result;
  });
  // Keep an unawaited rejection from crashing the process before the test awaits it.
  done.catch(() => {});
  return { done, state, started };
}

/** Races a promise against a deadline, so a poll that never completes fails the test instead of hanging it. */
async function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not complete within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

const poll = (api: ApiClient, queueId: string, lastEventId: number, dontBlock = false, init?: RequestInit) =>
  api.get('/events', { queue_id: queueId, last_event_id: lastEventId, ...(dontBlock && { dont_block: 'true' }) }, init);

t.test('POST /register returns the queue and the requested initial state', async (t) => {
  const { api, owner } = await startTestServer(t);

  const full = await api.post('/register', { fetch_event_types: ['realm_user', 'realm'] });
  t.equal(full.status, 200);
  t.equal(full.body.result, 'success');
  t.equal(full.body.msg, '');
  t.type(full.body.queue_id, 'string');
  t.match(full.body.queue_id, UUID, 'queue_id is a UUID');
  t.equal(full.body.last_event_id, -1);
  t.equal(full.body.svc_feature_level, 420);
  t.type(full.body.svc_version, 'string');
  t.ok(full.body.svc_version.length > 0, 'svc_version is not empty');
  t.type(full.body.svc_merge_base, 'string');
  t.ok(full.body.svc_merge_base.length > 0, 'svc_merge_base is not empty');
  t.ok(Array.isArray(full.body.realm_users), 'realm_users is a list');
  const me = full.body.realm_users.find((user: { email: string }) => user.email === owner.email);
  t.ok(me, 'realm_users contains the owner');
  t.type(me?.user_id, 'number');
  t.equal(full.body.max_message_length, 10000);
  t.equal(full.body.max_topic_length, 60);
  t.equal(full.body.max_stream_name_length, 60);
  t.type(full.body.realm_empty_topic_display_name, 'string');
  t.ok(full.body.realm_empty_topic_display_name.length > 0, 'realm_empty_topic_display_name is not empty');
  t.equal(full.body.event_queue_longpoll_timeout_seconds, 90);
  t.notOk('ignored_parameters_unsupported' in full.body, 'every parameter was known');

  const realmOnly = await api.post('/register', { fetch_event_types: ['realm'] });
  t.equal(realmOnly.status, 200);
  t.notOk('realm_users' in realmOnly.body, 'no realm_users without the realm_user fetch type');
  t.equal(realmOnly.body.max_message_length, 10000, 'realm data is still there');
  t.match(realmOnly.body.queue_id, UUID);
  t.not(realmOnly.body.queue_id, full.body.queue_id, 'every registration gets its own queue');
});

t.test('a held long-poll completes when another request causes an event', async (t) => {
  const { api } = await startTestServer(t);
  // Only the new user: its administrators also learn of its export consent (realm_export_consent).
  const { queueId } = await api.register({ event_types: ['realm_user'] });

  const held = track(poll(api, queueId, -1));
  await sleep(400);
  t.notOk(held.state.settled, 'the poll is still held before anything happened');

  const writeAt = Date.now();
  const created = await api.post('/users', { email: 'newcomer@example.com', password: 'a-Strong-passw0rd-for-tests', full_name: 'Newcomer' });
  t.equal(created.status, 200, 'user created');

  const result = await within(5000, held.done, 'the held poll');
  t.ok(held.state.settledAt >= writeAt, 'the poll completed only after the write began');
  t.equal(result.status, 200);
  t.equal(result.body.result, 'success');
  t.equal(result.body.queue_id, queueId);
  t.equal(result.body.events.length, 1, 'one event');
  const [event] = result.body.events;
  t.equal(event.type, 'realm_user');
  t.equal(event.op, 'add');
  t.ok(Number.isSafeInteger(event.id) && event.id >= 0, 'the event has an id');
  t.equal(event.person.email, 'newcomer@example.com');
  t.equal(event.person.full_name, 'Newcomer');
  t.equal(event.person.user_id, created.body.user_id);
});

// Held polls are woken a slice at a time (queue/registry.ts scheduleWake): more than a slice must all complete.
t.test('an event completes every held poll, hundreds at once', async (t) => {
  // 600 registrations by one user are over the default rate limit and queue limit.
  const { api, url } = await startTestServer(t, { rateLimit: null, queueLimits: { ...DEFAULT_QUEUE_LIMITS, perUser: 600 } });
  const count = 600;
  const queueIds: string[] = [];
  for (let i = 0; i < count; i++) queueIds.push((await api.register({ event_types: ['realm_user'] })).queueId);
  const held = queueIds.map((queueId) => track(poll(api, queueId, -1)));
  const heldPolls = async () => Number(/^chat_held_polls (\S+)$/m.exec(await (await fetch(`${url}/metrics`)).text())?.[1]);
  for (let tries = 1; (await heldPolls()) < count; tries++) {
    if (tries > 100) return void t.fail(`only ${await heldPolls()} of ${count} polls are held after 5 s`);
    await sleep(50);
  }
  t.notOk(held.some((poll) => poll.state.settled), 'every poll is held');

  const created = await api.post('/users', { email: 'newcomer@example.com', password: 'a-Strong-passw0rd-for-tests', full_name: 'Newcomer' });
  const results = await within(10_000, Promise.all(held.map((poll) => poll.done)), `${count} held polls`);
  t.ok(results.every((result, i) => result.status === 200 && result.body.queue_id === queueIds[i]), 'each poll answers for its queue');
  t.ok(
    results.every((result) => result.body.events.length === 1 && result.body.events[0].person.user_id === created.body.user_id),
    'each with the one event',
  );
});

t.test('dont_block=true answers at once with no events on an empty queue', async (t) => {
  const { api } = await startTestServer(t);
  const { queueId } = await api.register();
  const started = Date.now();
  const result = await within(3000, poll(api, queueId, -1, true), 'the non-blocking poll');
  t.ok(Date.now() - started < 1000, 'answered at once');
  t.equal(result.status, 200);
  t.same(result.body.events, []);
  t.equal(result.body.queue_id, queueId);
});

t.test('acknowledgement drops events; bad last_event_id values are errors', async (t) => {
  const { api } = await startTestServer(t);
  const { queueId } = await api.register({ event_types: ['realm_user'] });
  await api.createUser('first@example.com', 'First');

  const first = await poll(api, queueId, -1, true);
  t.equal(first.status, 200);
  t.equal(first.body.events.length, 1);
  const firstId: number = first.body.events[0].id;
  t.equal(first.body.events[0].person.email, 'first@example.com');

  const again = await poll(api, queueId, -1, true);
  t.equal(again.status, 200);
  t.same(again.body.events.map((e: { id: number }) => e.id), [firstId], 'the unacknowledged event is sent again');

  const acked = await poll(api, queueId, firstId, true);
  t.equal(acked.status, 200);
  t.same(acked.body.events, [], 'the event was dropped by acknowledging it');

  const pruned = await poll(api, queueId, -1, true);
  t.equal(pruned.status, 400);
  t.equal(pruned.body.result, 'error');
  t.equal(pruned.body.code, 'BAD_REQUEST');
  t.equal(pruned.body.msg, 'An event newer than -1 has already been pruned!');

  const future = await poll(api, queueId, firstId + 5, true);
  t.equal(future.status, 400);
  t.equal(future.body.code, 'BAD_REQUEST');
  t.equal(future.body.msg, `Event ${firstId + 5} was not in this queue`);

  const repeated = await poll(api, queueId, firstId, true);
  t.equal(repeated.status, 200, 'repeating the same last_event_id is harmless');
  t.same(repeated.body.events, []);

  await api.createUser('second@example.com', 'Second');
  const next = await poll(api, queueId, firstId, true);
  t.equal(next.status, 200);
  t.equal(next.body.events.length, 1);
  t.ok(next.body.events[0].id > firstId, 'the next event has a greater id');
  t.equal(next.body.events[0].person.email, 'second@example.com');

  const secondId: number = next.body.events[0].id;
  const resent = await poll(api, queueId, firstId, true);
  t.equal(resent.status, 200);
  t.same(resent.body.events.map((e: { id: number }) => e.id), [secondId], 'not acknowledged: sent again');

  const cleared = await poll(api, queueId, secondId, true);
  t.equal(cleared.status, 200);
  t.same(cleared.body.events, [], 'acknowledging the newest empties the queue');
});

t.test('bad queue ids and missing parameters of GET /events', async (t) => {
  const { api } = await startTestServer(t);
  const { queueId } = await api.register();

  const unknownId = 'not-a-real-queue-0000';
  const unknown = await poll(api, unknownId, -1, true);
  t.equal(unknown.status, 400);
  t.equal(unknown.body.result, 'error');
  t.equal(unknown.body.code, 'BAD_EVENT_QUEUE_ID');
  t.equal(unknown.body.msg, `Bad event queue ID: ${unknownId}`);
  t.equal(unknown.body.queue_id, unknownId);

  const other = await api.createUser('other@example.com', 'Other');
  const otherApi = api.as(other);
  const { queueId: otherQueue } = await otherApi.register();
  const foreign = await poll(api, otherQueue, -1, true);
  t.equal(foreign.status, 400, "another user's queue is not yours");
  t.equal(foreign.body.code, 'BAD_EVENT_QUEUE_ID');
  t.equal(foreign.body.msg, `Bad event queue ID: ${otherQueue}`);
  t.equal(foreign.body.queue_id, otherQueue);
  const own = await poll(otherApi, otherQueue, -1, true);
  t.equal(own.status, 200, 'its owner can still poll it');

  const noLast = await api.get('/events', { queue_id: queueId, dont_block: 'true' });
  t.equal(noLast.status, 400);
  t.equal(noLast.body.code, 'REQUEST_VARIABLE_MISSING');
  t.equal(noLast.body.var_name, 'last_event_id');
  t.equal(noLast.body.msg, "Missing 'last_event_id' argument");

  const noQueue = await api.get('/events', { last_event_id: -1 });
  t.equal(noQueue.status, 400);
  t.equal(noQueue.body.code, 'REQUEST_VARIABLE_MISSING');
  t.equal(noQueue.body.var_name, 'queue_id');
  t.equal(noQueue.body.msg, "Missing 'queue_id' argument");

  const implicit = await api.get('/events', { dont_block: 'true' });
  t.equal(implicit.status, 200);
  t.same(implicit.body.events, []);
  t.type(implicit.body.queue_id, 'string');
  t.match(implicit.body.queue_id, UUID, 'a new queue was registered on the spot');
  t.not(implicit.body.queue_id, queueId);
  const usable = await poll(api, implicit.body.queue_id, -1, true);
  t.equal(usable.status, 200, 'the queue made on the spot can be polled');
  t.equal(usable.body.queue_id, implicit.body.queue_id);
});

t.test('a new poll on a queue completes the poll held on it', async (t) => {
  const { api } = await startTestServer(t);
  const { queueId } = await api.register();

  const first = track(poll(api, queueId, -1));
  await sleep(300);
  t.notOk(first.state.settled, 'the first poll is held');

  const second = await within(3000, poll(api, queueId, -1, true), 'the second poll');
  t.equal(second.status, 200);
  t.same(second.body.events, []);

  const firstResult = await within(3000, first.done, 'the first (held) poll');
  t.equal(firstResult.status, 200);
  t.equal(firstResult.body.result, 'success');
  t.same(firstResult.body.events, [], 'the superseded poll completes with what is queued: nothing');
  t.equal(firstResult.body.queue_id, queueId);
});

t.test('event_types filters what a queue receives', async (t) => {
  const { api } = await startTestServer(t);
  const { queueId: everything } = await api.register();
  const { queueId: heartbeatOnly } = await api.register({ event_types: ['heartbeat'] });
  const { queueId: realmOnly } = await api.register({ event_types: ['realm'] });
  const { queueId: realmUserOnly } = await api.register({ event_types: ['realm_user'] });

  await api.createUser('filtered@example.com', 'Filtered');

  const all = await poll(api, everything, -1, true);
  t.equal(all.status, 200);
  t.same(all.body.events.map((e: { type: string }) => e.type), ['realm_user', 'realm_export_consent'], 'an unfiltered queue got the event (and its administrator the consent)');
  const wanted = await poll(api, realmUserOnly, -1, true);
  t.same(wanted.body.events.map((e: { type: string }) => e.type), ['realm_user'], 'a realm_user queue got it too');

  const heartbeat = await poll(api, heartbeatOnly, -1, true);
  t.equal(heartbeat.status, 200);
  t.same(heartbeat.body.events, [], 'a heartbeat-only queue got no realm_user event');
  const realm = await poll(api, realmOnly, -1, true);
  t.equal(realm.status, 200);
  t.same(realm.body.events, [], 'a realm-only queue got no realm_user event');
});

t.test('a held poll gets a heartbeat', async (t) => {
  const { api } = await startTestServer(t, { heartbeatMs: 300, sweepMs: 50 });
  const { queueId } = await api.register();
  const held = track(poll(api, queueId, -1));
  const result = await within(3000, held.done, 'the heartbeat');
  const elapsed = held.state.settledAt - held.started;
  t.ok(elapsed >= 200, `not before the heartbeat time (${elapsed} ms)`);
  t.ok(elapsed < 2000, `within a couple of seconds (${elapsed} ms)`);
  t.equal(result.status, 200);
  t.same(result.body.events, [{ type: 'heartbeat', id: 0 }]);
  t.equal(result.body.queue_id, queueId);
});

t.test('idle queues are garbage-collected', async (t) => {
  const { api } = await startTestServer(t, { queueIdleMs: 300, sweepMs: 50 });
  const { queueId } = await api.register();
  const { queueId: longLived } = await api.register({ idle_queue_timeout: 60 });
  const accepted = await api.post('/register', { idle_queue_timeout: '3600' });
  t.equal(accepted.status, 200, 'idle_queue_timeout is accepted');
  t.notOk('ignored_parameters_unsupported' in accepted.body, 'idle_queue_timeout is a known parameter');

  await sleep(1000);
  const gone = await poll(api, queueId, -1, true);
  t.equal(gone.status, 400);
  t.equal(gone.body.code, 'BAD_EVENT_QUEUE_ID');
  t.equal(gone.body.msg, `Bad event queue ID: ${queueId}`);
  t.equal(gone.body.queue_id, queueId);

  const kept = await poll(api, longLived, -1, true);
  t.equal(kept.status, 200, 'a queue registered with a longer idle_queue_timeout survives');
  t.equal(kept.body.queue_id, longLived);
});

t.test('DELETE /events deletes a queue and completes its held poll', async (t) => {
  const { api } = await startTestServer(t);
  const { queueId } = await api.register();

  const held = track(poll(api, queueId, -1));
  await sleep(300);
  t.notOk(held.state.settled, 'the poll is held');

  const deleted = await api.delete('/events', { queue_id: queueId });
  t.equal(deleted.status, 200);
  t.equal(deleted.body.result, 'success');
  t.equal(deleted.body.msg, '');

  const heldResult = await within(3000, held.done, 'the held poll of a deleted queue');
  t.equal(heldResult.status, 200, 'the held poll completes');

  const after = await poll(api, queueId, -1, true);
  t.equal(after.status, 400);
  t.equal(after.body.code, 'BAD_EVENT_QUEUE_ID');
  t.equal(after.body.queue_id, queueId);

  const twice = await api.delete('/events', { queue_id: queueId });
  t.equal(twice.status, 400);
  t.equal(twice.body.code, 'BAD_EVENT_QUEUE_ID');
  t.equal(twice.body.msg, `Bad event queue ID: ${queueId}`);
});

t.test('a client that disconnects from a held poll loses nothing', async (t) => {
  const { api, stop } = await startTestServer(t);
  const { queueId } = await api.register({ event_types: ['realm_user'] });

  const controller = new AbortController();
  const aborted = poll(api, queueId, -1, false, { signal: controller.signal });
  const outcome = aborted.then(
    () => 'completed',
    (error: Error) => error.name,
  );
  await sleep(300);
  controller.abort();
  t.equal(await outcome, 'AbortError', 'the client gave up on the poll');
  // Let the server notice the closed connection.
  await sleep(200);

  await api.createUser('late@example.com', 'Late');
  const next = await within(3000, poll(api, queueId, -1), 'the next poll');
  t.equal(next.status, 200);
  t.equal(next.body.events.length, 1, 'the event created after the disconnect is delivered');
  t.equal(next.body.events[0].type, 'realm_user');
  t.equal(next.body.events[0].person.email, 'late@example.com');

  // The abandoned poll must not stay "in flight" forever: a graceful stop waits for requests in flight.
  const stopped = await within(3000, stop(), 'a graceful stop after a client abandoned a poll').then(
    () => true,
    () => false,
  );
  t.ok(stopped, 'the server stops gracefully after a client abandoned a held poll');
});
