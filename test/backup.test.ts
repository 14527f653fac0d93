import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { open } from 'lmdb';
import t from 'tap';
import { openWriter, roundTrip } from '../bench/lib/backup-round-trip.ts';
import { childServers, type ChildServer } from './helpers/child.ts';
import { cli } from './helpers/cli.ts';
import { HostClient } from './helpers/host-client.ts';
import { gif, png } from './helpers/images.ts';
import { readZuliprc, tempDir } from './helpers/server.ts';

// Each case starts servers or commands as processes of their own (tsx, about a second of CPU each): with
// the CPU shared (the suite's other file, or a loaded machine) the file takes minutes, beyond the suite's 120 s.
t.setTimeout(600_000);

/**
 * A backup is the whole organization: `snapshot` of a running server copies the LMDB data and the files
 * (uploads, avatars, emoji images); `restore` brings them back with a zuliprc, and the restored server
 * serves every file, byte for byte.
 */

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

t.test('snapshot while serving copies the files; restore (and restore --until) brings them back, with a zuliprc that follows the external URL', async (t) => {
  const dataDir = tempDir();
  const work = tempDir();
  const children = childServers(t, [dataDir, work]);
  const start = async (dir: string, host: string) => {
    const server = await children.start(dir, { CHAT_EXTERNAL_URL: `http://${host}` });
    return { server, owner: new HostClient(server.url, host, server.owner) };
  };
  const { stop } = children;
  const health = async (server: ChildServer) => (await (await fetch(`${server.url}/health`)).json()) as {
    log_position: number; snapshot_log_position: number; last_backup: { time: string; bytes: number; log_position: number } | null;
  };

  const { server, owner } = await start(dataDir, 'chat.test');
  t.equal((await health(server)).last_backup, null, 'no backup yet');
  await owner.ok('POST', '/users/me/subscriptions', { subscriptions: [{ name: 'files' }] });
  const report: string = (await owner.upload('report.txt', 'the report, in full')).body.url;
  const avatarUrl: string = (await owner.postFile('/users/me/avatar', 'me.png', png([10, 200, 10, 255]))).body.avatar_url;
  t.equal((await owner.postFile('/realm/emoji/party', 'party.gif', gif(3))).status, 200);
  const party = Object.values((await owner.ok('GET', '/realm/emoji')).body.emoji as Record<string, { source_url: string; still_url: string }>)[0]!;
  await owner.ok('POST', '/messages', { type: 'stream', to: 'files', topic: 'docs', content: `see [the report](${report}) :party:` });
  const files = [report, new URL(avatarUrl, 'http://x').pathname, party.source_url, party.still_url];
  const served = async (client: HostClient, paths: string[]) => {
    const sums: Record<string, string> = {};
    for (const path of paths) {
      const answer = await client.send('GET', path);
      sums[path] = answer.status === 200 ? sha(answer.bytes) : `status ${answer.status}`;
    }
    return sums;
  };
  const original = await served(owner, files);
  t.notOk(Object.values(original).some((sum) => sum.startsWith('status')), 'every file is served by the source');

  const backup = join(work, 'backup');
  const snapshot = await cli('snapshot', '--data-dir', dataDir, '--out', backup);
  t.equal(snapshot.code, 0, snapshot.stderr);
  const onDisk = (dir: string) => ['uploads', 'avatars', 'emoji'].flatMap((folder) =>
    existsSync(join(dir, folder)) ? readdirSync(join(dir, folder), { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()) : []).length;
  const fileCount = onDisk(dataDir);
  t.ok(fileCount >= 4, 'the upload, the avatar, the emoji image and its still are on disk');
  t.match(snapshot.stdout, `${fileCount} files`, 'every one is in the backup');
  t.equal(onDisk(backup), fileCount);
  const atBackup = await health(server);
  t.match(atBackup.last_backup, { log_position: atBackup.log_position }, '/health reports the backup and its position');
  t.ok(atBackup.last_backup!.bytes > 0 && Date.now() - Date.parse(atBackup.last_backup!.time) < 60_000);
  t.match(atBackup, { snapshot_log_position: Number }, 'beside the periodic snapshot');
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  t.match(metrics, new RegExp(`chat_last_backup_log_position ${atBackup.log_position}\\b`));
  t.match(metrics, /chat_last_backup_age_seconds \d/);

  // After the backup: a file only --log has.
  const later: string = (await owner.upload('later.txt', 'written after the backup')).body.url;
  await owner.ok('POST', '/messages', { type: 'stream', to: 'files', topic: 'docs', content: `and [later](${later})` });
  const withLater = await served(owner, [later]);
  const atLater = (await health(server)).log_position;
  await stop(server);

  const restoredDir = join(work, 'restored');
  const restored = await cli('restore', backup, '--data-dir', restoredDir);
  t.equal(restored.code, 0, restored.stderr);
  t.match(restored.stdout, `${fileCount} files from the snapshot`);
  t.notMatch(restored.stdout, /note:/, 'no file is missing');
  t.ok(existsSync(join(restoredDir, 'zuliprc')), 'restore writes the zuliprc');
  const first = await start(restoredDir, 'other.test');
  t.equal(readZuliprc(join(restoredDir, 'zuliprc')).site, 'http://other.test', 'the zuliprc names the external URL the server runs at');
  const client = first.owner;
  t.equal((await client.get('/users/me')).status, 200, "the zuliprc's credentials work on the restored server");
  t.same(await served(client, files), original, 'every file of the backup is served, byte for byte');
  t.equal((await client.send('GET', later)).status, 404, 'a file uploaded after the backup is not in it');
  await stop(first.server);
  const again = await start(restoredDir, 'third.test');
  t.equal(readZuliprc(join(restoredDir, 'zuliprc')).site, 'http://third.test', 'a restart at another external URL rewrites it');
  await stop(again.server);

  const untilDir = join(work, 'until');
  const untilRestore = await cli('restore', backup, '--data-dir', untilDir, '--until', String(atLater), '--log', dataDir);
  t.equal(untilRestore.code, 0, untilRestore.stderr);
  t.notMatch(untilRestore.stdout, /note:/);
  const second = await start(untilDir, 'chat.test');
  t.same(await served(second.owner, [...files, later]), { ...original, ...withLater }, 'restore --until brings the files of the point restored, from --log');
  await stop(second.server);
});

t.test('a start that fails leaves no server.pid behind', async (t) => {
  const dataDir = tempDir();
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    taken.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const port = (taken.address() as AddressInfo).port;
  const result = await cli('serve', '--port', String(port), '--data-dir', dataDir);
  t.not(result.code, 0, 'the server does not start on a port in use');
  t.notOk(existsSync(join(dataDir, 'server.pid')), 'and leaves no claim on the directory');
});

t.test("a backup taken by an earlier version (a compacted copy, no files) with thousands of pending records restores and starts", async (t) => {
  const dataDir = tempDir();
  const work = tempDir();
  t.teardown(() => {
    for (const dir of [dataDir, work]) rmSync(dir, { recursive: true, force: true });
  });
  const writer = await openWriter(dataDir);
  await writer.write({ base: 100, pending: 5_000, files: 2 });
  // What `snapshot` wrote before: mdb_env_copy2 with MDB_CP_COMPACT, and nothing else (no seal, no files).
  const old = join(work, 'old');
  mkdirSync(old);
  const root = open({ path: dataDir, noSubdir: false, readOnly: true } as Parameters<typeof open>[0]);
  await root.backup(old, true);
  await root.close();
  await writer.close();

  const restoredDir = join(work, 'restored');
  const restored = await roundTrip(writer.history, old, writer.history.lastSeq, restoredDir).catch((error: Error) => error);
  t.notOk(restored instanceof Error, String(restored));
  if (restored instanceof Error) return;
  // The backup lacks the files: the note says so (no --log, no directory replaced to take them from).
  t.match(restored.differences, [/note: 2 files the records name are in neither the snapshot nor --log/]);
  t.equal(restored.differences.length, 3, 'and the two files are not served; everything else is');
  t.equal(restored.messages, 5_100);
});
