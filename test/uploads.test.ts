import { existsSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { channel, drain, ofType, sendDirect, sendToChannel } from './helpers/messages.ts';
import { startTestServer, type ApiClient, type Credentials, type TestServer } from './helpers/server.ts';

const basic = (who: Credentials) => `Basic ${Buffer.from(`${who.email}:${who.key}`).toString('base64')}`;

async function upload(api: ApiClient, name: string, data: Uint8Array<ArrayBuffer> | string, type = 'application/octet-stream') {
  const form = new FormData();
  form.append('filename', new Blob([data], { type }), name);
  const response = await fetch(`${api.baseUrl}/api/v1/user_uploads`, { method: 'POST', headers: { Authorization: basic(api.credentials!) }, body: form });
  return { status: response.status, body: await response.json() };
}

/** GET of a file URL with the viewer's credentials (or none). */
async function download(server: TestServer, url: string, who: Credentials | null) {
  const response = await fetch(`${server.url}${url}`, { headers: who ? { Authorization: basic(who) } : {} });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

const ids = (messages: { id: number }[]) => messages.map((message) => message.id);

t.test('files are served as downloads or sandboxed: HTML, SVG and PDF never run in the server\'s origin', async (t) => {
  const server = await startTestServer(t);
  for (const [name, type, disposition] of [
    ['report.pdf', 'application/pdf', 'attachment'],
    ['page.html', 'text/html', 'attachment'],
    ['drawing.svg', 'image/svg+xml', 'attachment'],
    ['cat.png', 'image/png', 'inline'],
  ] as const) {
    const uploaded = await upload(server.api, name, '<script>alert(1)</script>', type);
    const read = await download(server, uploaded.body.url, server.owner);
    t.equal(read.headers.get('content-type'), type, name);
    t.match(read.headers.get('content-disposition'), new RegExp(`^${disposition};`), `${name}: ${disposition}`);
    t.match(read.headers.get('content-security-policy'), /(^|; )sandbox($|;)/, `${name}: in a sandbox`);
    t.equal(read.headers.get('x-content-type-options'), 'nosniff');
  }
});

t.test('upload, serve to those who may read it, list, detach, delete', async (t) => {
  const server = await startTestServer(t);
  const owner = server.api;
  const ann = await owner.createUser('ann@example.com', 'Ann');
  const bob = await owner.createUser('bob@example.com', 'Bob');
  const { queueId } = await owner.register({ event_types: ['attachment'] });

  const uploaded = await upload(owner, 'notes ü.txt', 'hello file', 'text/plain');
  t.equal(uploaded.status, 200);
  t.match(uploaded.body.url, /^\/user_uploads\/\d+\/[\w-]+\/notes_u\.txt$/, 'a sanitized name under the realm');
  t.equal(uploaded.body.uri, uploaded.body.url);
  t.equal(uploaded.body.filename, 'notes ü.txt');
  const url: string = uploaded.body.url;
  const pathId = url.slice('/user_uploads/'.length);
  t.ok(existsSync(join(server.dataDir, 'uploads', pathId)), 'the file is in the data directory');

  const added = ofType(await drain(owner, queueId), 'attachment');
  t.match(added, [{ op: 'add', attachment: { path_id: pathId, size: 10, messages: [] }, upload_space_used: 10 }]);

  const mine = await download(server, url, server.owner);
  t.equal(mine.status, 200, 'the uploader reads it');
  t.equal(mine.bytes.toString(), 'hello file');
  t.equal(mine.headers.get('content-type'), 'text/plain');
  t.match(mine.headers.get('content-disposition'), /filename\*=UTF-8''notes%20%C3%BC\.txt/);
  t.match(mine.headers.get('content-disposition'), /^inline;/, 'plain text is shown');
  t.match(mine.headers.get('content-security-policy'), /(^|; )sandbox($|;)/, 'in a sandbox with no script');
  t.match(mine.headers.get('content-security-policy'), /default-src 'none'/);
  t.equal((await download(server, url, ann)).status, 404, 'another user without access does not');
  t.equal((await download(server, url, null)).status, 401, 'nor does a caller without credentials');

  // Linking it in a direct message to Ann shares it with Ann, not with Bob.
  const dm = await sendDirect(owner, [ann.userId], `see [notes](${url})`);
  const annRead = await download(server, url, ann);
  t.equal(annRead.status, 200, 'a recipient of a message linking it reads it');
  t.equal(annRead.bytes.toString(), 'hello file');
  t.equal((await download(server, url, bob)).status, 404, 'a user who cannot read that message still cannot');
  const updated = ofType(await drain(owner, queueId), 'attachment');
  t.match(updated, [{ op: 'update', attachment: { path_id: pathId, messages: [{ id: dm }] } }]);

  const listed = await owner.get('/attachments');
  t.equal(listed.status, 200);
  t.equal(listed.body.upload_space_used, 10);
  t.equal(listed.body.attachments.length, 1);
  const attachment = listed.body.attachments[0];
  const sent = (await owner.get(`/messages/${dm}`)).body.message;
  t.same(attachment.messages, [{ id: dm, date_sent: sent.timestamp * 1000 }], 'the attachment lists its message, time in ms');
  t.equal(attachment.name, 'notes ü.txt');
  t.ok(Math.abs(attachment.create_time - Date.now()) < 60_000, 'create_time in milliseconds');
  t.same((await owner.as(ann).get('/attachments')).body.attachments, [], "Ann's list holds only her own files");

  // has: narrows
  const general = await channel(owner, 'general', [1, ann.userId]);
  const plain = await sendToChannel(owner, general, 't', 'no links here');
  const linked = await sendToChannel(owner, general, 't', 'a link https://example.com/page');
  const picture = await upload(owner, 'cat.png', new Uint8Array([0x89, 0x50, 0x4e, 0x47]), 'image/png');
  const withImage = await sendToChannel(owner, general, 't', `[cat.png](${picture.body.url})`);
  const withFile = await sendToChannel(owner, general, 't', `[notes](${url})`);
  const narrowed = async (what: string) =>
    ids((await owner.get('/messages', { anchor: 'oldest', num_before: 0, num_after: 100, narrow: [['channel', 'general'], ['has', what]] })).body.messages);
  t.same(await narrowed('attachment'), [withImage, withFile], 'has:attachment: messages linking an upload');
  t.same(await narrowed('image'), [withImage], 'has:image: the uploaded image');
  t.same(await narrowed('link'), [linked, withImage, withFile], 'has:link: rendered links');
  const notAttachment = (await owner.get('/messages', { anchor: 'oldest', num_before: 0, num_after: 100, narrow: [{ operator: 'channel', operand: 'general' }, { operator: 'has', operand: 'attachment', negated: true }] })).body.messages;
  t.same(ids(notAttachment), [plain, linked], 'and negated');

  // An edit that removes the last references detaches the file.
  const edit1 = await owner.patch(`/messages/${withFile}`, { content: 'no file now' });
  t.same(edit1.body.detached_uploads, [], 'still linked from the direct message: not detached');
  const edit2 = await owner.patch(`/messages/${dm}`, { content: 'never mind' });
  t.equal(edit2.status, 200);
  t.match(edit2.body.detached_uploads, [{ id: attachment.id, path_id: pathId, messages: [] }]);
  t.equal(edit2.body.detached_uploads.length, 1);
  t.equal((await download(server, url, ann)).status, 404, 'unlinked: Ann no longer reads it');
  t.same(await narrowed('attachment'), [withImage], 'the edited message no longer has an attachment');

  // Delete: owner only; the file goes.
  t.equal((await owner.as(ann).delete(`/attachments/${attachment.id}`)).status, 400, 'another user cannot delete it');
  t.ok(existsSync(join(server.dataDir, 'uploads', pathId)));
  await drain(owner, queueId);
  const deleted = await owner.delete(`/attachments/${attachment.id}`);
  t.equal(deleted.status, 200);
  t.notOk(existsSync(join(server.dataDir, 'uploads', pathId)), 'the file is removed');
  t.equal((await download(server, url, server.owner)).status, 404, 'and no longer served');
  t.match(ofType(await drain(owner, queueId), 'attachment'), [{ op: 'remove', attachment: { id: attachment.id }, upload_space_used: 4 }]);
  t.same((await owner.get('/attachments')).body.attachments.map((a: { name: string }) => a.name), ['cat.png']);
});

t.test('upload errors: no file, too large', async (t) => {
  const server = await startTestServer(t);
  const empty = await fetch(`${server.url}/api/v1/user_uploads`, { method: 'POST', headers: { Authorization: basic(server.owner) }, body: new FormData() });
  t.equal(empty.status, 400);
  const tooBig = await upload(server.api, 'big.bin', new Uint8Array(100 * 1024 * 1024 + 1));
  t.equal(tooBig.status, 400, 'over max_file_upload_size_mib');
  t.match(tooBig.body.msg, /maximum upload size \(100 MiB\)/);
  const atLimit = await upload(server.api, 'ok.bin', new Uint8Array(11 * 1024 * 1024));
  t.equal(atLimit.status, 200, 'a file larger than the general body cap is fine');
  t.same((await server.api.get('/attachments')).body.attachments.map((a: { name: string }) => a.name), ['ok.bin'], 'only the accepted file is recorded');
});

t.test('files and their links survive a restart', async (t) => {
  const first = await startTestServer(t);
  const ann = await first.api.createUser('ann@example.com', 'Ann');
  const { body } = await upload(first.api, 'kept.txt', 'kept bytes');
  const dm = await sendDirect(first.api, [ann.userId], `[kept](${body.url})`);
  const before = (await first.api.get('/attachments')).body;
  await first.stop();
  const second = await startTestServer(t, { dataDir: first.dataDir });
  t.same((await second.api.get('/attachments')).body, before, 'the same attachments and messages');
  t.equal(before.attachments[0].messages[0].id, dm);
  const read = await download(second, body.url, ann);
  t.equal(read.status, 200, 'the recipient still reads it');
  t.equal(read.bytes.toString(), 'kept bytes');
});
