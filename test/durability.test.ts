import { rmSync } from 'node:fs';
import t from 'tap';
import { startChild } from './helpers/child.ts';
import { tempDir } from './helpers/server.ts';

// Each case starts servers or commands as processes of their own (tsx, about a second of CPU each): with
// the CPU shared (the suite's other file, or a loaded machine) the file takes minutes, beyond the suite's 120 s.
t.setTimeout(600_000);

const PASSWORD = 'durable-Passw0rd-for-tests';

t.test('every acknowledged write survives SIGKILL right after its acknowledgement', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  for (let round = 0; round < 3; round++) {
    // Later rounds snapshot every 50 ms, so kills also land during snapshots and log trimming.
    const env: Record<string, string> = round === 0 ? {} : { CHAT_SNAPSHOT_SECONDS: '0.05' };
    const server = await startChild(dataDir, env);
    // Writes in flight together, so that several share a group commit.
    const emails = Array.from({ length: 12 }, (_, i) => `r${round}-u${i}@example.com`);
    const created = await Promise.all(
      emails.map((email) => server.api.post('/users', { email, password: PASSWORD, full_name: `User ${email}` })),
    );
    const renamed = await server.api.patch('/users/1', { full_name: `Owner round ${round}` });
    server.process.kill('SIGKILL');
    t.equal(await server.exited, 'SIGKILL', `round ${round}: killed`);
    t.ok(created.every((r) => r.status === 200), `round ${round}: all creations acknowledged`);
    t.equal(renamed.status, 200);

    const again = await startChild(dataDir, env);
    const users = await again.api.get('/users');
    const have = new Set(users.body.members.map((m: { email: string }) => m.email));
    for (let earlier = 0; earlier <= round; earlier++) {
      const missing = Array.from({ length: 12 }, (_, i) => `r${earlier}-u${i}@example.com`).filter((e) => !have.has(e));
      t.same(missing, [], `round ${round}: the users of round ${earlier} are all there`);
    }
    t.equal(users.body.members.length, 1 + 12 * (round + 1), 'no user appears twice or out of nowhere');
    const owner = await again.api.get('/users/1');
    t.equal(owner.body.user.full_name, `Owner round ${round}`, 'the last rename is there');
    const ids = created.map((r) => r.body.user_id);
    t.equal(new Set(ids).size, ids.length, 'user ids are distinct');
    again.process.kill('SIGKILL');
    await again.exited;
  }
});

t.test('a graceful restart keeps event queues and their unacknowledged events', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const server = await startChild(dataDir);
  const { queueId } = await server.api.register({ event_types: ['realm_user'] });
  await server.api.post('/users', { email: 'kept@example.com', password: PASSWORD, full_name: 'Kept' });
  server.process.kill('SIGTERM');
  t.equal(await server.exited, 0, 'clean exit on SIGTERM');

  const again = await startChild(dataDir);
  const polled = await again.api.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  t.equal(polled.status, 200, 'the same queue id is still valid');
  t.match(polled.body.events, [
    { id: Number, type: 'realm_user', op: 'add', person: { email: 'kept@example.com' } },
    { id: Number, type: 'restart', svc_feature_level: 420, svc_version: String, server_generation: Number },
  ]);
  t.equal(polled.body.events.length, 2);
  const restartId: number = polled.body.events[1].id;
  t.ok(restartId > polled.body.events[0].id, 'ids grow');
  // The queue keeps working: the next event continues the ids.
  await again.api.post('/users', { email: 'after@example.com', password: PASSWORD, full_name: 'After' });
  const next = await again.api.get('/events', { queue_id: queueId, last_event_id: restartId });
  t.match(next.body.events, [{ type: 'realm_user', op: 'add', person: { email: 'after@example.com' } }]);
  t.ok(next.body.events[0].id > restartId, 'ids go on growing');
  again.process.kill('SIGTERM');
  await again.exited;
});

type Polled = { id: number; type: string; person?: { email: string } };
const emailsOf = (events: Polled[]) => events.filter((e) => e.type === 'realm_user').map((e) => e.person!.email);

