import { createHash, randomBytes } from 'node:crypto';
import t from 'tap';
import { childServers } from './helpers/child.ts';
import { digestOf, peakResident, resetPeakResident, resident } from './helpers/downloads.ts';
import { tempDir, type Credentials } from './helpers/server.ts';

/**
 * An uploaded file is sent from disk as each client takes it: many downloads of a large file at once do not
 * each hold the file in the server's memory, with credentials or through a temporary link alike.
 */

/** Large, as a video or an archive someone shares is. */
const FILE_BYTES = 24 * 1024 * 1024;
/** Downloads at once: reading the file whole for each would hold this many copies of it. */
const DOWNLOADS = 8;

const basic = (who: Credentials) => `Basic ${Buffer.from(`${who.email}:${who.key}`).toString('base64')}`;


t.test("concurrent downloads of a large upload come whole, without the server's memory growing by a copy each", async (t) => {
  const dir = tempDir();
  const servers = childServers(t, [dir]);
  const server = await servers.start(dir);
  const content = randomBytes(FILE_BYTES);
  const expected = { sha256: createHash('sha256').update(content).digest('hex'), bytes: FILE_BYTES };
  const form = new FormData();
  form.append('filename', new Blob([content], { type: 'video/mp4' }), 'talk.mp4');
  const uploaded = await fetch(`${server.url}/api/v1/user_uploads`, { method: 'POST', headers: { Authorization: basic(server.owner) }, body: form });
  t.equal(uploaded.status, 200);
  const { url } = (await uploaded.json()) as { url: string };

  // Half the downloads with credentials, half through the link that needs none (as a mobile client opens one).
  const link = await fetch(`${server.url}/api/v1${url}`, { headers: { Authorization: basic(server.owner) } });
  const temporary = ((await link.json()) as { url: string }).url;
  const pid = server.process.pid!;
  resetPeakResident(pid);
  const before = resident(pid);
  const responses = await Promise.all(Array.from({ length: DOWNLOADS }, (_, index) =>
    index % 2 ? fetch(`${server.url}${temporary}`) : fetch(`${server.url}${url}`, { headers: { Authorization: basic(server.owner) } })));
  for (const response of responses) {
    t.equal(response.status, 200);
    t.equal(response.headers.get('content-length'), String(FILE_BYTES), 'its length is told up front');
    t.equal(response.headers.get('content-type'), 'video/mp4');
    t.equal(response.headers.get('content-disposition'), "inline; filename*=UTF-8''talk.mp4");
    t.equal(response.headers.get('cache-control'), 'private, max-age=86400');
  }
  const digests = await Promise.all(responses.map(digestOf));
  t.same(digests, Array.from({ length: DOWNLOADS }, () => expected), 'every download is the file, byte for byte');
  const growth = peakResident(pid) - before;
  // Reading the file whole for each download grew it by DOWNLOADS copies of it and more.
  t.ok(growth < (FILE_BYTES * DOWNLOADS) / 4, `the server's peak memory grew by ${(growth / 1048576).toFixed(1)} MiB for ${DOWNLOADS} downloads of a ${FILE_BYTES / 1048576} MiB file`);

  const stranger = await fetch(`${server.url}${url}`);
  t.not(stranger.status, 200, 'no file without credentials');
  await servers.stop(server);
});
