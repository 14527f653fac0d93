import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { RealmChange } from '../actors/realm/changes.ts';
import { Role } from '../actors/realm/state.ts';
import { encode, FORMAT_VERSION } from '../snapshots/codec.ts';
import { Store } from '../snapshots/store.ts';
import { ConfigError, configFrom } from '../src/config.ts';
import { dataDirCommands } from '../src/operator-data.ts';
import { childServers, type ChildServer } from './helpers/child.ts';
import { cli } from './helpers/cli.ts';
import { fetchIds } from './helpers/messages.ts';
import { openRuntime } from './helpers/runtime.ts';
import { tempDir } from './helpers/server.ts';

// Each case starts servers or commands as processes of their own (tsx, about a second of CPU each): with
// the CPU shared (the suite's other file, or a loaded machine) the file takes minutes, beyond the suite's 120 s.
t.setTimeout(600_000);

/**
 * Point-in-time recovery: a base backup (`snapshot`) plus the log records after it, from the log archive
 * that snapshots now fill instead of deleting what they cover (`restore --until`).
 */

/** `chat-server restore SNAPSHOT --data-dir DIR ...`, run in this process. */
const restore = (dataDir: string, values: Record<string, string>, snapshot: string) =>
  dataDirCommands.restore!.run(configFrom({ 'data-dir': dataDir }, {}), values, [snapshot]);

/** The ids of the messages in the test's topic, as a boot of the data directory finds them. */
async function topicMessages(dir: string): Promise<number[]> {
  const { store, runtime } = openRuntime(dir, { now: Date.now });
  const [realm] = runtime.realmStates();
  const ids = [...realm!.messages.byId.values()].filter(({ recipient }) => recipient.kind === 'channel' && recipient.topic === 'pitr').map(({ id }) => id);
  await store.close();
  return ids.sort((a, b) => a - b);
}

const record = (seq: number, at: number) => ({ v: FORMAT_VERSION, seq, at, realmId: 1, changes: [] });
const seqs = (store: Store, after = 0) => [...store.history().after(after)].map((entry) => entry.seq);

/**
 * A data directory with one organization and its owner, written in this process (still open), and a work
 * folder; both removed at the test's end.
 */
async function organization(t: Test) {
  const dataDir = tempDir();
  const work = tempDir();
  t.teardown(() => {
    for (const dir of [dataDir, work]) rmSync(dir, { recursive: true, force: true });
  });
  const { store, runtime } = openRuntime(dataDir, { now: Date.now });
  const { realmId } = await runtime.createRealm('', 'Chat');
  const [created] = await runtime.execute(realmId, {
    type: 'user.create', caller: { kind: 'operator' }, email: 'owner@example.com', fullName: 'Owner', passwordHash: null, role: Role.owner,
  });
  const owner = { kind: 'user' as const, userId: (created as Extract<RealmChange, { type: 'user.created' }>).user.userId };
  return { dataDir, work, store, runtime, realmId, owner };
}

t.test('the log archive: snapshots keep what they cover, a boot reads only what follows, old records are pruned', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  let now = 4_000;
  const store = new Store(dir, { waitForFlush: false, archiveRetentionMs: 5_000, now: () => now });
  for (let seq = 1; seq <= 5; seq++) await store.append(record(seq, seq * 1000));
  await store.writeSnapshots(3, [], []);
  t.same([...store.readLog(0)].map((entry) => entry.seq), [4, 5], 'the live log holds only what the snapshot does not cover');
  t.same(seqs(store), [1, 2, 3, 4, 5], 'archive and log together hold the whole history');
  const archiveDb = (store as unknown as { archiveDb: { getCount(): number } }).archiveDb;
  t.equal(archiveDb.getCount(), 0, 'nothing is copied: the records stay in the log, below the snapshot position');
  t.same(seqs(store, 2), [3, 4, 5]);
  t.match(store.history().find(2), { seq: 2, at: 2000 });
  t.match(store.history().checkArchive(3), { entries: 3, first: { seq: 1, at: 1000 }, last: { seq: 3, at: 3000 }, problems: [] });

  now = 7_500; // keeps records committed since 2,500
  await store.writeSnapshots(5, [], []);
  t.same([...store.readLog(0)], [], 'the live log is empty after a snapshot of everything');
  t.same(seqs(store), [3, 4, 5], 'records older than the retention are pruned by the next snapshot');
  t.same(store.archiveStats(), { entries: 3, oldestAt: 3000 });
  await store.close();

  const off = new Store(dir, { waitForFlush: false, archiveRetentionMs: 0 });
  await off.append(record(6, 8000));
  await off.writeSnapshots(6, [], []);
  t.same(seqs(off), [], 'a retention of 0 keeps nothing, and drops what was kept');
  for (const seq of [7, 8, 10]) await off.append(record(seq, 9000));
  t.same(seqs(off), [7, 8], 'the history ends at a gap in the log, as a boot does (what follows was never acknowledged)');
  await off.close();
});

