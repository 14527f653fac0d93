import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { encode } from '../snapshots/codec.ts';
import { openExportFile } from '../src/realm-export-file.ts';
import { killChild, startChild } from './helpers/child.ts';
import { cli } from './helpers/cli.ts';
import { HostClient } from './helpers/host-client.ts';
import { gif, png } from './helpers/images.ts';
import { tempDir } from './helpers/server.ts';

const EXTERNAL = 'chat.test';

t.test('export-realm carries the uploaded files and custom emoji; import-realm serves them again under the new organization', async (t) => {
  const source = tempDir();
  const target = tempDir();
  const work = tempDir();
  t.teardown(() => {
    for (const dir of [source, target, work]) rmSync(dir, { recursive: true, force: true });
  });
  const env = { CHAT_EXTERNAL_URL: `http://${EXTERNAL}` };
  let server = await startChild(source, env);
  const owner = new HostClient(server.url, EXTERNAL, server.owner);
  const alice = (await owner.createUser('alice@example.com', 'Alice')).client;
  await alice.ok('POST', '/users/me/subscriptions', { subscriptions: [{ name: 'files' }] });
  const report: string = (await alice.upload('report.txt', 'the report')).body.url;
  const drafted: string = (await alice.upload('draft.txt', 'only in a draft')).body.url;
  const lost: string = (await alice.upload('lost.txt', 'gone from the disk')).body.url;
  t.match(report, /^\/user_uploads\/1\//, 'uploaded in organization 1');
  const animated = gif(3);
  t.equal((await owner.postFile('/realm/emoji/party', 'party.gif', animated)).status, 200);
  const picture = png([200, 10, 10, 255]);
  const avatarUrl: string = (await alice.postFile('/users/me/avatar', 'me.png', picture)).body.avatar_url;
  t.match(avatarUrl, /\/user_avatars\/1\/[\w-]+\/avatar\.png/, 'an avatar of organization 1');
  const party = Object.values((await owner.ok('GET', '/realm/emoji')).body.emoji as Record<string, { name: string; source_url: string; still_url: string }>)[0]!;
  t.match(party, { name: 'party', source_url: /^\/user_avatars\/1\/emoji\/images\//, still_url: /\/still\// });
  await alice.ok('POST', '/messages', { type: 'stream', to: 'files', topic: 'fun', content: 'time to :party:' });
  await alice.ok('POST', '/messages', { type: 'stream', to: 'files', topic: 'docs', content: `see [the report](${report}) and [this](${lost})` });
  await alice.ok('POST', '/drafts', { drafts: [{ type: '', to: [], topic: '', content: `later: [draft](${drafted})` }] });
  server.process.kill('SIGTERM');
  t.equal(await server.exited, 0);
  // A file already missing in the source is reported, not fatal.
  rmSync(join(source, lost.slice(1).replace('user_uploads/', 'uploads/')));

  const file = join(work, 'files.realm');
  const exported = await cli('export-realm', '--data-dir', source, '--out', file);
  t.equal(exported.code, 0, exported.stderr);
  t.match(exported.stdout, /2 messages, 2 uploaded files, 1 avatars, 2 emoji images to /, 'the uploads, the avatar, and the emoji image and its still');
  t.match(exported.stdout, /1 files the records name were already missing in .*lost\.txt/);

  // The target has an organization already: the import gets id 2, and its files' URLs say so.
  t.equal((await cli('create-realm', '--data-dir', target, '--subdomain', '', '--name', 'Target', '--owner-email', 'boss@target.test', '--owner-password', 'boss-Long-passw0rd')).code, 0);
  const imported = await cli('import-realm', file, '--data-dir', target, '--subdomain', 'acme');
  t.equal(imported.code, 0, imported.stderr);
  t.match(imported.stdout, /\(id 2\): .* 5 files/);
  t.match(imported.stdout, /1 files the records name were not in the export/);

  server = await startChild(target, env);
  t.teardown(() => killChild(server));
  const acme = await new HostClient(server.url, `acme.${EXTERNAL}`, null).login('alice@example.com');
  const moved = (url: string) => url.replace('/user_uploads/1/', '/user_uploads/2/');
  const [message] = (await acme.ok('GET', '/messages', { anchor: 'newest', num_before: 10, num_after: 0, apply_markdown: false, narrow: [{ operator: 'topic', operand: 'docs' }] })).body.messages;
  t.equal(message.content, `see [the report](${moved(report)}) and [this](${moved(lost)})`, 'the links in the message name the new organization');
  const [rendered] = (await acme.ok('GET', '/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'topic', operand: 'docs' }] })).body.messages;
  t.ok(rendered.content.includes(`href="${moved(report)}"`) && !rendered.content.includes('/user_uploads/1/'), 'so do the rendered ones');
  const [draft] = (await acme.ok('GET', '/drafts')).body.drafts;
  t.equal(draft.content, `later: [draft](${moved(drafted)})`, 'and the drafts');
  const attachments = (await acme.ok('GET', '/attachments')).body.attachments;
  t.same(attachments.map((a: { path_id: string }) => `/user_uploads/${a.path_id}`).sort(), [moved(report), moved(drafted), moved(lost)].sort());

  const fetched = await acme.send('GET', moved(report));
  t.equal(fetched.status, 200, 'the uploaded file is served after the import');
  t.equal(fetched.text, 'the report');
  t.equal((await acme.send('GET', moved(drafted))).text, 'only in a draft');
  t.equal((await acme.send('GET', moved(lost))).status, 404, 'the file missing in the source is missing here too');
  t.equal((await acme.send('GET', report)).status, 404, 'the old URL is not the organization');

  const emoji = Object.values((await acme.ok('GET', '/realm/emoji')).body.emoji as Record<string, { name: string; source_url: string; still_url: string }>)[0]!;
  t.equal(emoji.source_url, party.source_url.replace('/user_avatars/1/', '/user_avatars/2/'), 'the emoji is served under the new organization');
  const image = await acme.send('GET', emoji.source_url);
  t.equal(image.status, 200);
  t.equal(image.headers['content-length'], String(animated.length), 'the same image');
  t.equal((await acme.send('GET', emoji.still_url)).status, 200, 'and its still');
  const [fun] = (await acme.ok('GET', '/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'topic', operand: 'fun' }] })).body.messages;
  t.ok(fun.content.includes(`src="${emoji.source_url}"`), 'a rendered message shows the emoji from its new place');

  const me = (await acme.ok('GET', '/users/me')).body;
  const movedAvatar = new URL(me.avatar_url, 'http://x').pathname;
  t.equal(movedAvatar, new URL(avatarUrl, 'http://x').pathname.replace('/user_avatars/1/', '/user_avatars/2/'), 'the avatar moved with its owner');
  const avatar = await acme.send('GET', movedAvatar);
  t.equal(avatar.status, 200, 'and is served');
  t.equal(avatar.headers['content-length'], String(picture.length));
  server.process.kill('SIGTERM');
  t.equal(await server.exited, 0);

  // An export of format version 1 (no files) still imports.
  const reader = openExportFile(file);
  const { uploads: _uploads, emojiImages: _emoji, missingFiles: _missing, ...header } = reader.header;
  reader.close();
  const old = join(work, 'old.realm');
  writeFileSync(old, encode({ ...header, exportVersion: 1 }));
  const fromOld = await cli('import-realm', old, '--data-dir', target, '--subdomain', 'old');
  t.equal(fromOld.code, 0, fromOld.stderr);
  t.match(fromOld.stdout, /\(id 3\): .* 0 files/);
  t.match(fromOld.stdout, /6 files the records name were not in the export/);

  // A damaged file is refused, and leaves nothing behind.
  const bytes = readFileSync(file);
  bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
  const damaged = join(work, 'damaged.realm');
  writeFileSync(damaged, bytes);
  const refused = await cli('import-realm', damaged, '--data-dir', target, '--subdomain', 'broken');
  t.equal(refused.code, 2);
  t.match(refused.stderr, /the emoji image still\/.* is damaged/, 'the last frame is the emoji still');
  t.notOk(['uploads', 'avatars', 'emoji'].some((folder) => existsSync(join(target, folder, '4'))), 'no file of the failed import is left');
  const verified = await cli('verify', '--data-dir', target);
  t.match(verified.stdout, /3 organizations/, 'nor its organization');
});
