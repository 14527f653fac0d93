import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import t from 'tap';
import { forwardHttp } from '../src/cluster/forward.ts';
import { exportFile } from '../src/realm-export-jobs.ts';
import { childServers } from './helpers/child.ts';
import { digestOf, peakResident, resetPeakResident, resident } from './helpers/downloads.ts';
import { startTestServer, tempDir, type ApiClient, type Credentials } from './helpers/server.ts';

/**
 * A data export is sent from disk as the client takes it, never read whole into the server's memory, both by
 * the node that holds it and by a cluster node that passes on another node's answer.
 */

/** Large enough that holding it (or uWS buffering it) shows plainly in the server's peak memory. */
const EXPORT_BYTES = 64 * 1024 * 1024;

const basic = (who: Credentials) => `Basic ${Buffer.from(`${who.email}:${who.key}`).toString('base64')}`;

/** Asks for an export and waits until it is written; answers its path id. */
async function exported(api: ApiClient): Promise<string> {
  const requested = await api.post('/export/realm');
  if (requested.status !== 200) throw new Error(JSON.stringify(requested.body));
  for (;;) {
    const { body } = await api.get('/export/realm');
    const entry = body.exports.find((candidate: { id: number }) => candidate.id === requested.body.id);
    if (entry && !entry.pending) return new URL(entry.export_url, 'http://x').pathname.replace(/^\/user_exports\//, '');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}


t.test("a large export downloads whole and byte for byte, without the server's memory growing by its size", async (t) => {
  const dir = tempDir();
  const servers = childServers(t, [dir]);
  const server = await servers.start(dir);
  const pathId = await exported(server.api);
  // The export's file, grown to tens of MB with bytes the server never held (as a large organization's would be).
  const content = randomBytes(EXPORT_BYTES);
  writeFileSync(exportFile(dir, pathId), content);
  const expected = createHash('sha256').update(content).digest('hex');

  const pid = server.process.pid!;
  resetPeakResident(pid);
  const before = resident(pid);
  const response = await fetch(`${server.url}/user_exports/${pathId}`, { headers: { Authorization: basic(server.owner) } });
  t.equal(response.status, 200);
  t.equal(response.headers.get('content-length'), String(EXPORT_BYTES), 'its length is told up front');
  t.same(await digestOf(response), { sha256: expected, bytes: EXPORT_BYTES }, 'the file, byte for byte');
  const growth = peakResident(pid) - before;
  // Reading the file whole grew it by the file and more (uWS then buffers what the client has not taken).
  t.ok(growth < EXPORT_BYTES / 2, `the server's peak memory grew by ${(growth / 1048576).toFixed(1)} MiB for a ${EXPORT_BYTES / 1048576} MiB file`);

  const again = await fetch(`${server.url}/user_exports/${pathId}`, { headers: { Authorization: basic(server.owner) } });
  t.same(await digestOf(again), { sha256: expected, bytes: EXPORT_BYTES }, 'and again, on the same connection');

  // A client that goes away midway: the server closes the file and goes on serving.
  const file = exportFile(dir, pathId);
  const opened = () => readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`) === file;
    } catch {
      return false;
    }
  }).length;
  const leaving = new AbortController();
  const partial = await fetch(`${server.url}/user_exports/${pathId}`, { headers: { Authorization: basic(server.owner) }, signal: leaving.signal });
  const reader = partial.body!.getReader();
  await reader.read();
  t.equal(opened(), 1, 'the file is open while the download goes on');
  leaving.abort();
  await reader.read().catch(() => {});
  while (opened() > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  t.pass('the file is closed once the client went away');
  t.equal((await server.api.get('/users/me')).status, 200, 'the server goes on');
  await servers.stop(server);
});

t.test("a node passing on another node's large answer streams it rather than gathering it", async (t) => {
  const { api, dataDir, url, owner } = await startTestServer(t);
  const pathId = await exported(api);
  const content = randomBytes(8 * 1024 * 1024);
  writeFileSync(exportFile(dataDir, pathId), content);
  const host = new URL(url).host;
  const answer = await forwardHttp(url, { method: 'GET', path: `/user_exports/${pathId}`, query: '', host, authorization: basic(owner), contentType: '', body: Buffer.alloc(0) });
  t.equal(answer.status, 200);
  t.ok(answer.bytes === undefined, 'not gathered into one buffer');
  t.equal(answer.stream?.size, content.length, 'passed on as a stream of the told length');
  const chunks: Buffer[] = [];
  for (let piece = await answer.stream!.pieces.next(); !piece.done; piece = await answer.stream!.pieces.next()) chunks.push(Buffer.from(piece.value));
  t.ok(Buffer.concat(chunks).equals(content), 'the file, byte for byte');

  const small = await forwardHttp(url, { method: 'GET', path: '/api/v1/users/me', query: '', host, authorization: basic(owner), contentType: '', body: Buffer.alloc(0) });
  t.equal(JSON.parse(small.bytes!.toString()).email, owner.email, 'a small answer is gathered as before');
});

