/**
 * A data export through the API (RealmExportJobs, as POST /export/realm starts it) of an organization of
 * `--messages` messages, without HTTP: the server's own Store and Runtime in this process (as
 * bench/lib/organization.ts opens them). Nine messages in ten go to a channel everyone is in, the tenth is a
 * direct message to the owner; a snapshot leaves the history on disk, as a running server's mostly is. Each of
 * `--runs` rounds times, as `--type` (1 public, 2 with consent: the owner consents):
 *
 * - the baseline: what the export did in its first turn before it walked the history a chunk per turn (every
 *   message read and judged, each kept one read again for its recipient, the records taken, the ids sorted);
 * - the export as the server makes it: the longest turn of the event loop from its start to its end (the file
 *   written), by the clock and by the process's CPU (which a loaded machine does not stretch), and how long
 *   it took.
 *
 *   npx tsx --expose-gc bench/realm-export.ts [--users 1000] [--messages 100000] [--type 1] [--runs 3]
 */
import { parseArgs } from 'node:util';
import { writeOrganization } from './lib/organization.ts';
import { makeTempDir, removeTempDir } from './lib/proc.ts';
import { cpuMs, watchTurns } from './lib/turns.ts';

const { values } = parseArgs({
  options: { users: { type: 'string', default: '1000' }, messages: { type: 'string', default: '100000' }, type: { type: 'string', default: '1' }, runs: { type: 'string', default: '3' } },
});
const users = Number(values.users);
const messages = Number(values.messages);
const exportType = Number(values.type) as 1 | 2;

const { realmRecordWithoutMessages } = await import('../actors/realm/state.ts');
const { settingValue } = await import('../actors/user/settings.ts');
const { userToRecord } = await import('../actors/user/state.ts');
const { createLogger } = await import('../src/log.ts');
const { ExportScope } = await import('../src/realm-export-filter.ts');
const { RealmExportJobs } = await import('../src/realm-export-jobs.ts');

const dir = makeTempDir('realm-export-');
try {
  const written = performance.now();
  const { runtime, store, realm, userIds, channelId } = await writeOrganization(dir, { users, name: 'large', channel: 'everyone' });
  const ownerId = userIds[0]!;
  for (let start = 0; start < messages; start += 1000) {
    await Promise.all(Array.from({ length: Math.min(1000, messages - start) }, (_, i) => {
      const n = start + i;
      return n % 10 === 9
        ? runtime.execute(realm.realmId, { type: 'message.send', caller: { kind: 'user', userId: userIds[1 + (n % (users - 1))]! }, kind: 'direct', to: [ownerId], content: `direct ${n}`, client: 'bench' })
        : runtime.execute(realm.realmId, { type: 'message.send', caller: { kind: 'user', userId: ownerId }, kind: 'channel', to: channelId, topic: `topic ${n % 100}`, content: `message ${n}`, client: 'bench' });
    }));
  }
  if (exportType === 2) await runtime.executeUser(realm.realmId, ownerId, { type: 'settings.update', settings: { allow_private_data_export: true } });
  await runtime.snapshot();
  const state = runtime.realmState(realm.realmId);
  console.log(`${users} users, ${messages} messages, export type ${exportType}; written in ${((performance.now() - written) / 1000).toFixed(1)} s`);

  /** The export's first turn before the walk was sliced (src/realm-export-jobs.ts at 8a58766), in ms. */
  const baseline = () => {
    const began = performance.now();
    const cpu = cpuMs();
    const consented = new Set<number>();
    for (const user of state.users.values()) {
      const settings = runtime.userActor(state.realmId, user.userId)?.getSnapshot().context.state.settings;
      if (settings && settingValue(settings, 'allow_private_data_export') === true) consented.add(user.userId);
    }
    const scope = new ExportScope(state, exportType, consented);
    const messageStore = state.messages;
    const lastId = messageStore.nextId;
    const kept = new Set<number>();
    for (const message of messageStore.byId.values()) if (message.id < lastId && scope.includes(message)) kept.add(message.id);
    const recipients = new Set<number>();
    for (const id of kept) recipients.add(messageStore.byId.get(id)!.recipientId);
    scope.realmRecord(realmRecordWithoutMessages(state), scope.messageHead(), kept, recipients);
    for (const user of state.users.values()) {
      const snapshot = runtime.userActor(state.realmId, user.userId)?.getSnapshot();
      if (snapshot) scope.personalRecord({ value: snapshot.value, state: userToRecord(snapshot.context.state) });
    }
    [...kept].sort((a, b) => a - b);
    return { wall: performance.now() - began, cpu: cpuMs() - cpu };
  };

  const jobs = new RealmExportJobs(runtime, dir, createLogger('silent'));
  const f = (n: number) => n.toFixed(0);
  // With --expose-gc, each part starts from a collected heap: the other's garbage is not collected in its turns.
  const collect = (globalThis as { gc?: () => void }).gc ?? (() => {});
  for (let run = 0; run < Number(values.runs); run++) {
    collect();
    const old = baseline();
    collect();
    const [requested] = await runtime.execute(realm.realmId, { type: 'realm_export.request', caller: { kind: 'user', userId: ownerId }, exportType, limit: Infinity, supportAddress: 'support@example.com' });
    if (requested?.type !== 'realm_export.requested') throw new Error('no export requested');
    const id = requested.entry.id;
    const watch = watchTurns();
    const watchCpu = watchTurns(cpuMs);
    const began = performance.now();
    jobs.start(realm.realmId, id);
    const pending = () => runtime.realmState(realm.realmId).exports.list.find((entry) => entry.id === id)!.pending;
    while (pending()) await new Promise((resolve) => setTimeout(resolve, 5));
    const total = performance.now() - began;
    const longest = watch();
    const longestCpu = watchCpu();
    const entry = runtime.realmState(realm.realmId).exports.list.find((candidate) => candidate.id === id)!;
    if (entry.failedTimestamp !== null) throw new Error('the export failed');
    console.log(`run ${run + 1}: baseline first turn ${f(old.wall)} ms (CPU ${f(old.cpu)}); the export: longest turn ${f(longest)} ms (by CPU ${f(longestCpu)}), ${f(total)} ms in all`);
  }
  await jobs.stop();
  await store.close();
} finally {
  removeTempDir(dir);
}
