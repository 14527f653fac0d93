import { rmSync } from 'node:fs';
import t from 'tap';
import { openRuntime } from '../helpers/runtime.ts';
// The runtime first: loading realm/state.ts before anything else trips an import cycle with groups/state.ts.
import type { Runtime } from '../../actors/runtime.ts';
import { eventsJson } from '../../actors/queue/buffer.ts';
import { PAYLOAD_KIND, QUEUE_KIND } from '../../actors/queue/snapshot.ts';
import type { QueueSpec } from '../../actors/queue/spec.ts';
import type { RealmCommand } from '../../actors/realm/commands.ts';
import { Role } from '../../actors/realm/state.ts';
import type { Store } from '../../snapshots/store.ts';
import { tempDir } from '../helpers/server.ts';

const now = Date.UTC(2026, 0, 1);
const clock = { now: () => now };
const as = (userId: number) => ({ kind: 'user', userId }) as const;

const spec = (eventTypes: string[]): QueueSpec => ({
  eventTypes, allPublicStreams: false, narrow: [], capabilities: {}, applyMarkdown: false, clientExtavatar: true, idleTimeoutMs: 600_000,
});

async function realmOfTwo(runtime: Runtime) {
  const { realmId } = await runtime.createRealm('', 'Test');
  const run = (command: RealmCommand) => runtime.execute(realmId, command);
  for (const [email, role] of [['owner@example.com', Role.owner], ['ann@example.com', Role.member]] as const) {
    await run({ type: 'user.create', caller: { kind: 'operator' }, email, fullName: email.split('@')[0]!, passwordHash: null, role });
  }
  const options = { inviteOnly: false, isWebPublic: false, messageRetentionDays: null, isDefault: false, permissions: {} };
  await run({ type: 'channel.subscribe', caller: as(1), channels: [{ name: 'general', description: '' }], principals: [1, 2], options, authorizationErrorsFatal: true });
  const send = async (content: string) => {
    const [change] = await run({ type: 'message.send', caller: as(1), kind: 'channel', to: 'general', topic: 't', content, client: 'test' });
    return change?.type === 'message.sent' ? change.message.id : -1;
  };
  return { realmId, send };
}

const kinds = (store: Store) => {
  const counts: Record<string, number> = {};
  for (const record of store.readSnapshots()) counts[record.kind] = (counts[record.kind] ?? 0) + 1;
  return counts;
};

t.test('a queue record older than an acknowledgement restores without the events whose shared payload has gone', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { store, runtime } = openRuntime(dir, clock);
  const { realmId, send } = await realmOfTwo(runtime);
  // Two clients of one recipient: the same events, flags and all.
  const a = await runtime.createQueue(realmId, 2, spec(['message']));
  const b = await runtime.createQueue(realmId, 2, spec(['message']));
  const sent = [await send('one'), await send('two'), await send('three')];
  await runtime.snapshot();
  t.match(kinds(store), { [QUEUE_KIND]: 2, [PAYLOAD_KIND]: 3 }, 'two queues, and each message once');

  // Both acknowledge the first two: nothing holds their payloads. Acknowledgements are not written, so the
  // queues' records still name them, but the next snapshot deletes the payloads.
  const second = a.buffer.events[1]!.id;
  t.equal(b.buffer.events[1]!.id, second, 'the same id in both queues');
  await runtime.queues.poll(a, second, true);
  await runtime.queues.poll(b, second, true);
  await runtime.createQueue(realmId, 2, spec(['realm_user']));
  await runtime.snapshot();
  t.match(kinds(store), { [QUEUE_KIND]: 3, [PAYLOAD_KIND]: 1 }, 'the acknowledged payloads are deleted');
  // A crash: no final snapshot.
  await store.close();

  const reopened = openRuntime(dir, clock);
  t.teardown(() => reopened.store.close());
  const restored = (id: string) => reopened.runtime.queues.find(id)!;
  for (const queue of [restored(a.id), restored(b.id)]) {
    t.equal(queue.buffer.events.length, 1, 'the unacknowledged event is back');
    const polled = JSON.parse(eventsJson(reopened.runtime.queues.poll(queue, second, true))) as { id: number; message: { id: number } }[];
    t.same(polled.map((event) => event.message.id), [sent[2]], 'the acknowledgement is taken, the third message follows');
  }
  t.equal(restored(a.id).buffer.events[0]!.payload, restored(b.id).buffer.events[0]!.payload, 'still one payload for both');

  // Once both acknowledge it, the last payload record goes too.
  const third = restored(a.id).buffer.events[0]!.id;
  await reopened.runtime.queues.poll(restored(a.id), third, true);
  await reopened.runtime.queues.poll(restored(b.id), third, true);
  await reopened.runtime.snapshot();
  t.notOk(PAYLOAD_KIND in kinds(reopened.store), 'no payload record is left behind');
});
