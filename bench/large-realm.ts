/**
 * A large organization's periodic snapshot and sends, without HTTP: the server's own Store and Runtime in
 * this process (as bench/lib/organization.ts opens them), `--users` users each subscribed to `--channels`
 * channels (the organization's subscriptions: users x channels). Reports, `--rounds` times each:
 *
 * - a snapshot after one direct message: what the organization's size costs every periodic snapshot;
 * - `--sends` sends to a channel of every user, then a snapshot: the sends' CPU (each recipient's unread
 *   set is read, some from the data directory) and the snapshot's.
 *
 * Before the rounds, once: the CPU of each of the `--channels` - 1 subscribes that make a new channel with
 * every user in it (one request, as an administrator adding everyone does), and the heap they leave. With
 * `--queues`, every user has an event queue first (everyone online), so that the subscribes' events are made
 * and buffered too.
 *
 * CPU is this process's (every thread); the snapshot's wall time is mostly one synchronous turn.
 *
 *   npx tsx bench/large-realm.ts [--users 10000] [--channels 21] [--sends 50] [--rounds 3] [--queues]
 */
import { parseArgs } from 'node:util';
import { writeOrganization } from './lib/organization.ts';
import { makeTempDir, removeTempDir } from './lib/proc.ts';
import { median } from './lib/stats.ts';

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '10000' }, channels: { type: 'string', default: '21' }, sends: { type: 'string', default: '50' }, rounds: { type: 'string', default: '3' },
    queues: { type: 'boolean', default: false },
  },
});
const users = Number(values.users);
const channels = Number(values.channels);
const sends = Number(values.sends);
const rounds = Number(values.rounds);

/** Wall and CPU milliseconds of `work`. */
async function measured(work: () => Promise<unknown>): Promise<{ wallMs: number; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await work();
  const used = process.cpuUsage(cpu);
  return { wallMs: performance.now() - start, cpuMs: (used.user + used.system) / 1000 };
}

const dir = makeTempDir('large-realm-');
try {
  const written = performance.now();
  const { runtime, store, realm, userIds, channelId } = await writeOrganization(dir, { users, name: 'large', channel: 'everyone' });
  const owner = { kind: 'user', userId: userIds[0]! } as const;
  if (values.queues) {
    // As a client registers for everything (no event types named), with the capabilities the web app sends.
    const spec = { eventTypes: null, allPublicStreams: false, narrow: [], capabilities: { notification_settings_null: true, bulk_message_deletion: true, user_avatar_url_field_optional: true }, applyMarkdown: true, clientExtavatar: true, slimPresence: true, idleTimeoutMs: 600_000 };
    for (const userId of userIds) await runtime.createQueue(realm.realmId, userId, spec);
  }
  const heapBefore = process.memoryUsage().heapUsed;
  const subscribeAll: { wallMs: number; cpuMs: number }[] = [];
  for (let c = 1; c < channels; c++) {
    subscribeAll.push(await measured(() => runtime.execute(realm.realmId, {
      type: 'channel.subscribe', caller: owner, channels: [{ name: `channel ${c}`, description: '' }], principals: userIds,
      options: { inviteOnly: false, isWebPublic: false, messageRetentionDays: null, isDefault: false, permissions: {} }, authorizationErrorsFatal: true,
    })));
  }
  const heapAfter = process.memoryUsage().heapUsed;
  await runtime.snapshot();
  console.log(`${users} users in ${channels} channels (${users * channels} subscriptions), written in ${((performance.now() - written) / 1000).toFixed(1)} s`);
  const f = (n: number) => n.toFixed(0);
  if (subscribeAll.length) {
    const cpu = subscribeAll.map((run) => run.cpuMs).sort((a, b) => a - b);
    console.log(
      `a new channel with all ${users} subscribed at once (${subscribeAll.length} channels${values.queues ? `, ${users} queues` : ''}): ` +
        `CPU ${f(cpu[0]!)}-${f(cpu.at(-1)!)} ms, median ${f(median(cpu))} ms; heap ${f((heapAfter - heapBefore) / 1e6)} MB more after them`,
    );
  }
  for (let round = 1; round <= rounds; round++) {
    await runtime.execute(realm.realmId, { type: 'message.send', caller: owner, kind: 'direct', to: [userIds[1]!], content: `direct ${round}`, client: 'bench' });
    const afterDirect = await measured(() => runtime.snapshot());
    const sent = await measured(async () => {
      for (let i = 0; i < sends; i++) {
        await runtime.execute(realm.realmId, { type: 'message.send', caller: owner, kind: 'channel', to: channelId, topic: `round ${round}`, content: `to everyone ${i}`, client: 'bench' });
      }
    });
    const afterSends = await measured(() => runtime.snapshot());
    console.log(
      `round ${round}: snapshot after a direct message ${f(afterDirect.wallMs)} ms (CPU ${f(afterDirect.cpuMs)}); ` +
        `${sends} sends to all ${users}: ${f((sent.cpuMs * 1000) / sends)} us CPU each; the snapshot after them ${f(afterSends.wallMs)} ms (CPU ${f(afterSends.cpuMs)})`,
    );
  }
  await store.close();
} finally {
  removeTempDir(dir);
}
