import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { drain, ofType, sendToChannel, channel } from './helpers/messages.ts';
import { startTestServer, tempDir, type ApiClient, type Credentials } from './helpers/server.ts';

const basic = (who: Credentials) => `Basic ${Buffer.from(`${who.email}:${who.key}`).toString('base64')}`;

/** A PNG's signature and a little more: the server checks what kind of image it is by its first bytes. */
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('IHDR fake image data for the test')]);
const GIF = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(40, 7)]);

async function uploadAvatar(api: ApiClient, files: { name: string; data: Buffer | string; type?: string }[]) {
  const form = new FormData();
  files.forEach((file, i) => form.append(`file${i}`, new Blob([typeof file.data === 'string' ? file.data : new Uint8Array(file.data)], { type: file.type ?? 'image/png' }), file.name));
  const response = await fetch(`${api.baseUrl}/api/v1/users/me/avatar`, { method: 'POST', headers: { Authorization: basic(api.credentials!) }, body: form });
  return { status: response.status, body: await response.json() };
}

/** A GET that does not follow redirects, with credentials or none. */
async function raw(url: string, who: Credentials | null = null) {
  const response = await fetch(url, { redirect: 'manual', headers: who ? { Authorization: basic(who) } : {} });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

const person = async (api: ApiClient, userId: number, params: Record<string, unknown> = {}) => (await api.get(`/users/${userId}`, params)).body.user;

t.test('upload an avatar: stored, served without credentials, reflected everywhere, announced', async (t) => {
  const server = await startTestServer(t);
  const { api, url } = server;
  const ann = await api.createUser('ann@example.com', 'Ann Lee');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const general = await channel(api, 'general', [ann.userId, bob.userId]);
  const { queueId } = await api.as(bob).register({ event_types: ['realm_user'] });

  const uploaded = await uploadAvatar(api.as(ann), [{ name: 'me.png', data: PNG }]);
  t.equal(uploaded.status, 200, JSON.stringify(uploaded.body));
  t.match(uploaded.body.avatar_url, /^\/user_avatars\/\d+\/[\w-]+\/avatar\.png\?version=2$/, 'a new path, version 2');
  const avatarUrl: string = uploaded.body.avatar_url;
  const path = avatarUrl.replace(/\?.*$/, '');
  t.ok(existsSync(join(server.dataDir, 'avatars', path.slice('/user_avatars/'.length))), 'the image is in the avatar folder');

  const served = await raw(`${url}${avatarUrl}`);
  t.equal(served.status, 200, 'served to anyone who has the URL (an <img> sends no credentials)');
  t.equal(served.headers.get('content-type'), 'image/png');
  t.equal(served.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  t.equal(served.headers.get('x-content-type-options'), 'nosniff');
  t.same(served.bytes, PNG, 'the very bytes uploaded');

  const events = ofType(await drain(api.as(bob), queueId), 'realm_user');
  t.same(events.map(({ id: _id, ...event }) => event), [{
    type: 'realm_user', op: 'update',
    person: { user_id: ann.userId, avatar_url: avatarUrl, avatar_source: 'U', avatar_url_medium: avatarUrl, avatar_version: 2 },
  }], 'everyone is told, with every avatar field');

  t.match(await person(api, ann.userId), { avatar_url: avatarUrl, avatar_version: 2 }, 'GET /users/{id}: the upload, even with client_extavatar');
  t.match(await person(api, ann.userId, { client_extavatar: false }), { avatar_url: avatarUrl });
  const members = (await api.get('/users')).body.members as { user_id: number; avatar_url: string | null }[];
  t.equal(members.find((m) => m.user_id === ann.userId)?.avatar_url, avatarUrl, 'GET /users');
  t.equal(members.find((m) => m.user_id === bob.userId)?.avatar_url, null, 'others still have none to send with client_extavatar');

  const own = (await api.as(ann).register({ fetch_event_types: ['realm_user'] })).body;
  t.match(own, { avatar_source: 'U', avatar_url: avatarUrl, avatar_url_medium: avatarUrl });
  t.equal(own.realm_users.find((u: { user_id: number }) => u.user_id === ann.userId).avatar_url, avatarUrl, 'register realm_users');

  await sendToChannel(api.as(ann), general, 'hello', 'hi');
  const fetched = (await api.as(bob).get('/messages', { anchor: 'newest', num_before: 1, num_after: 0 })).body.messages;
  t.equal(fetched[0].avatar_url, avatarUrl, 'messages carry the sender\'s uploaded avatar');

  const redirect = await raw(`${url}/api/v1/avatar/${ann.userId}`, bob);
  t.equal(redirect.status, 302, 'GET /avatar/{user_id} redirects');
  t.equal(redirect.headers.get('location'), `${url}${avatarUrl}`, 'to the uploaded image, on the realm URL');
  t.equal(redirect.headers.get('cache-control'), 'private, no-cache');
  const byEmail = await raw(`${url}/avatar/ANN@example.com?medium`, bob);
  t.equal(byEmail.status, 302, 'by email, at the site root, medium size');
  t.equal(byEmail.headers.get('location'), `${url}${avatarUrl}`);
  t.equal((await raw(`${url}/avatar/${ann.userId}/medium`, bob)).headers.get('location'), `${url}${avatarUrl}`);

  const second = await uploadAvatar(api.as(ann), [{ name: 'other.gif', data: GIF, type: 'image/gif' }]);
  t.match(second.body.avatar_url, /\/avatar\.gif\?version=3$/, 'a second upload replaces the first');
  t.equal((await raw(`${url}${avatarUrl}`)).status, 404, 'the replaced image is gone');
  const gif = await raw(`${url}${second.body.avatar_url}`);
  t.equal(gif.headers.get('content-type'), 'image/gif');
  t.same(gif.bytes, GIF);
});

t.test('the default avatar: a generated picture the server serves itself', async (t) => {
  const server = await startTestServer(t);
  const { api, url } = server;
  const ann = await api.createUser('ann@example.com', 'ada lovelace');

  const expected = `/user_avatars/default/${ann.userId}/AL.svg?version=1`;
  t.equal((await person(api, ann.userId, { client_extavatar: false })).avatar_url, expected, 'initials and the user id in the path');
  const redirect = await raw(`${url}/api/v1/avatar/${ann.userId}`, server.owner);
  t.equal(redirect.status, 302);
  t.equal(redirect.headers.get('location'), `${url}${expected}`);

  const first = await raw(`${url}${expected}`);
  t.equal(first.status, 200);
  t.equal(first.headers.get('content-type'), 'image/svg+xml');
  t.equal(first.headers.get('cache-control'), 'public, max-age=31536000, immutable', 'its path names everything it shows');
  t.match(first.headers.get('content-security-policy'), /default-src 'none'/);
  const svg = first.bytes.toString('utf8');
  t.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  t.match(svg, />AL<\/text>/, 'the initials');
  t.same((await raw(`${url}${expected}`)).bytes, first.bytes, 'deterministic');
  const other = (await raw(`${url}/user_avatars/default/${ann.userId + 1}/AL.svg`)).bytes.toString('utf8');
  t.not(/fill="(#\w+)"/.exec(other)?.[1], /fill="(#\w+)"/.exec(svg)?.[1], 'the colour comes from the user id');

  const unicode = await api.createUser('zoe@example.com', 'Émile Zoë ßig');
  const path: string = (await person(api, unicode.userId, { client_extavatar: false })).avatar_url;
  t.equal(path, `/user_avatars/default/${unicode.userId}/${encodeURIComponent('Éß')}.svg?version=1`, 'letters of any script; ß has no one-letter capital');
  t.match((await raw(`${url}${path}`)).bytes.toString('utf8'), />Éß<\/text>/);

  for (const bad of ['ABC.svg', '%3Cb%3E.svg', 'AL.png', 'AL']) {
    t.equal((await raw(`${url}/user_avatars/default/1/${bad}`)).status, 404, `no picture for ${bad}`);
  }
  const missing = await fetch(`${url}/api/v1/avatar/9999`, { headers: { Authorization: basic(server.owner) } });
  t.same(await missing.json(), { result: 'error', msg: 'No such user', code: 'BAD_REQUEST' }, 'an unknown user');
  t.equal((await raw(`${url}/api/v1/avatar/${ann.userId}`)).status, 401, 'the redirect needs credentials');
  t.equal((await raw(`${url}/user_avatars/1/nope/avatar.png`)).status, 404, 'an unknown upload');
  t.equal((await raw(`${url}/user_avatars/1/..%2F..%2Fdata/avatar.png`)).status, 404, 'a path outside the store');
});

t.test('delete: back to the default, the image removed, announced', async (t) => {
  const server = await startTestServer(t);
  const { api, url } = server;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const uploaded = (await uploadAvatar(api.as(ann), [{ name: 'a.png', data: PNG }])).body.avatar_url as string;
  const { queueId } = await api.register({ event_types: ['realm_user'] });

  const deleted = await api.as(ann).delete('/users/me/avatar');
  t.equal(deleted.status, 200);
  const fallback = `/user_avatars/default/${ann.userId}/A.svg?version=3`;
  t.same(deleted.body, { result: 'success', msg: '', avatar_url: fallback });
  t.equal((await raw(`${url}${uploaded}`)).status, 404, 'the uploaded image is gone');
  t.same(ofType(await drain(api, queueId), 'realm_user').map((event) => event.person), [
    { user_id: ann.userId, avatar_url: fallback, avatar_source: 'G', avatar_url_medium: fallback, avatar_version: 3 },
  ]);
  t.match(await person(api, ann.userId), { avatar_url: null, avatar_version: 3 }, 'with client_extavatar the client computes it again');
  t.equal((await raw(`${url}/avatar/${ann.userId}`, ann)).headers.get('location'), `${url}${fallback}`);
});

t.test('avatar_changes_disabled: members may not change theirs, administrators may', async (t) => {
  const server = await startTestServer(t);
  const { api } = server;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const admin = await api.createUser('admin@example.com', 'Admin');
  await api.patch(`/users/${admin.userId}`, { role: 200 });
  const { queueId } = await api.as(ann).register({ event_types: ['realm'] });

  t.equal((await api.as(ann).patch('/realm', { avatar_changes_disabled: true })).body.code, 'UNAUTHORIZED_PRINCIPAL', 'a member cannot change the setting');
  t.same((await api.patch('/realm', { avatar_changes_disabled: true })).body, { result: 'success', msg: '', avatar_changes_disabled: true });
  t.same(ofType(await drain(api.as(ann), queueId), 'realm').map(({ id: _id, ...event }) => event), [
    { type: 'realm', op: 'update', property: 'avatar_changes_disabled', value: true },
  ]);
  t.equal((await api.as(ann).register({ fetch_event_types: ['realm'] })).body.realm_avatar_changes_disabled, true, 'registration tells it');

  const refused = { result: 'error', msg: 'Avatar changes are disabled in this organization.', code: 'BAD_REQUEST' };
  t.same((await uploadAvatar(api.as(ann), [{ name: 'a.png', data: PNG }])).body, refused, 'a member may not upload');
  t.same((await api.as(ann).delete('/users/me/avatar')).body, refused, 'nor go back to the default');
  t.equal((await uploadAvatar(api.as(admin), [{ name: 'a.png', data: PNG }])).status, 200, 'an administrator may');
  t.equal((await api.as(admin).delete('/users/me/avatar')).status, 200);

  await api.patch('/realm', { avatar_changes_disabled: false });
  t.equal((await uploadAvatar(api.as(ann), [{ name: 'a.png', data: PNG }])).status, 200, 'allowed again');
});

t.test('bad uploads are refused, and nothing is stored', async (t) => {
  const server = await startTestServer(t);
  const ann = server.api.as(await server.api.createUser('ann@example.com', 'Ann'));
  const error = (msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST' });
  t.same((await uploadAvatar(ann, [])).body, error('You must upload exactly one avatar.'), 'no file');
  t.same((await uploadAvatar(ann, [{ name: 'a.png', data: PNG }, { name: 'b.png', data: PNG }])).body, error('You must upload exactly one avatar.'), 'two files');
  t.same((await uploadAvatar(ann, [{ name: 'a.png', data: 'not an image at all', type: 'image/png' }])).body,
    error('Could not decode image; did you upload an image file?'), 'bytes that are no image, whatever their name and type');
  t.same((await uploadAvatar(ann, [{ name: 'x.svg', data: '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', type: 'image/svg+xml' }])).body,
    error('Could not decode image; did you upload an image file?'), 'SVG is not taken (it can carry script)');
  const big = Buffer.concat([PNG, Buffer.alloc(5 * 1024 * 1024)]);
  t.same((await uploadAvatar(ann, [{ name: 'big.png', data: big }])).body, error('Uploaded file is larger than the allowed limit of 5 MiB'), 'over 5 MiB');
  t.notOk(existsSync(join(server.dataDir, 'avatars')), 'no bytes were kept');
  t.match((await ann.get('/users/me')).body, { avatar_version: 1 }, 'nothing changed');
});

t.test('user_avatar_url_field_optional: default avatars go without avatar_url', async (t) => {
  const server = await startTestServer(t);
  const { api } = server;
  const ann = await api.createUser('ann@example.com', 'Ann');
  await uploadAvatar(api.as(ann), [{ name: 'a.png', data: PNG }]);
  const capable = { client_capabilities: { user_avatar_url_field_optional: true }, client_extavatar: false };

  const withCapability = (await api.register({ ...capable, event_types: ['realm_user'] }));
  const users = withCapability.body.realm_users as Record<string, unknown>[];
  const owner = users.find((u) => u.user_id === 1)!;
  t.notOk('avatar_url' in owner, 'the owner shows the default picture: no avatar_url, the client asks GET /avatar/{user_id}');
  t.equal(owner.avatar_version, 1, 'the version is still there');
  t.match(users.find((u) => u.user_id === ann.userId), { avatar_url: /^\/user_avatars\/\d+\//, avatar_version: 2 }, 'an uploaded avatar keeps its URL');
  t.match(withCapability.body, { avatar_url: /^\/user_avatars\/default\/1\// }, 'the own-account fields are always there');
  const without = (await api.register({ client_extavatar: false, event_types: ['realm_user'] }));
  t.match((without.body.realm_users as Record<string, unknown>[]).find((u) => u.user_id === 1), { avatar_url: '/user_avatars/default/1/O.svg?version=1' }, 'without the capability every URL is sent');

  const bob = await api.createUser('bob@example.com', 'Bob');
  const [added] = ofType(await drain(api, withCapability.queueId), 'realm_user');
  t.match(added, { op: 'add', person: { user_id: bob.userId, full_name: 'Bob' } });
  t.notOk('avatar_url' in (added!.person as object), 'a new user with the default picture: left out of the add event');
  const [full] = ofType(await drain(api, without.queueId), 'realm_user');
  t.match(full, { op: 'add', person: { user_id: bob.userId, avatar_url: `/user_avatars/default/${bob.userId}/B.svg?version=1` } }, 'sent in full to the others');
});

t.test('avatars survive a restart', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir });
  const ann = await first.api.createUser('ann@example.com', 'Ann');
  const avatarUrl = (await uploadAvatar(first.api.as(ann), [{ name: 'a.png', data: PNG }])).body.avatar_url as string;
  await first.api.patch('/realm', { avatar_changes_disabled: true });
  await first.stop();

  const second = await startTestServer(t, { dataDir });
  t.match(await person(second.api, ann.userId), { avatar_url: avatarUrl, avatar_version: 2 }, 'the user still has it');
  t.same((await raw(`${second.url}${avatarUrl}`)).bytes, PNG, 'and its bytes are served');
  t.equal((await second.api.register({ fetch_event_types: ['realm'] })).body.realm_avatar_changes_disabled, true, 'the setting too');
});
