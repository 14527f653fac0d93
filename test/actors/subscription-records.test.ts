import { rmSync } from 'node:fs';
import t from 'tap';
import { openRuntime } from '../helpers/runtime.ts';
import type { RealmCommand } from '../../actors/realm/commands.ts';
// The runtime first: loading realm/state.ts before anything else trips an import cycle with groups/state.ts.
import type { Runtime } from '../../actors/runtime.ts';
import { CHANNEL_SUBSCRIPTIONS_KIND } from '../../actors/realm/snapshot.ts';
import { Role, realmToRecord, type RealmRecord, type SubscriptionRecord } from '../../actors/realm/state.ts';
import { verifyRealm } from '../../actors/verify.ts';
import { FORMAT_VERSION } from '../../snapshots/codec.ts';
import type { Store } from '../../snapshots/store.ts';
import { tempDir } from '../helpers/server.ts';

const now = Date.UTC(2026, 0, 1);
const clock = { now: () => now };
const as = (userId: number) => ({ kind: 'user', userId }) as const;
const open = (dir: string) => openRuntime(dir, clock);
const options = { inviteOnly: false, isWebPublic: false, messageRetentionDays: null, isDefault: false, permissions: {} };

/** Four users; `alpha` has the first three, `beta` all four. */
async function realmWithChannels(runtime: Runtime) {
  const { realmId } = await runtime.createRealm('', 'Test');
  const run = (command: RealmCommand) => runtime.execute(realmId, command);
  for (const [email, role] of [['owner@example.com', Role.owner], ['ann@example.com', Role.member], ['bob@example.com', Role.member], ['cy@example.com', Role.member]] as const) {
    await run({ type: 'user.create', caller: { kind: 'operator' }, email, fullName: email.split('@')[0]!, passwordHash: null, role });
  }
  await run({ type: 'channel.subscribe', caller: as(1), channels: [{ name: 'alpha', description: '' }], principals: [1, 2, 3], options, authorizationErrorsFatal: true });
  await run({ type: 'channel.subscribe', caller: as(1), channels: [{ name: 'beta', description: '' }], principals: [1, 2, 3, 4], options, authorizationErrorsFatal: true });
  const channelId = (name: string) => runtime.realmState(realmId).channelIdByName.get(name)!;
  return { realmId, run, alpha: channelId('alpha'), beta: channelId('beta') };
}

/** The realm's subscriptions as one sorted list, however they are held. */
const subscriptionsOf = (runtime: Runtime, realmId: number) =>
  [...realmToRecord(runtime.realmState(realmId)).subscriptions].sort((a, b) => a[0] - b[0] || a[1] - b[1]);

/** The stored subscription records of the realm, by channel: the position of the snapshot that wrote each, and its entries. */
function storedSubscriptions(store: Store, realmId: number): Map<number, { seq: number; records: SubscriptionRecord[] }> {
  const out = new Map<number, { seq: number; records: SubscriptionRecord[] }>();
  for (const record of store.readSnapshots()) {
    if (record.kind !== CHANNEL_SUBSCRIPTIONS_KIND || !record.id.startsWith(`${realmId}:`)) continue;
    out.set(Number(record.id.slice(record.id.indexOf(':') + 1)), { seq: record.seq, records: record.data as SubscriptionRecord[] });
  }
  return out;
}

const realmRecordOf = (store: Store) => [...store.readSnapshots()].find((record) => record.kind === 'realm')!;