t.test('a long archive: where the retention starts found among many records, a retention made shorter pruned over several snapshots, each a bounded commit', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const covered = 70_000;
  const old = 30_000;
  const now = Date.now();
  const week = 7 * 24 * 3600_000;
  const kept = new Store(dir, { waitForFlush: false, archiveRetentionMs: week });
  for (let from = 1; from <= covered; from += 5_000) {
    await kept.appendEntries(Array.from({ length: 5_000 }, (_, i) => {
      const at = from + i <= old ? now - week - 1000 : now;
      return { seq: from + i, at, bytes: encode(record(from + i, at)) };
    }));
  }
  await kept.writeSnapshots(covered, [], []);
  t.same(kept.archiveStats(), { entries: covered - old, oldestAt: now }, 'the records past the retention are pruned, the others kept');
  t.equal(kept.history().find(old), null);
  t.match(kept.history().find(old + 1), { seq: old + 1, at: now });
  let read = 0;
  for (const entry of kept.readKept(old)) if (entry.seq === old + 1 + read) read++;
  t.equal(read, covered - old, 'what catches up from before the snapshot reads every kept record, in order');
  t.same([...kept.readKept(old - 1)], [], 'and nothing where the next record was pruned');
  await kept.close();

  const off = new Store(dir, { waitForFlush: false, archiveRetentionMs: 0 });
  const left: number[] = [];
  for (let seq = covered + 1; seq <= covered + 3; seq++) {
    await off.append(record(seq, now));
    await off.writeSnapshots(seq, [], []);
    left.push(off.archiveStats().entries);
  }
  // Each snapshot removes at most 20,000 records beyond the one it newly covers.
  t.same(left, [covered - old + 1 - 20_001, 0, 0]);
  t.same([...off.readLog(0)], [], 'a boot replays nothing');
  await off.close();
});

t.test('the log archive of an older server (records moved into the archive database) is read before the log, counted and pruned', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  let now = 4_000;
  const store = new Store(dir, { waitForFlush: false, archiveRetentionMs: 5_000, now: () => now });
  const archive = (store as unknown as { archiveDb: { put(key: number, value: Buffer): Promise<boolean> } }).archiveDb;
  for (let seq = 1; seq <= 3; seq++) await archive.put(seq, encode(record(seq, seq * 1000)));
  for (let seq = 4; seq <= 6; seq++) await store.append(record(seq, seq * 1000));
  await store.writeSnapshots(3, [], []);
  t.same(seqs(store), [1, 2, 3, 4, 5, 6]);
  t.match(store.history().checkArchive(3), { entries: 3, first: { seq: 1, at: 1000 }, last: { seq: 3, at: 3000 }, problems: [] });
  t.same(store.archiveStats(), { entries: 3, oldestAt: 1000 });

  now = 7_500; // keeps records committed since 2,500
  await store.writeSnapshots(5, [], []);
  t.same(seqs(store), [3, 4, 5, 6], 'the archive database is pruned first');
  t.same([...store.readLog(0)].map((entry) => entry.seq), [6]);
  t.match(store.history().checkArchive(5), { entries: 3, first: { seq: 3, at: 3000 }, last: { seq: 5, at: 5000 }, problems: [] });
  t.same(store.archiveStats(), { entries: 3, oldestAt: 3000 });
  const kept = (afterSeq: number) => [...store.readKept(afterSeq)].map((entry) => entry.seq);
  t.same(kept(2), [3, 4, 5], 'the kept records: the archive database, then the log up to the snapshot');
  t.same(kept(4), [5]);
  t.same(kept(1), [], 'none when the next one was pruned');
  await (store as unknown as { log: { put(key: number, value: Buffer): Promise<boolean> } }).log.put(4, Buffer.from('not a record'));
  t.same(kept(2), [3], 'they end before an unreadable record');
  await store.close();
});

