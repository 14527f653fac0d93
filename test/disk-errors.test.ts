import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { Runtime } from '../actors/runtime.ts';
import { encode, FORMAT_VERSION } from '../snapshots/codec.ts';
import { StorageError, Store } from '../snapshots/store.ts';
import { startChild, type ChildServer } from './helpers/child.ts';
import { cli } from './helpers/cli.ts';
import { fetchIds } from './helpers/messages.ts';
import { startTestServer, tempDir, type ApiClient, type ApiResult } from './helpers/server.ts';

/**
 * Storage faults. A full disk is simulated honestly: the server runs under a file size limit (RLIMIT_FSIZE),
 * so LMDB's writes past it really fail in the kernel (EFBIG, where a full disk gives ENOSPC), with no
 * privileges needed. (A tiny LMDB map size would not do: lmdb-js grows the map on its own. chmod does not
 * stop root.) The server must answer every write with a clear JSON error, stay up, keep serving reads,
 * lose nothing acknowledged, and have everything acknowledged after a restart with room again.
 */

const PASSWORD = 'disk-Errors-passw0rd';

async function verify(dataDir: string): Promise<{ code: number; output: string }> {
  const { code, stdout, stderr } = await cli('verify', '--data-dir', dataDir);
  return { code, output: stdout + stderr };
}

const isEnvelope = (response: ApiResult) =>
  typeof response.body === 'object' && response.body !== null && (response.body.result === 'success' || response.body.result === 'error');

/** Sends messages with big contents, a few at a time, until the server refuses writes (or dies); returns what happened. */
async function fillUp(api: ApiClient, channel: string) {
  const acked = new Map<string, number>();
  const refused: { token: string; response: ApiResult }[] = [];
  const unanswered: string[] = [];
  const padding = 'x'.repeat(6000);
  let n = 0;
  while (refused.length < 8 && unanswered.length === 0 && n < 2000) {
    const batch = Array.from({ length: 4 }, () => `f${n++}z`);
    await Promise.all(batch.map(async (token) => {
      try {
        const response = await api.post('/messages', { type: 'stream', to: channel, topic: 'fill', content: `${token} ${padding}` });
        if (response.status === 200) acked.set(token, response.body.id);
        else refused.push({ token, response });
      } catch {
        unanswered.push(token);
      }
    }));
  }
  return { acked, refused, unanswered, sent: n };
}

/**
 * lmdb-js 3.5.6 formats the message of a failed page write into a 100-byte buffer (mdb.c, mdb_page_flush:
 * `last_error = malloc(100); sprintf(last_error, "Attempting to write page at position %u, size %u, blocks
 * %u, buffer sizes %i %i %i", ...)`) that the text overruns by a byte or a dozen, two of the numbers being
 * unset stack values: heap corruption, after which the process dies sooner or later (glibc's "corrupted size
 * vs. prev_size" abort, or stranger deaths). Nothing we can catch; measured here in about one run of four.
 * When it happens the test records it as a known failure, and still checks that nothing acknowledged was lost.
 */
const LMDB_ABORT = /Write error: /;

