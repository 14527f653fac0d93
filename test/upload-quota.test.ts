import { readdirSync, statfsSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { configFrom } from '../src/config.ts';
import { startTestServer, type ApiClient, type Credentials, type TestServer } from './helpers/server.ts';

/**
 * Upload quotas, per user and per organization, checked against the size an upload declares before its
 * body is read, and uploads held to twice the free-space minimum counting their own size: no member can
 * fill the disk and turn every organization read-only.
 */

const KIB = 1024;
const MIB = 1024 * KIB;

const basic = (who: Credentials) => `Basic ${Buffer.from(`${who.email}:${who.key}`).toString('base64')}`;

async function upload(api: ApiClient, name: string, bytes: number) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)]), name);
  const response = await fetch(`${api.baseUrl}/api/v1/user_uploads`, { method: 'POST', headers: { Authorization: basic(api.credentials!) }, body: form });
  return { status: response.status, body: await response.json() };
}

/** Bytes of the organization's files in the data directory. */
function bytesOnDisk(server: TestServer): number {
  const dir = join(server.dataDir, 'uploads');
  let total = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size;
  }
  return total;
}

const BOUNDARY = 'quota-test-boundary';

/**
 * Starts a multipart upload declaring `declaredBytes` of body, sends only its first kilobyte, and waits for
 * the answer: a server that reads the body before deciding never answers (the test then fails on its
 * timeout); one that decides first answers and closes the connection.
 */