t.test('verify finds an unreadable or missing archived record', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const created = await cli('create-realm', '--data-dir', dir, '--subdomain', '', '--name', 'Archive Org', '--owner-email', 'boss@archive.test', '--owner-password', 'boss-Long-passw0rd');
  t.equal(created.code, 0, created.stderr);
  await cli('create-user', '--data-dir', dir, '--email', 'a@archive.test', '--full-name', 'A', '--password', 'a-Long-passw0rd-1');
  await cli('create-user', '--data-dir', dir, '--email', 'b@archive.test', '--full-name', 'B', '--password', 'b-Long-passw0rd-2');
  const clean = await cli('verify', '--data-dir', dir);
  t.equal(clean.code, 0, clean.stderr);
  t.match(clean.stdout, /^log archive: 4 records, positions 1 to 4, committed \S+ to \S+$/m, 'verify reports the archive');

  const store = new Store(dir, { waitForFlush: true });
  // The records the snapshots covered stay in the log, below the snapshot's position.
  const log = (store as unknown as { log: { put(key: number, value: Buffer): Promise<boolean>; remove(key: number): Promise<boolean> } }).log;
  await log.put(2, Buffer.from('not a record'));
  await log.remove(3);
  await store.close();
  const broken = await cli('verify', '--data-dir', dir);
  t.equal(broken.code, 1, 'verify fails');
  t.match(broken.stdout, /problem: archived log record 2 cannot be read/);
  t.match(broken.stdout, /problem: the log archive has a gap: positions 3 to 3 are missing/);
});

