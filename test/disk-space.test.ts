import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ConfigError, configFrom } from '../src/config.ts';
import { startChild } from './helpers/child.ts';
import { HostClient } from './helpers/host-client.ts';
import { fetchIds, sendToChannel } from './helpers/messages.ts';
import { startTestServer, tempDir } from './helpers/server.ts';

/**
 * The free-space guard: below CHAT_MIN_FREE_DISK on the data directory's disk the server takes no writes
 * (before LMDB could fill the disk: lmdb-js 3.5.6 can abort on a write the disk refuses), serves reads, and
 * takes writes again once there is room. No disk is filled: the minimum is moved above the real free space
 * and back below it.
 */

const MIB = 1024 * 1024;

const health = async (url: string) => {
  const response = await fetch(`${url}/health`);
  return { status: response.status, body: await response.json() };
};
const metric = async (url: string, name: string) => {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
};

t.test('CHAT_MIN_FREE_DISK and CHAT_LOG_ARCHIVE_RETENTION', async (t) => {
  t.equal(configFrom({}, {}).minFreeDiskBytes, 256 * MIB, 'a margin by default');
  t.equal(configFrom({}, { CHAT_MIN_FREE_DISK: '512M' }).minFreeDiskBytes, 512 * MIB);
  t.equal(configFrom({}, { CHAT_MIN_FREE_DISK: '1.5GiB' }).minFreeDiskBytes, 1.5 * 1024 * MIB);
  t.equal(configFrom({}, { CHAT_MIN_FREE_DISK: '4096' }).minFreeDiskBytes, 4096, 'plain bytes');
  t.equal(configFrom({}, { CHAT_MIN_FREE_DISK: '0' }).minFreeDiskBytes, 0, '0 turns the check off');
  t.throws(() => configFrom({}, { CHAT_MIN_FREE_DISK: 'lots' }), { constructor: ConfigError, message: /CHAT_MIN_FREE_DISK must be a size like 512M/ });
  t.equal(configFrom({}, {}).logArchiveMs, 7 * 24 * 3600 * 1000, 'a week by default');
  t.equal(configFrom({}, { CHAT_LOG_ARCHIVE_RETENTION: '36h' }).logArchiveMs, 36 * 3600 * 1000);
  t.equal(configFrom({}, { CHAT_LOG_ARCHIVE_RETENTION: '0' }).logArchiveMs, 0);
  t.throws(() => configFrom({}, { CHAT_LOG_ARCHIVE_RETENTION: 'a week' }), { constructor: ConfigError, message: /CHAT_LOG_ARCHIVE_RETENTION must be a duration like 7d/ });
});

t.test('low on disk space: writes refused with their own message, reads served, writes again when there is room', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  let server = await startTestServer(t, { dataDir, rateLimit: null });
  const { api, url } = server;
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'space' }] });
  const before = await sendToChannel(api, 'space', 'disk', 'before');
  const fine = await health(url);
  t.equal(fine.status, 200);
  t.match(fine.body, { status: 'ok', disk_free_bytes: Number, disk_min_free_bytes: 256 * MIB });
  t.notOk('low_disk_space' in fine.body);
  t.equal(await metric(url, 'chat_read_only'), 0);
  t.ok(await metric(url, 'chat_disk_free_bytes') > 0, '/metrics shows the free space');

  const { diskSpace, runtime } = server.server;
  const free = diskSpace.freeBytes()!;
  diskSpace.minFreeBytes = free * 2 + 1024 * 1024 * MIB;

  const refused = await api.post('/messages', { type: 'stream', to: 'space', topic: 'disk', content: 'refused' });
  t.equal(refused.status, 503, 'a write is refused up front');
  t.match(refused.body, { result: 'error', code: 'INTERNAL_SERVER_ERROR', msg: /^The server is low on disk space and takes no changes until there is room again \(\d+ MiB free, \d+ MiB required\)$/ });
  t.equal((await api.post('/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'draft' }] })).status, 503, 'every kind of write');
  t.equal((await api.patch('/settings', { web_font_size_px: 20 })).status, 503);
  const upload = await new HostClient(url, new URL(url).host, server.owner).upload('big.txt', 'file bytes');
  t.equal(upload.status, 503, 'an upload too');
  t.match(upload.body.msg, /low on disk space/);
  t.notOk(existsSync(join(dataDir, 'uploads')) && readdirSync(join(dataDir, 'uploads')).length > 0, 'its bytes were not written');

  t.equal((await api.get('/users/me')).status, 200, 'reads are served');
  t.same(await fetchIds(api, [{ operator: 'channel', operand: 'space' }]), [before], 'nothing refused is there');
  const { queueId } = await api.register({ event_types: ['message'] });
  t.ok(queueId, 'a client registers an event queue (small records, logged still: registering is how clients read)');
  const low = await health(url);
  t.equal(low.status, 503, '/health says the server is read-only');
  t.match(low.body, { status: 'read-only', low_disk_space: /low on disk space/, disk_free_bytes: Number, disk_min_free_bytes: diskSpace.minFreeBytes });
  t.notOk('storage_error' in low.body, 'not a storage failure');
  t.equal(await metric(url, 'chat_read_only'), 1, '/metrics too');
  t.equal(await metric(url, 'chat_disk_min_free_bytes'), diskSpace.minFreeBytes);
  t.equal(await runtime.snapshot(), 0, 'no snapshot is written either');

  diskSpace.minFreeBytes = MIB;
  const after = await sendToChannel(api, 'space', 'disk', 'after');
  t.ok(after > before, 'writes are taken again once there is room, without a restart');
  t.equal((await health(url)).status, 200);
  t.equal(await metric(url, 'chat_read_only'), 0);
  await server.stop();

  server = await startTestServer(t, { dataDir });
  t.same(await fetchIds(server.api, [{ operator: 'channel', operand: 'space' }]), [before, after], 'after a restart: what was taken, not what was refused');
});

t.test('CHAT_MIN_FREE_DISK above the free space: the server starts read-only on existing data', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  let server = await startChild(dataDir);
  const owner = server.owner;
  server.process.kill('SIGTERM');
  t.equal(await server.exited, 0);
  server = await startChild(dataDir, { CHAT_MIN_FREE_DISK: '1000000T' });
  t.teardown(async () => {
    server.process.kill('SIGTERM');
    await server.exited;
  });
  const low = await health(server.url);
  t.equal(low.status, 503);
  t.match(low.body, { status: 'read-only', low_disk_space: /low on disk space/ });
  t.equal((await server.api.as(owner).get('/users/me')).status, 200, 'reads are served');
  t.equal((await server.api.as(owner).post('/users/me/subscriptions', { subscriptions: [{ name: 'x' }] })).status, 503, 'writes are not');
  t.match(server.output(), /low disk space .* writes are refused until there is room/, 'the log says so');
});