function uploadDeclaring(server: TestServer, who: Credentials, declaredBytes: number): Promise<{ status: number; body: { code?: string; msg?: string } }> {
  const { hostname, port, host } = new URL(server.url);
  const head = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer while the body was still coming:\n${received}`));
    }, 30_000);
    socket.on('data', (chunk) => (received += chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      const [headers = '', body = ''] = received.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(headers)?.[1]);
      try {
        resolve({ status, body: JSON.parse(body) });
      } catch {
        reject(new Error(`unexpected answer:\n${received}`));
      }
    });
    socket.write([
      'POST /api/v1/user_uploads HTTP/1.1', `Host: ${host}`, `Authorization: ${basic(who)}`,
      `Content-Type: multipart/form-data; boundary=${BOUNDARY}`, `Content-Length: ${declaredBytes}`, '', '',
    ].join('\r\n'));
    socket.write(Buffer.concat([head, Buffer.alloc(KIB)]));
  });
}

t.test('CHAT_USER_UPLOAD_QUOTA and CHAT_REALM_UPLOAD_QUOTA', async (t) => {
  t.equal(configFrom({}, {}).userUploadQuotaBytes, 5 * 1024 * MIB, "the original's 5 GiB per user by default");
  t.equal(configFrom({}, {}).realmUploadQuotaBytes, 50 * 1024 * MIB, "and its 50 GiB per organization");
  t.equal(configFrom({}, { CHAT_USER_UPLOAD_QUOTA: '200M' }).userUploadQuotaBytes, 200 * MIB);
  t.equal(configFrom({}, { CHAT_REALM_UPLOAD_QUOTA: '0' }).realmUploadQuotaBytes, null, '0 is no limit');
  const server = await startTestServer(t, { realmUploadQuotaBytes: 3 * MIB });
  const { body } = await server.api.post('/register', { fetch_event_types: ['realm'] });
  t.equal(body.realm_upload_quota_mib, 3, 'register reports the organization quota in MiB');
  t.equal(body.max_file_upload_size_mib, 100);
});

t.test('members upload until a quota refuses them: the totals stay within the quotas', async (t) => {
  const server = await startTestServer(t, { rateLimit: null, userUploadQuotaBytes: MIB, realmUploadQuotaBytes: 1.5 * MIB });
  const ann = server.api.as(await server.api.createUser('ann@example.com', 'Ann'));
  const bob = server.api.as(await server.api.createUser('bob@example.com', 'Bob'));
  const FILE = 100 * KIB;

  let accepted = 0;
  let refused: Awaited<ReturnType<typeof upload>> | null = null;
  while (!refused && accepted < 100) {
    const result = await upload(ann, `ann-${accepted}.bin`, FILE);
    if (result.status === 200) accepted++;
    else refused = result;
  }
  t.equal(accepted, 10, 'ten files of 100 KiB fit a 1 MiB quota');
  t.equal(refused?.status, 400, 'the eleventh is refused');
  t.match(refused?.body, { result: 'error', code: 'REALM_UPLOAD_QUOTA', msg: /^Upload would exceed your upload quota \(1 MiB\)/ });
  t.equal((await ann.get('/attachments')).body.upload_space_used, 10 * FILE, 'upload_space_used is what was accepted');
  t.equal(bytesOnDisk(server), 10 * FILE, 'no bytes of the refused file are left on disk');

  // Twenty at once from another member: the organization has room for five more.
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => upload(bob, `bob-${i}.bin`, FILE)));
  const ok = results.filter((result) => result.status === 200);
  t.equal(ok.length, 5, 'concurrent uploads stop at the organization quota');
  for (const result of results.filter((result) => result.status !== 200)) {
    t.match(result.body, { code: 'REALM_UPLOAD_QUOTA', msg: "Upload would exceed your organization's upload quota." });
  }
  t.equal(bytesOnDisk(server), 15 * FILE, 'the disk holds exactly the accepted files');
  t.ok(bytesOnDisk(server) <= 1.5 * MIB);

  // Deleting files gives the room back.
  const [first] = (await ann.get('/attachments')).body.attachments as { id: number }[];
  t.equal((await ann.delete(`/attachments/${first!.id}`)).status, 200);
  t.equal((await upload(ann, 'again.bin', FILE)).status, 200, 'a deleted file frees its quota');
  t.equal((await upload(ann, 'over.bin', FILE)).status, 400);

  // The totals are rebuilt on a restart.
  await server.stop();
  const restarted = await startTestServer(t, { dataDir: server.dataDir, rateLimit: null, userUploadQuotaBytes: MIB, realmUploadQuotaBytes: 1.5 * MIB });
  const annAgain = restarted.api.as(ann.credentials);
  t.equal((await annAgain.get('/attachments')).body.upload_space_used, 10 * FILE);
  t.equal((await upload(annAgain, 'after-restart.bin', FILE)).status, 400, 'still at the quota after a restart');
});

t.test('an upload declared over the quota is refused before its body is read', async (t) => {
  const server = await startTestServer(t, { userUploadQuotaBytes: 10 * MIB });
  const ann = await server.api.createUser('ann@example.com', 'Ann');
  const early = await uploadDeclaring(server, ann, 50 * MIB);
  t.equal(early.status, 400, 'answered while 49 MiB of the body were still to come');
  t.match(early.body, { code: 'REALM_UPLOAD_QUOTA', msg: /^Upload would exceed your upload quota \(10 MiB\)/ });

  const server2 = await startTestServer(t, { realmUploadQuotaBytes: 10 * MIB });
  const bob = await server2.api.createUser('bob@example.com', 'Bob');
  const realm = await uploadDeclaring(server2, bob, 20 * MIB);
  t.match(realm, { status: 400, body: { code: 'REALM_UPLOAD_QUOTA', msg: "Upload would exceed your organization's upload quota." } });
  t.equal((await server2.api.as(bob).get('/attachments')).body.upload_space_used, 0);
});

t.test('CHAT_USER_UPLOAD_FILES: files are counted too, empty ones included, before the body is read', async (t) => {
  t.equal(configFrom({}, {}).userUploadFiles, 10_000, '10,000 files per user by default');
  t.equal(configFrom({}, { CHAT_USER_UPLOAD_FILES: '25' }).userUploadFiles, 25);
  t.equal(configFrom({}, { CHAT_USER_UPLOAD_FILES: '0' }).userUploadFiles, null, '0 is no limit');
  const options = { rateLimit: null, userUploadFiles: 3 };
  const server = await startTestServer(t, options);
  const ann = server.api.as(await server.api.createUser('ann@example.com', 'Ann'));
  const bob = server.api.as(await server.api.createUser('bob@example.com', 'Bob'));
  for (let i = 0; i < 3; i++) t.equal((await upload(ann, `empty-${i}.txt`, 0)).status, 200, `empty file ${i} is taken`);
  const refused = await upload(ann, 'empty-3.txt', 0);
  t.equal(refused.status, 400, 'the fourth is refused, though it has no bytes');
  t.match(refused.body, { result: 'error', code: 'REALM_UPLOAD_QUOTA', msg: 'Upload would exceed your limit of 3 files; delete files you no longer need.' });
  const early = await uploadDeclaring(server, ann.credentials!, 50 * MIB);
  t.match(early, { status: 400, body: { code: 'REALM_UPLOAD_QUOTA', msg: /limit of 3 files/ } }, 'answered while the body was still coming');
  t.equal((await ann.get('/attachments')).body.attachments.length, 3, 'the user keeps three files');
  t.equal((await upload(bob, 'bob.txt', 0)).status, 200, 'the limit is per user');

  // Twenty at once: the realm decides one after another, so no more pass than the limit allows.
  const [first] = (await ann.get('/attachments')).body.attachments as { id: number }[];
  t.equal((await ann.delete(`/attachments/${first!.id}`)).status, 200);
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => upload(ann, `burst-${i}.txt`, 10)));
  t.equal(results.filter((result) => result.status === 200).length, 1, 'a deleted file frees one place, taken once');

  await server.stop();
  const restarted = await startTestServer(t, { ...options, dataDir: server.dataDir });
  t.equal((await upload(restarted.api.as(ann.credentials), 'after-restart.txt', 0)).status, 400, 'the count is rebuilt on a restart');
});

t.test('uploads stop at twice the free-space minimum, counting the declared size, while messages go on', async (t) => {
  const server = await startTestServer(t, { rateLimit: null });
  const { diskSpace } = server.server;
  // The minimum is set against the disk's real free space, leaving uploads 30 MiB: a file of 90 MiB does
  // not fit, one of 100 KiB does. (Other processes may write meanwhile; the margins are tens of MiB.)
  const leaveForUploads = (room: number) => {
    const stats = statfsSync(server.dataDir);
    diskSpace.minFreeBytes = Math.floor((stats.bavail * stats.bsize - room) / 2);
  };
  leaveForUploads(30 * MIB);
  const refused = await uploadDeclaring(server, server.owner, 90 * MIB);
  t.equal(refused.status, 503, 'refused before its body is read');
  t.match(refused.body, { code: 'INTERNAL_SERVER_ERROR', msg: /^The server is low on disk space and takes no uploads until there is room again/ });

  leaveForUploads(30 * MIB);
  t.equal((await upload(server.api, 'small.bin', 100 * KIB)).status, 200, 'a file that fits is taken');
  leaveForUploads(30 * MIB);
  const big = await upload(server.api, 'big.bin', 60 * MIB);
  t.equal(big.status, 503, 'a file whose bytes would pass the limit is not, although the disk has room for it');
  t.equal(bytesOnDisk(server), 100 * KIB, 'and none of its bytes are written');

  leaveForUploads(30 * MIB);
  await server.api.post('/users/me/subscriptions', { subscriptions: [{ name: 'space' }] });
  const sent = await server.api.post('/messages', { type: 'stream', to: 'space', topic: 'disk', content: 'still writing' });
  t.equal(sent.status, 200, 'messages are taken: uploads never take the room the log needs');
  t.equal((await fetch(`${server.url}/health`)).status, 200, 'the server is not read-only');
});

t.test('an upload its client cuts off midway does not hold up a graceful stop', async (t) => {
  const server = await startTestServer(t);
  const { hostname, port, host } = new URL(server.url);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.write([
    'POST /api/v1/user_uploads HTTP/1.1', `Host: ${host}`, `Authorization: ${basic(server.owner)}`,
    `Content-Type: multipart/form-data; boundary=${BOUNDARY}`, `Content-Length: ${10 * MIB}`, '', `--${BOUNDARY}\r\n`,
  ].join('\r\n'), () => resolve()));
  // A request on another connection, answered after the server took in the first one's head.
  t.equal((await server.api.get('/users/me')).status, 200);
  socket.destroy();
  let timer: NodeJS.Timeout | undefined;
  const stopped = await Promise.race([
    server.stop().then(() => 'stopped'),
    new Promise((resolve) => (timer = setTimeout(() => resolve('still waiting for the cut-off upload'), 30_000))),
  ]);
  clearTimeout(timer);
  t.equal(stopped, 'stopped');
});
