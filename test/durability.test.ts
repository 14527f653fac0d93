import { rmSync } from 'node:fs';
import t from 'tap';
import { startChild } from './helpers/child.ts';
import { tempDir } from './helpers/server.ts';

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
    { id: 0, type: 'realm_user', op: 'add', person: { email: 'kept@example.com' } },
    { id: 1, type: 'restart', svc_feature_level: 370, svc_version: String, server_generation: Number },
  ]);
  t.equal(polled.body.events.length, 2);
  // The queue keeps working: the next event continues the ids.
  await again.api.post('/users', { email: 'after@example.com', password: PASSWORD, full_name: 'After' });
  const next = await again.api.get('/events', { queue_id: queueId, last_event_id: 1 });
  t.match(next.body.events, [{ id: 2, type: 'realm_user', op: 'add', person: { email: 'after@example.com' } }]);
  again.process.kill('SIGTERM');
  await again.exited;
});

t.test('after a crash a queue is gone and says so; the client re-registers and loses no data', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const server = await startChild(dataDir);
  const { queueId } = await server.api.register({ event_types: ['realm_user'] });
  await server.api.post('/users', { email: 'crash@example.com', password: PASSWORD, full_name: 'Crash' });
  server.process.kill('SIGKILL');
  await server.exited;

  const again = await startChild(dataDir);
  const polled = await again.api.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  t.equal(polled.status, 400);
  t.equal(polled.body.code, 'BAD_EVENT_QUEUE_ID');
  const registered = await again.api.register({ fetch_event_types: ['realm_user'] });
  t.ok(
    registered.body.realm_users.some((u: { email: string }) => u.email === 'crash@example.com'),
    'the new registration state holds the change',
  );
  again.process.kill('SIGTERM');
  await again.exited;
});