t.test('after a crash a queue is still there with every unacknowledged event, under the ids it had', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  // Snapshots every 200 ms: some events reach the queue before one (they come back from the queue's
  // snapshot) and some after (they come back from replaying the log).
  const env = { CHAT_SNAPSHOT_SECONDS: '0.2', CHAT_HEARTBEAT_SECONDS: '0.5' };
  const server = await startChild(dataDir, env);
  const { queueId } = await server.api.register({ event_types: ['realm_user'] });
  const gone = await server.api.register({ event_types: ['realm_user'] });
  t.equal((await server.api.delete('/events', { queue_id: gone.queueId })).status, 200);
  const create = (email: string) => server.api.post('/users', { email, password: PASSWORD, full_name: email });

  await create('one@example.com');
  const first = await server.api.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  const oneId: number = first.body.events[0].id;
  // A held poll gets a heartbeat: an event no log entry holds.
  const beat = await server.api.get('/events', { queue_id: queueId, last_event_id: oneId });
  t.same(beat.body.events.map((e: Polled) => e.type), ['heartbeat']);
  const beatId: number = beat.body.events[0].id;
  await new Promise((resolve) => setTimeout(resolve, 400));
  await create('two@example.com');
  await create('three@example.com');
  const seen = await server.api.get('/events', { queue_id: queueId, last_event_id: beatId, dont_block: true });
  t.same(emailsOf(seen.body.events), ['two@example.com', 'three@example.com']);
  const before = new Map<string, number>(seen.body.events.map((e: Polled) => [e.person!.email, e.id]));
  await create('four@example.com');
  server.process.kill('SIGKILL');
  await server.exited;

  const again = await startChild(dataDir, env);
  t.equal(
    (await again.api.get('/events', { queue_id: gone.queueId, last_event_id: -1, dont_block: true })).body.code,
    'BAD_EVENT_QUEUE_ID',
    'a queue deleted before the crash stays deleted',
  );
  // The client saw two and three, and acknowledged up to the heartbeat, which the crash lost.
  const resumed = await again.api.get('/events', { queue_id: queueId, last_event_id: beatId, dont_block: true });
  t.equal(resumed.status, 200, 'the same queue id is still valid, and the lost heartbeat id is taken as an acknowledgement');
  t.same(emailsOf(resumed.body.events), ['two@example.com', 'three@example.com', 'four@example.com'], 'nothing unacknowledged is lost');
  for (const event of resumed.body.events as Polled[]) {
    if (before.has(event.person?.email ?? '')) t.equal(event.id, before.get(event.person!.email), `${event.person!.email} has the id it had`);
  }
  const last = resumed.body.events.at(-1) as Polled;
  t.equal(last.type, 'restart', 'the client learns of the restart');
  const threeId = before.get('three@example.com')!;
  const after = await again.api.get('/events', { queue_id: queueId, last_event_id: threeId, dont_block: true });
  t.same(emailsOf(after.body.events), ['four@example.com'], 'acknowledging by an id from before the crash works');
  await again.api.post('/users', { email: 'five@example.com', password: PASSWORD, full_name: 'Five' });
  const later = await again.api.get('/events', { queue_id: queueId, last_event_id: last.id, dont_block: true });
  t.same(emailsOf(later.body.events), ['five@example.com']);
  t.ok(later.body.events[0].id > last.id, 'new events get greater ids');
  again.process.kill('SIGKILL');
  await again.exited;

  // A second crash, with nothing new in between, gives the same queue again.
  const third = await startChild(dataDir, env);
  const still = await third.api.get('/events', { queue_id: queueId, last_event_id: last.id, dont_block: true });
  t.equal(still.status, 200);
  t.same(emailsOf(still.body.events), ['five@example.com']);
  third.process.kill('SIGTERM');
  await third.exited;
});

t.test('crashes during snapshots under load lose no queued event and repeat none', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  // Snapshots every 20 ms: some land while the commits of the writes below are still in flight.
  const env = { CHAT_SNAPSHOT_SECONDS: '0.02' };
  let server = await startChild(dataDir, env);
  const { queueId } = await server.api.register({ event_types: ['realm_user'] });
  const received: string[] = [];
  const created: string[] = [];
  let lastId = -1;
  for (let round = 0; round < 4; round++) {
    const emails = Array.from({ length: 15 }, (_, i) => `load${round}-${i}@example.com`);
    const answers = await Promise.all(emails.map((email) => server.api.post('/users', { email, password: PASSWORD, full_name: email })));
    t.ok(answers.every((answer) => answer.status === 200), `round ${round}: every creation acknowledged`);
    created.push(...emails);
    server.process.kill('SIGKILL');
    await server.exited;
    server = await startChild(dataDir, env);
    const polled = await server.api.get('/events', { queue_id: queueId, last_event_id: lastId, dont_block: true });
    t.equal(polled.status, 200, `round ${round}: the queue is there`);
    const events = polled.body.events as Polled[];
    received.push(...emailsOf(events));
    lastId = events.at(-1)!.id;
  }
  t.same([...received].sort(), [...created].sort(), 'every acknowledged change reached the queue exactly once');
  server.process.kill('SIGTERM');
  await server.exited;
});