t.test('a snapshot stores the subscriptions of the channels whose subscriptions changed, and a boot reads them back', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const live = open(dir);
  const { realmId, run, alpha, beta } = await realmWithChannels(live.runtime);
  await live.runtime.snapshot();
  const first = live.runtime.logPosition;
  const realmRecord = realmRecordOf(live.store);
  t.match(realmRecord, { v: FORMAT_VERSION, data: { subscriptionsApart: true, subscriptions: [] } }, 'the realm record holds no subscription');
  const stored = storedSubscriptions(live.store, realmId);
  t.same([...stored.keys()].sort(), [alpha, beta].sort(), 'a record per channel');
  t.same(stored.get(alpha)!.records.map((record) => record[1]), [1, 2, 3]);

  // Ann leaves alpha, Bob mutes it; a message to beta changes nothing of beta's subscriptions.
  await run({ type: 'channel.unsubscribe', caller: as(2), channels: ['alpha'], principals: [2] });
  await run({ type: 'subscription.properties', caller: as(3), userId: 3, entries: [{ channelId: alpha, properties: { isMuted: true } }] });
  await run({ type: 'message.send', caller: as(1), kind: 'channel', to: 'beta', topic: 'news', content: 'hello', client: 'test' });
  await live.runtime.snapshot();
  const second = live.runtime.logPosition;
  const again = storedSubscriptions(live.store, realmId);
  t.equal(again.get(alpha)!.seq, second, 'alpha written again');
  t.equal(again.get(beta)!.seq, first, 'beta not');
  t.match(again.get(alpha)!.records, [[alpha, 1, {}, true], [alpha, 3, { isMuted: true }, true], [alpha, 2, {}, false]], 'with who left and the new properties');
  const expected = subscriptionsOf(live.runtime, realmId);
  await live.store.close();

  const booted = open(dir);
  t.same(subscriptionsOf(booted.runtime, realmId), expected, 'the same subscriptions after a boot');
  t.equal(booted.runtime.realmState(realmId).unsavedSubscriptions.size, 0, 'none to write again');
  t.same(verifyRealm(booted.runtime.realmState(realmId)), []);
  // The boot's snapshot leaves them as they are.
  await booted.runtime.markRunning();
  t.equal(storedSubscriptions(booted.store, realmId).get(beta)!.seq, first);
  await booted.store.close();
});

t.test('the log after the snapshot replays subscription changes; a failed snapshot leaves them to the next', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const live = open(dir);
  const { realmId, run, beta } = await realmWithChannels(live.runtime);
  await live.runtime.snapshot();
  await run({ type: 'channel.unsubscribe', caller: as(4), channels: ['beta'], principals: [4] });
  // A snapshot that cannot be written: the change stays unsaved, and the next snapshot writes it.
  const writeSnapshots = live.store.writeSnapshots.bind(live.store);
  live.store.writeSnapshots = () => Promise.reject(new Error('no room'));
  await t.rejects(live.runtime.snapshot(), /no room/);
  live.store.writeSnapshots = writeSnapshots;
  t.ok(live.runtime.realmState(realmId).unsavedSubscriptions.has(beta), 'beta unsaved again');
  const expected = subscriptionsOf(live.runtime, realmId);
  await live.store.close();

  // Not snapshotted: the boot replays the unsubscription from the log, and its snapshot writes beta.
  const booted = open(dir);
  t.same(subscriptionsOf(booted.runtime, realmId), expected);
  await booted.runtime.markRunning();
  t.match(storedSubscriptions(booted.store, realmId).get(beta)!.records.at(-1), [beta, 4, {}, false]);
  await booted.store.close();
  const again = open(dir);
  t.same(subscriptionsOf(again.runtime, realmId), expected);
  await again.store.close();
});

// A data directory of format 5 holds every subscription inside the realm record.
t.test('a realm record of format 5, subscriptions inside, loads; the boot writes them per channel', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const live = open(dir);
  const { realmId, alpha, beta } = await realmWithChannels(live.runtime);
  await live.runtime.snapshot();
  const expected = subscriptionsOf(live.runtime, realmId);
  // The realm record as format 5 wrote it, its subscriptions inline; no subscription records.
  const current = realmRecordOf(live.store);
  const { subscriptionsApart: _apart, ...data } = current.data as RealmRecord;
  const seq = live.runtime.logPosition;
  const apart = [...storedSubscriptions(live.store, realmId).keys()].map((channelId): [string, string] => [CHANNEL_SUBSCRIPTIONS_KIND, `${realmId}:${channelId}`]);
  await live.store.writeSnapshots(seq, [{ v: 5, seq, kind: 'realm', id: String(realmId), data: { ...data, subscriptions: expected } }], apart);
  t.equal(storedSubscriptions(live.store, realmId).size, 0);
  await live.store.close();

  const old = open(dir);
  t.same(subscriptionsOf(old.runtime, realmId), expected, 'the same subscriptions');
  await old.runtime.markRunning();
  t.match(realmRecordOf(old.store), { v: FORMAT_VERSION, data: { subscriptionsApart: true, subscriptions: [] } }, 'the boot wrote the realm record of the current format');
  t.same([...storedSubscriptions(old.store, realmId).keys()].sort(), [alpha, beta].sort(), 'and the subscriptions per channel');
  await old.store.close();

  const converted = open(dir);
  t.same(subscriptionsOf(converted.runtime, realmId), expected, 'read from their records: the same again');
  await converted.store.close();
});