t.test('a full disk: writes fail with a clear error, the server stays up and serves reads, nothing acknowledged is lost', async (t) => {
  const dataDir = tempDir();
  let server: ChildServer | null = null;
  t.teardown(async () => {
    if (server && server.process.exitCode === null && server.process.signalCode === null) {
      server.process.kill('SIGKILL');
      await server.exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  // Some history first, with room to spare.
  server = await startChild(dataDir);
  const owner = server.owner;
  const subscribed = await server.api.post('/users/me/subscriptions', { subscriptions: [{ name: 'disk' }] });
  t.equal(subscribed.status, 200);
  const before: number[] = [];
  for (let i = 0; i < 5; i++) before.push((await server.api.post('/messages', { type: 'stream', to: 'disk', topic: 'before', content: `before ${i}` })).body.id);
  server.process.kill('SIGTERM');
  t.equal(await server.exited, 0, 'stopped cleanly');

  // Then a disk with little room left: a limit a little above what the data file holds now.
  const size = statSync(join(dataDir, 'data.mdb')).size;
  server = await startChild(dataDir, {}, { fileSizeLimitKiB: Math.ceil(size / 1024) + 96 });
  const api = server.api.as(owner);
  const { acked, refused, unanswered, sent } = await fillUp(api, 'disk');
  t.comment(`data file ${size} bytes before; ${sent} sends: ${acked.size} acknowledged, ${refused.length} refused, ${unanswered.length} unanswered: ` +
    refused.map(({ token, response }) => `${token} ${response.status} ${response.body.msg}`).join('; '));
  t.ok(acked.size > 0, 'writes are acknowledged while there is room');

  if (unanswered.length > 0) {
    const exited = await server.exited;
    const output = server.output();
    t.match(output, LMDB_ABORT, `the server died (${exited}) after lmdb-js reported a failed write`, { output });
    t.fail('the server stays up when the disk is full', { todo: 'lmdb-js 3.5.6 can abort the process on a failed page write (see LMDB_ABORT)' });
  } else {
    t.ok(refused.length > 0, 'writes fail once the disk is full');
    t.ok(refused.every(({ response }) => isEnvelope(response) && response.body.result === 'error'), 'every refusal is a JSON error envelope');
    const first = refused[0]!.response;
    t.ok(first.status === 500 || first.status === 503, `a 500-class status (${first.status})`);
    t.equal(first.body.code, 'INTERNAL_SERVER_ERROR');
    t.match(first.body.msg, /storage failure/, 'the message names the storage failure');
    const later = refused[refused.length - 1]!.response;
    t.equal(later.status, 503, 'later writes are refused up front');
    t.match(later.body.msg, /cannot save changes .*until it is restarted/);

    // The process is up, says why it is read-only, and serves reads of exactly what is stored.
    t.equal(server.process.exitCode, null, 'the server process is still running');
    const health = await fetch(`${server.url}/health`);
    t.equal(health.status, 503, '/health says the server is degraded');
    t.match(await health.json(), { status: 'read-only', storage_error: /storage failure/ });
    const me = await api.get('/users/me');
    t.equal(me.status, 200, 'reads still work');
    const ids = await fetchIds(api, [{ operator: 'channel', operand: 'disk' }]);
    t.same(ids, [...before, ...[...acked.values()].sort((a, b) => a - b)], 'memory holds exactly the acknowledged messages: none of the failed ones');
    const single = await api.get(`/messages/${[...acked.values()][0]}`);
    t.equal(single.status, 200, 'an acknowledged message is fetched by id');

    // Every kind of write is refused the same way, without crashing anything.
    const draft = await api.post('/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'draft while full' }] });
    t.equal(draft.status, 503);
    t.equal(draft.body.code, 'INTERNAL_SERVER_ERROR');
    const settings = await api.patch('/settings', { web_font_size_px: 20 });
    t.equal(settings.status, 503);
    const user = await api.post('/users', { email: 'late@example.com', password: PASSWORD, full_name: 'Late' });
    t.equal(user.status, 503);

    // A graceful stop still works.
    server.process.kill('SIGTERM');
    t.equal(await server.exited, 0, 'a read-only server stops cleanly');
  }
  server = null;
  const verified = await verify(dataDir);
  t.equal(verified.code, 0, 'verify accepts the directory', { output: verified.output });

  // Room again: everything acknowledged is there, the failed writes are whole or absent, writes work.
  server = await startChild(dataDir);
  const again = server.api.as(owner);
  const after = await fetchIds(again, [{ operator: 'channel', operand: 'disk' }]);
  const afterSet = new Set(after);
  t.ok([...before, ...acked.values()].every((id) => afterSet.has(id)), 'every acknowledged message is there after the restart');
  const extra = after.filter((id) => !before.includes(id) && ![...acked.values()].includes(id));
  for (const id of extra) {
    const message = await again.get(`/messages/${id}`);
    t.match(message.body.raw_content, /^f\d+z x+$/, `an unacknowledged message ${id} that is there is whole`);
  }
  t.comment(`after the restart: ${after.length} messages, ${extra.length} of them unacknowledged`);
  const sentAgain = await again.post('/messages', { type: 'stream', to: 'disk', topic: 'after', content: 'room again' });
  t.equal(sentAgain.status, 200, 'writes work again');
  const health = await fetch(`${server.url}/health`);
  t.equal(health.status, 200);
  server.process.kill('SIGTERM');
  t.equal(await server.exited, 0);
  server = null;
});

t.test('a failed log append: memory keeps nothing of it, later writes are refused, reads go on', async (t) => {
  const server = await startTestServer(t, { rateLimit: null });
  const { runtime } = server.server;
  await server.api.post('/users/me/subscriptions', { subscriptions: [{ name: 'faulty' }] });
  const kept = (await server.api.post('/messages', { type: 'stream', to: 'faulty', topic: 't', content: 'kept' })).body.id;
  // The store's append fails as lmdb-js's does when a commit cannot be written.
  const store = (runtime as unknown as { store: Store }).store;
  const append = store.append.bind(store);
  store.append = () => Promise.reject(new StorageError('No space left on device'));
  const sends = await Promise.all([1, 2, 3].map((i) => server.api.post('/messages', { type: 'stream', to: 'faulty', topic: 't', content: `lost ${i}` })));
  // The first to fail gets a 500 naming the failure; one that came after it is refused up front (503).
  const [failed, ...others] = [...sends].sort((a, b) => a.status - b.status);
  t.equal(failed!.status, 500, 'the failed write gets a 500');
  t.match(failed!.body, { result: 'error', code: 'INTERNAL_SERVER_ERROR', msg: /could not be saved \(storage failure: No space left on device\)/ });
  for (const send of others) {
    t.ok(send.status === 500 || send.status === 503, 'the others fail too');
    t.match(send.body, { result: 'error', code: 'INTERNAL_SERVER_ERROR', msg: /storage failure: No space left on device/ });
  }
  t.same(await fetchIds(server.api, [{ operator: 'channel', operand: 'faulty' }]), [kept], 'memory holds none of the failed changes');
  store.append = append;
  const refused = await server.api.post('/messages', { type: 'stream', to: 'faulty', topic: 't', content: 'refused' });
  t.equal(refused.status, 503, 'no write is taken until a restart, even when the disk would take it');
  t.equal((runtime as Runtime).readOnlyReason, 'storage failure: No space left on device');
  const reader = await server.api.get('/users/me');
  t.equal(reader.status, 200, 'reads go on');
});

t.test('the log: entries after a gap (a failed commit followed by one LMDB took) are dropped as a tail', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = new Store(dir, { waitForFlush: false });
  const record = (seq: number) => ({ v: FORMAT_VERSION, seq, at: 0, realmId: 1, changes: [] });
  for (const seq of [1, 2, 3, 5, 6]) await store.append(record(seq));
  t.same([...store.readLog(0)].map((entry) => entry.seq), [1, 2, 3], 'reading stops at the gap');
  t.match(store.tornTail, { seq: 5, error: /follow a gap after 3/ });
  await store.discardTornTail();
  t.same([...store.readLog(0)].map((entry) => entry.seq), [1, 2, 3]);
  t.equal(store.tornTail, null, 'the entries after the gap are gone');
  t.equal(store.lastSeq(), 3);
  await store.close();
});

t.test('the log: the entries a snapshot covers stay in it as its archive; what follows its position is read, a gap after it is a tail', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = new Store(dir, { waitForFlush: false });
  // Committed now: the snapshot keeps them (records older than the archive's retention are pruned).
  const record = (seq: number) => ({ v: FORMAT_VERSION, seq, at: Date.now(), realmId: 1, changes: [] });
  for (let seq = 1; seq <= 6; seq++) await store.append(record(seq));
  await store.writeSnapshots(4, [], []);
  t.same([...store.history().after(0)].map((entry) => entry.seq), [1, 2, 3, 4, 5, 6], 'the log holds what the snapshot covers');
  t.same([...store.readLog(0)].map((entry) => entry.seq), [5, 6], 'the entries after the snapshot are read');
  t.equal(store.tornTail, null, 'no tail');
  t.equal(store.logCount(), 2, 'what a boot replays');
  // A gap after the snapshot's position is still one.
  await store.truncateLogAfter(4);
  await store.appendEntries([{ seq: 6, at: 0, bytes: encode(record(6)) }]);
  t.same([...store.readLog(0)].map((entry) => entry.seq), []);
  t.match(store.tornTail, { seq: 6, error: /follow a gap after 4/ });
  await store.close();
});

t.test('the log: an entry left below the snapshot position with no archive kept is no gap, and what follows it is read', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = new Store(dir, { waitForFlush: false, archiveRetentionMs: 0 });
  const record = (seq: number) => ({ v: FORMAT_VERSION, seq, at: Date.now(), realmId: 1, changes: [] });
  for (let seq = 1; seq <= 6; seq++) await store.append(record(seq));
  const second = store.history().find(2)!;
  await store.writeSnapshots(4, [], []);
  t.same([...store.history().after(0)].map((entry) => entry.seq), [5, 6], 'a retention of 0 keeps nothing the snapshot covers');
  // As if the snapshot's trim had missed position 2 (found once after a crash under load, when every
  // snapshot trimmed the log: the next boot read the entries after it as a tail and dropped acknowledged writes).
  await store.appendEntries([second]);
  t.same([...store.readLog(0)].map((entry) => entry.seq), [5, 6], 'the entries after the snapshot are read');
  t.equal(store.tornTail, null, 'no tail');
  await store.close();
});

t.test('a boot that drops a tail numbers the next entries after what is left: no hole in the log or its archive', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  // No snapshot but the boot's: the messages stay in the log until the next boot.
  const env = { CHAT_SNAPSHOT_SECONDS: '3600' };
  const first = await startChild(dataDir, env);
  t.equal((await first.api.post('/users/me/subscriptions', { subscriptions: [{ name: 'tail' }] })).status, 200);
  const sent: number[] = [];
  for (const content of ['kept', 'lost in a failed write', 'after the failed write']) {
    const response = await first.api.post('/messages', { type: 'stream', to: 'tail', topic: 'tail', content });
    t.equal(response.status, 200, `"${content}" acknowledged`);
    sent.push(response.body.id);
  }
  first.process.kill('SIGKILL');
  await first.exited;

  // As a commit that failed while a later one was taken leaves it (see Store.readLog): the second message's
  // entry is missing, the third's follows a gap.
  const store = new Store(dataDir, { waitForFlush: true });
  const [missing, after] = [...store.readLog(0)].map((entry) => entry.seq).slice(-2) as [number, number];
  const afterEntry = store.history().find(after)!;
  await store.truncateLogAfter(missing - 1);
  await store.appendEntries([afterEntry]);
  t.equal(store.lastSeq(), after, 'the log ends with the entry after the gap');
  await store.close();

  const second = await startChild(dataDir, env);
  const later = await second.api.post('/messages', { type: 'stream', to: 'tail', topic: 'tail', content: 'after the boot' });
  t.equal(later.status, 200);
  const ids = await fetchIds(second.api, [{ operator: 'topic', operand: 'tail' }]);
  t.same(ids, [sent[0], later.body.id], 'the tail after the gap was dropped; the new message is there');
  second.process.kill('SIGKILL');
  await second.exited;

  const reopened = new Store(dataDir, { waitForFlush: true });
  const history = reopened.history();
  const positions = [...history.after(0)].map((entry) => entry.seq);
  t.same(positions, Array.from({ length: positions.length }, (_, i) => positions[0]! + i), 'the log and its archive have no hole');
  t.ok(positions.includes(missing), 'the entries after the boot took the dropped positions');
  t.same(history.checkArchive(reopened.snapshotSeq()).problems, []);
  await reopened.close();
  const verified = await verify(dataDir);
  t.equal(verified.code, 0, verified.output);

  const third = await startChild(dataDir, env);
  t.same(await fetchIds(third.api, [{ operator: 'topic', operand: 'tail' }]), [sent[0], later.body.id], 'the message sent after the boot survives the next SIGKILL');
  third.process.kill('SIGKILL');
  await third.exited;
});

t.test('a data directory whose name has a dot opens (lmdb-js took it for a file)', async (t) => {
  const parent = tempDir();
  t.teardown(() => rmSync(parent, { recursive: true, force: true }));
  const dir = join(parent, 'data.2026');
  mkdirSync(dir);
  const store = new Store(dir, { waitForFlush: false });
  await store.append({ v: FORMAT_VERSION, seq: 1, at: 0, realmId: 1, changes: [] });
  t.equal(store.lastSeq(), 1);
  await store.close();
  t.ok(statSync(join(dir, 'data.mdb')).isFile(), 'the data file is inside the directory');
});