t.test('restore --until: a snapshot brought forward to a moment or a log position, from the log and archive of the data directory', async (t) => {
  const dataDir = tempDir();
  const work = tempDir();
  const { start, stop } = childServers(t, [dataDir, work]);
  const position = async (server: ChildServer): Promise<number> => (await (await fetch(`${server.url}/health`)).json()).log_position;
  const pause = () => new Promise((resolve) => setTimeout(resolve, 20));
  const channelIds = (server: ChildServer) => fetchIds(server.api.as(owner), [{ operator: 'channel', operand: 'history' }]);
  const send = async (server: ChildServer, content: string) =>
    (await server.api.as(owner).post('/messages', { type: 'stream', to: 'history', topic: 'pitr', content })).body.id as number;

  let server = await start(dataDir);
  const owner = server.owner;
  t.equal((await server.api.post('/users/me/subscriptions', { subscriptions: [{ name: 'history' }] })).status, 200);
  const one = await send(server, 'one');
  // Stopped and started again: the snapshots of both cover the history so far, so the base backup's
  // position is past the start (and its own log holds the message sent after them).
  await stop(server);
  server = await start(dataDir);
  const atBase = await position(server);
  const early = await send(server, 'early');
  const base = join(work, 'base');
  const snapshot = await cli('snapshot', '--data-dir', dataDir, '--out', base);
  t.equal(snapshot.code, 0, snapshot.stderr);
  const two = await send(server, 'two');
  const atTwo = await position(server);
  await pause();
  const afterTwo = new Date().toISOString();
  await pause();
  const three = await send(server, 'three');
  const atThree = await position(server);
  // The mistake to go back before: the first message deleted.
  t.equal((await server.api.delete(`/messages/${one}`)).status, 200);
  t.same(await channelIds(server), [early, two, three]);
  await stop(server);

  // Back to a moment: the last change committed by then is message two.
  const byTime = join(work, 'by-time');
  const restored = await cli('restore', base, '--data-dir', byTime, '--until', afterTwo, '--log', dataDir);
  t.equal(restored.code, 0, restored.stderr);
  t.match(restored.stdout, new RegExp(`Point in time: the snapshot's position ${atBase}, ${atTwo - atBase} log records after it \\(${atTwo - atBase - 1} of them from .*\\), up to position ${atTwo}, the last change committed`));
  server = await start(byTime);
  t.same(await channelIds(server), [one, early, two], 'the state of that moment: message two sent, three not yet');
  // A new history goes on from there (used below).
  const other = await send(server, 'another history');
  t.ok(other > two);
  await stop(server);

  // Back to a log position: just before the deletion.
  const byPosition = join(work, 'by-position');
  const exact = await cli('restore', base, '--data-dir', byPosition, '--until', String(atThree), '--log', dataDir);
  t.equal(exact.code, 0, exact.stderr);
  t.same(await topicMessages(byPosition), [one, early, two, three], 'everything up to the position, and not the deletion after it');
  const verified = await cli('verify', '--data-dir', byPosition);
  t.equal(verified.code, 0, verified.stdout + verified.stderr);
  t.match(verified.stdout, /^log archive: \d+ records, positions 1 to \d+/m, 'the restored directory archives the replayed records in turn');

  // Clear refusals (the operator function the CLI runs, in this process); none leaves data behind.
  const refused = join(work, 'refused');
  const refusal = async (pattern: RegExp, values: Record<string, string>, snapshot = base) => {
    await t.rejects(restore(refused, values, snapshot), { constructor: ConfigError, message: pattern }, `refused: ${JSON.stringify(values)}`);
    t.notOk(existsSync(join(refused, 'data.mdb')), 'nothing is restored');
  };
  await refusal(new RegExp(`--until position 1 is before the snapshot's position ${atBase}, committed .*: restore an older snapshot`), { until: '1', log: dataDir });
  await refusal(/--until 2001-01-01T00:00:00.000Z is before the snapshot's position/, { until: '2001-01-01T00:00:00Z', log: dataDir });
  await refusal(new RegExp(`--until ${atThree + 1000} is beyond the available log: the log of .* ends at position ${atThree + 1}, committed`), { until: String(atThree + 1000), log: dataDir });
  await refusal(/is past the last record available: .* ends at position \d+, .*give --until \d+/, { until: new Date(Date.now() + 3_600_000).toISOString(), log: dataDir });
  await refusal(/is beyond the available log: the snapshot's own log ends at .*--log names a data directory/, { until: String(atThree) });
  await refusal(/--log goes with --until/, { log: dataDir });
  await refusal(/--until must be a log position .* or a date and time/, { until: 'yesterday' });

  // A snapshot of the other history does not take records of this one.
  const otherBase = join(work, 'other-base');
  t.equal((await cli('snapshot', '--data-dir', byTime, '--out', otherBase)).code, 0);
  await refusal(/log record \d+ in .* differs from the snapshot's: they are not the same history/, { until: String(atThree), log: dataDir }, otherBase);

  // Rolling back in place: --log names the data directory itself, replaced only once the restore worked.
  t.ok(existsSync(join(dataDir, 'search.sqlite')), 'the server kept a search index there');
  const inPlace = await cli('restore', base, '--data-dir', dataDir, '--until', String(atTwo), '--log', dataDir, '--force');
  t.equal(inPlace.code, 0, inPlace.stderr);
  t.same(await topicMessages(dataDir), [one, early, two]);
  t.notOk(existsSync(join(dataDir, 'search.sqlite')), "the replaced data's search index is gone: the next boot builds it from the restored messages");

  // With no archive kept, the records after the base backup are gone: the restore says so.
  server = await start(dataDir, { CHAT_LOG_ARCHIVE_RETENTION: '0' });
  const late = await send(server, 'late');
  const atLate = await position(server);
  server.process.kill('SIGKILL'); // no final snapshot: the last record stays in the live log
  await server.exited;
  await refusal(new RegExp(`log positions \\d+ to ${atLate - 1}, needed to go forward from the snapshot, are no longer kept: the log archive of .* goes on only at position ${atLate}.*restore a newer snapshot`),
    { until: String(atLate), log: dataDir });
  t.ok(late > two);
});

// Regression: removing thousands of log records in one transaction aborted the process inside LMDB
// ("Assertion 'key.mv_size > 0' failed in mdb_page_alloc()", with 9,000 records of message sends; records
// with no changes do not trigger it): it came from the backup's compacted copy, which Store now seals (sealFreeList).
t.test("restore --until drops thousands of records of the snapshot's own log", async (t) => {
  const { dataDir, work, store, runtime, realmId, owner } = await organization(t);
  await runtime.execute(realmId, {
    type: 'channel.subscribe', caller: owner, channels: [{ name: 'long log', description: '' }], principals: [owner.userId], authorizationErrorsFatal: true,
    options: { inviteOnly: false, isWebPublic: false, messageRetentionDays: null, isDefault: false, permissions: {} },
  });
  const channelId = runtime.realmState(realmId).channels.values().next().value!.id;
  await runtime.snapshot();
  const base = runtime.logPosition;
  // Sent as POST /messages sends them, each its own log record: 10,000 after the snapshot.
  for (let batch = 0; batch < 10; batch++) {
    await Promise.all(Array.from({ length: 1000 }, (_, i) => runtime.execute(realmId, {
      type: 'message.send', caller: owner, kind: 'channel', to: channelId, topic: 'long log', client: 'API',
      content: `Message ${batch * 1000 + i}: the quick brown fox jumps over the **lazy** dog, then naps.`,
    })));
  }
  t.equal(runtime.logPosition, base + 10_000);
  const backup = join(work, 'base');
  await store.backup(backup);
  await store.close();

  const until = base + 1000;
  const restoredDir = join(work, 'restored');
  const restored = await cli('restore', backup, '--data-dir', restoredDir, '--until', String(until));
  t.equal(restored.code, 0, restored.stderr);
  t.match(restored.stdout, `up to position ${until}`);
  t.match(restored.stdout, "9000 later records of the snapshot's log dropped");
  const restoredStore = new Store(restoredDir, { waitForFlush: false });
  t.equal(seqs(restoredStore).at(-1), until, 'the log ends at the position restored');
  await restoredStore.close();
  const verified = await cli('verify', '--data-dir', restoredDir);
  t.equal(verified.code, 0, verified.stdout + verified.stderr);
});

t.test('a backup taken before the first periodic snapshot (position 0): every refusal holds, no empty organization', async (t) => {
  const { dataDir, work, store } = await organization(t);
  t.equal(store.snapshotSeq(), 0, 'no snapshot yet: the backup is at position 0');
  const first = store.history().find(1)!;
  const lastSeq = store.lastSeq();
  const backup = join(work, 'base');
  await store.backup(backup);
  await store.close();

  const refused = async (until: string, pattern: RegExp, withLog: boolean) => {
    const target = join(work, `r${until.replace(/\W/g, '')}${withLog ? 'log' : ''}`);
    const result = await cli('restore', backup, '--data-dir', target, '--until', until, ...(withLog ? ['--log', dataDir] : []));
    t.equal(result.code, 2, `--until ${until}${withLog ? ' --log' : ''} is refused`);
    t.match(result.stderr, pattern);
    t.notOk(existsSync(join(target, 'data.mdb')), 'nothing is restored');
  };
  for (const withLog of [false, true]) {
    await refused('2020-01-01T00:00:00Z', /before the first change recorded \(position 1, committed .*held nothing then/, withLog);
    await refused('0', /--until position 0 is before the first change recorded/, withLog);
    await refused(String(lastSeq + 1), /beyond the available log/, withLog);
  }
  const target = join(work, 'first');
  const restored = await cli('restore', backup, '--data-dir', target, '--until', new Date(first.at).toISOString());
  t.equal(restored.code, 0, restored.stderr);
  t.match(restored.stdout, /1 organizations/);
});
