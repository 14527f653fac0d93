import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { MAX_EMOJI_PER_MESSAGE } from '../actors/realm/messages/decide-misc.ts';
import { Role } from '../actors/realm/state.ts';
import { inspectImage } from '../src/images.ts';
import { gif, apng, png } from './helpers/images.ts';
import { channel, drain, sendToChannel } from './helpers/messages.ts';
import { startChild } from './helpers/child.ts';
import { startTestServer, tempDir, type ApiClient, type TestServer } from './helpers/server.ts';

type Emoji = { id: string; name: string; source_url: string; still_url: string | null; deactivated: boolean; author_id: number | null };

/** POST /realm/emoji/{name} with these files as a multipart body (one, as clients send it, unless told). */
async function upload(api: ApiClient, name: string, files: Buffer[] = [png()]) {
  const form = new FormData();
  files.forEach((data, i) => form.append(`f${i + 1}`, new Blob([new Uint8Array(data)]), `emoji${i}.bin`));
  const auth = `Basic ${Buffer.from(`${api.credentials!.email}:${api.credentials!.key}`).toString('base64')}`;
  const response = await fetch(`${api.baseUrl}/api/v1/realm/emoji/${encodeURIComponent(name)}`, { method: 'POST', headers: { Authorization: auth }, body: form });
  return { status: response.status, body: await response.json() };
}

async function uploaded(api: ApiClient, name: string, files?: Buffer[]): Promise<void> {
  const result = await upload(api, name, files);
  if (result.status !== 200) throw new Error(`upload failed: ${JSON.stringify(result.body)}`);
}

const emojiOf = async (api: ApiClient) => (await api.get('/realm/emoji')).body.emoji as Record<string, Emoji>;
const byName = async (api: ApiClient, name: string) => Object.values(await emojiOf(api)).find((emoji) => emoji.name === name && !emoji.deactivated);

/** An image URL fetched as a browser does, without credentials. */
async function image(server: TestServer, url: string) {
  const response = await fetch(`${server.url}${url}`);
  return { status: response.status, type: response.headers.get('content-type'), bytes: Buffer.from(await response.arrayBuffer()) };
}

/** The image files in the data directory (refused uploads must leave none behind). */
function storedFiles(server: TestServer): string[] {
  try {
    return readdirSync(join(server.dataDir, 'emoji'), { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => entry.name);
  } catch {
    return [];
  }
}

/** A server with an owner (the api), an administrator, a moderator, two members and a guest. */
async function organization(t: { teardown(fn: () => unknown): void }, dataDir?: string) {
  const server = await startTestServer(t, dataDir ? { dataDir } : {});
  const { api } = server;
  const make = async (email: string, name: string, role: number | null) => {
    const user = await api.createUser(email, name);
    if (role !== null) await api.patch(`/users/${user.userId}`, { role });
    return user;
  };
  const ids = {
    admin: await make('admin@example.com', 'Admin', Role.administrator),
    moderator: await make('moderator@example.com', 'Moderator', Role.moderator),
    ann: await make('ann@example.com', 'Ann', null),
    bob: await make('bob@example.com', 'Bob', null),
    guest: await make('guest@example.com', 'Guest', Role.guest),
  };
  return {
    server, api, ids,
    admin: api.as(ids.admin), moderator: api.as(ids.moderator), ann: api.as(ids.ann), bob: api.as(ids.bob), guest: api.as(ids.guest),
  };
}

t.test('a member adds an emoji; everyone lists it; the image is served at its source_url, animated ones with a still', async (t) => {
  const { server, api, ann, guest, ids } = await organization(t);
  t.same(await emojiOf(guest), {}, 'none at first');
  await uploaded(ann, 'green_tick');
  const listed = await emojiOf(guest);
  const [id] = Object.keys(listed);
  t.same(listed[id!], { id: id!, name: 'green_tick', source_url: listed[id!]!.source_url, still_url: null, deactivated: false, author_id: ids.ann.userId });
  t.match(listed[id!]!.source_url, new RegExp(`^/user_avatars/\\d+/emoji/images/[\\w-]+\\.png$`), 'under the realm, with an unguessable name');

  const served = await image(server, listed[id!]!.source_url);
  t.equal(served.status, 200, 'served without credentials, as browsers load it');
  t.equal(served.type, 'image/png');
  t.same(served.bytes, png());

  await uploaded(ann, 'dance', [gif(3)]);
  const dance = (await byName(api, 'dance'))!;
  t.match(dance.source_url, /\.gif$/);
  t.match(dance.still_url, /^\/user_avatars\/\d+\/emoji\/images\/still\/[\w-]+\.gif$/, 'an animated image has a still');
  const still = await image(server, dance.still_url!);
  t.equal(still.status, 200);
  t.same(inspectImage(still.bytes), { extension: 'gif', contentType: 'image/gif', animated: false, still: null }, 'the still is one frame');
  t.same((await image(server, dance.source_url)).bytes, gif(3), 'the animation as uploaded');

  await uploaded(ann, 'spin', [apng()]);
  const spin = (await byName(api, 'spin'))!;
  t.ok(spin.still_url, 'an animated PNG has a still too');
  t.equal(inspectImage((await image(server, spin.still_url!)).bytes)?.animated, false);
  t.equal((await byName(api, 'green_tick'))!.still_url, null, 'a still image has none');

  t.equal((await image(server, listed[id!]!.source_url.replace(/[\w-]+\.png$/, 'nothere.png'))).status, 404, 'a name no emoji uses');
  t.equal((await image(server, listed[id!]!.source_url.replace(/images\/\d+|\/\d+\//, '/999/'))).status, 404, 'another realm id');

  const registered = (await guest.register({ fetch_event_types: ['realm_emoji'] })).body;
  t.same(registered.realm_emoji, await emojiOf(api), 'registration holds the same dict');
});

t.test('who may add: can_add_custom_emoji_group, never guests; built-in names are the administrators\'', async (t) => {
  const { server, api, admin, moderator, ann, bob, guest, ids } = await organization(t);
  const groups = Object.fromEntries(((await api.get('/user_groups')).body.user_groups as { id: number; name: string }[]).map((group) => [group.name, group.id]));
  t.match(await upload(guest, 'guest_emoji'), { status: 400, body: { code: 'BAD_REQUEST', msg: 'Not allowed for guest users' } });
  const setting = async (value: unknown) => t.equal((await api.patch('/realm', { can_add_custom_emoji_group: { new: value } })).status, 200);

  t.equal((await api.register({ fetch_event_types: ['realm'] })).body.realm_can_add_custom_emoji_group, groups['role:members'], 'members by default');
  await setting(groups['role:administrators']);
  t.match(await upload(moderator, 'by_moderator'), { status: 400, body: { msg: 'Insufficient permission' } });
  t.match(await upload(ann, 'by_ann'), { body: { msg: 'Insufficient permission' } });
  t.equal((await upload(admin, 'by_admin')).status, 200);

  await setting(groups['role:moderators']);
  t.match(await upload(ann, 'by_ann'), { body: { msg: 'Insufficient permission' } });
  t.equal((await upload(moderator, 'by_moderator')).status, 200);

  // A group of users, and an anonymous group of a user and a group.
  const created = await api.post('/user_groups/create', { name: 'emoji makers', description: '', members: [ids.ann.userId] });
  t.equal(created.status, 200);
  await setting(created.body.group_id);
  t.equal((await upload(ann, 'by_ann')).status, 200, 'a member of the group');
  t.match(await upload(bob, 'by_bob'), { body: { msg: 'Insufficient permission' } });
  await setting({ direct_members: [ids.bob.userId], direct_subgroups: [groups['role:administrators']] });
  t.equal((await upload(bob, 'by_bob')).status, 200, 'a direct member of the anonymous group');
  t.match(await upload(ann, 'by_ann_2'), { body: { msg: 'Insufficient permission' } });
  t.match(await upload(guest, 'guest_emoji'), { body: { msg: 'Not allowed for guest users' } }, 'guests never');
  await setting(groups['role:members']);

  t.match(await upload(ann, 'smile'), { body: { msg: 'Only administrators can override default emoji.' } });
  t.equal((await upload(admin, 'smile')).status, 200, 'an administrator replaces the built-in emoji');
  t.same(Object.values(await emojiOf(api)).map((emoji) => emoji.name).sort(), ['by_admin', 'by_ann', 'by_bob', 'by_moderator', 'smile']);
  t.equal(storedFiles(server).length, 5, 'refused uploads left no file behind');
});

t.test('bad names and bad files are refused, and leave nothing behind', async (t) => {
  const { server, api } = await organization(t);
  const onlyLetters = 'Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.';
  const cases: [string, Buffer[], string][] = [
    ['my_EMoji', [png()], onlyLetters],
    ['my*emoji', [png()], onlyLetters],
    ['émoji', [png()], onlyLetters],
    ['my_emoji_', [png()], 'Emoji names must end with either a letter or digit.'],
    ['my-emoji-', [png()], 'Emoji names must end with either a letter or digit.'],
    [' ', [png()], 'Emoji name is missing'],
    ['no_file', [], 'You must upload exactly one file.'],
    ['two_files', [png(), png()], 'You must upload exactly one file.'],
    ['text', [Buffer.from('not an image at all')], 'Invalid image format'],
    ['svg', [Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')], 'Invalid image format'],
    ['cut_gif', [gif().subarray(0, 30)], 'Invalid image format'],
    ['huge', [Buffer.concat([png(), Buffer.alloc(5 * 1024 * 1024)])], 'Uploaded file is larger than the allowed limit of 5 MiB'],
  ];
  for (const [name, files, message] of cases) t.match(await upload(api, name, files), { status: 400, body: { code: 'BAD_REQUEST', msg: message } }, name);
  t.same(await emojiOf(api), {});
  t.same(storedFiles(server), [], 'no image stored');

  await uploaded(api, 'party time');
  t.ok(await byName(api, 'party_time'), 'spaces become underscores');
  t.match(await upload(api, 'party_time'), { body: { msg: 'A custom emoji with this name already exists.' } });
  t.match(await upload(api, ' party time '), { body: { msg: 'A custom emoji with this name already exists.' } });
  t.equal((await upload(api, 'x-1_y')).status, 200, 'dashes, digits and underscores inside');
  t.equal(storedFiles(server).length, 2);
});

t.test('deactivation: the author or an administrator; every change goes to the whole realm', async (t) => {
  const { api, admin, ann, bob, guest, ids } = await organization(t);
  const queues = {
    ann: (await ann.register({ event_types: ['realm_emoji'] })).queueId,
    bob: (await bob.register({ event_types: ['realm_emoji'] })).queueId,
    guest: (await guest.register({ event_types: ['realm_emoji'] })).queueId,
    other: (await admin.register({ event_types: ['message'] })).queueId,
  };
  await uploaded(ann, 'anns');
  await uploaded(bob, 'bobs');
  const anns = (await byName(api, 'anns'))!;
  for (const who of ['ann', 'bob', 'guest'] as const) {
    const events = await drain(api.as(ids[who]), queues[who]);
    t.equal(events.length, 2, `${who}: one event per change`);
    t.same(events[1], { type: 'realm_emoji', op: 'update', realm_emoji: await emojiOf(api), id: events[1]!.id }, `${who}: the whole dict`);
  }
  t.same(await drain(admin, queues.other), [], 'a queue that did not ask for realm_emoji');

  t.match(await bob.delete('/realm/emoji/anns'), { status: 400, body: { code: 'BAD_REQUEST', msg: 'Must be an organization administrator or emoji author' } });
  t.match(await guest.delete('/realm/emoji/anns'), { body: { msg: 'Must be an organization administrator or emoji author' } });
  t.equal((await ann.delete('/realm/emoji/anns')).status, 200, 'the author');
  t.equal((await admin.delete('/realm/emoji/bobs')).status, 200, 'an administrator');
  t.match(await admin.delete('/realm/emoji/anns'), { status: 404, body: { code: 'BAD_REQUEST', msg: "Emoji 'anns' does not exist" } }, 'already deactivated');
  t.match(await admin.delete('/realm/emoji/nothing'), { status: 404, body: { msg: "Emoji 'nothing' does not exist" } });

  const listed = await emojiOf(guest);
  t.same(listed[anns.id], { ...anns, deactivated: true }, 'still listed, deactivated');
  const events = await drain(guest, queues.guest);
  t.same(events.map((event) => (event.realm_emoji as Record<string, Emoji>)[anns.id]?.deactivated), [true, true]);

  await uploaded(bob, 'anns');
  const again = (await byName(api, 'anns'))!;
  t.not(again.id, anns.id, 'the name is free again: a new emoji');
  t.equal(Object.keys(await emojiOf(api)).length, 3);
});

t.test('custom emoji in messages and reactions', async (t) => {
  const { server, api, ann, bob, ids } = await organization(t);
  await channel(api, 'lobby', [ids.ann.userId, ids.bob.userId]);
  await uploaded(ann, 'party_parrot');
  const parrot = (await byName(api, 'party_parrot'))!;
  const message = await sendToChannel(ann, 'lobby', 'fun', 'Hello :party_parrot: and :tada:');
  const fetched = (await bob.get(`/messages/${message}`)).body.message;
  t.equal(fetched.content, `<p>Hello <img alt=":party_parrot:" class="emoji" src="${parrot.source_url}" title="party parrot"> and `
    + '<span aria-label="tada" class="emoji emoji-1f389" role="img" title="tada">:tada:</span></p>');
  t.equal((await image(server, parrot.source_url)).status, 200, 'the img src is served');

  const react = (who: ApiClient, params: Record<string, unknown>) => who.post(`/messages/${message}/reactions`, params);
  t.equal((await react(bob, { emoji_name: 'party_parrot' })).status, 200, 'by name alone');
  t.equal((await react(ann, { emoji_name: 'party_parrot', emoji_code: parrot.id, reaction_type: 'realm_emoji' })).status, 200, 'by code');
  t.match(await react(ann, { emoji_name: 'party_parrot', emoji_code: parrot.id, reaction_type: 'realm_emoji' }), { body: { code: 'REACTION_ALREADY_EXISTS' } });
  t.match(await react(ann, { emoji_name: 'other_name', emoji_code: parrot.id, reaction_type: 'realm_emoji' }), { body: { msg: 'Invalid custom emoji name.' } });
  t.match(await react(ann, { emoji_name: 'party_parrot', emoji_code: '999', reaction_type: 'realm_emoji' }), { body: { msg: 'Invalid custom emoji.' } });
  t.match(await react(ann, { emoji_name: 'party_parrot', emoji_code: 'x', reaction_type: 'realm_emoji' }), { body: { msg: 'Invalid custom emoji.' } });
  const reactions = (await bob.get(`/messages/${message}`)).body.message.reactions;
  t.same(reactions, [
    { emoji_name: 'party_parrot', emoji_code: parrot.id, reaction_type: 'realm_emoji', user_id: ids.bob.userId },
    { emoji_name: 'party_parrot', emoji_code: parrot.id, reaction_type: 'realm_emoji', user_id: ids.ann.userId },
  ]);
  t.equal((await ann.delete(`/messages/${message}/reactions`, { emoji_code: parrot.id, reaction_type: 'realm_emoji' })).status, 200, 'removed by code');

  // A custom emoji replaces the built-in one of its name, in messages and reactions.
  await uploaded(api, 'octopus');
  const octopus = (await byName(api, 'octopus'))!;
  const replaced = await sendToChannel(ann, 'lobby', 'fun', ':octopus:');
  t.equal((await ann.get(`/messages/${replaced}`)).body.message.content, `<p><img alt=":octopus:" class="emoji" src="${octopus.source_url}" title="octopus"></p>`);
  t.equal((await ann.post(`/messages/${replaced}/reactions`, { emoji_name: 'octopus' })).status, 200);
  t.match((await ann.get(`/messages/${replaced}`)).body.message.reactions, [{ emoji_code: octopus.id, reaction_type: 'realm_emoji' }]);

  // Deactivated: kept where it was used, refused anew.
  t.equal((await ann.delete('/realm/emoji/party_parrot')).status, 200);
  t.equal((await bob.get(`/messages/${message}`)).body.message.content, fetched.content, 'the old message still shows it');
  t.match((await bob.get(`/messages/${message}`)).body.message.reactions, [{ emoji_code: parrot.id, user_id: ids.bob.userId }], 'and the old reaction');
  t.match(await react(ann, { emoji_name: 'party_parrot', emoji_code: parrot.id, reaction_type: 'realm_emoji' }), { body: { msg: 'This custom emoji has been deactivated.' } });
  t.match(await react(ann, { emoji_name: 'party_parrot' }), { body: { msg: "Emoji 'party_parrot' does not exist" } });
  const later = await sendToChannel(ann, 'lobby', 'fun', ':party_parrot:');
  t.equal((await ann.get(`/messages/${later}`)).body.message.content, '<p>:party_parrot:</p>', 'a new message shows the text');
  t.equal((await api.post('/messages/render', { content: ':octopus:' })).body.rendered, `<p><img alt=":octopus:" class="emoji" src="${octopus.source_url}" title="octopus"></p>`);
});

t.test('custom emoji and their images survive a restart', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await organization(t, dataDir);
  await uploaded(first.ann, 'kept', [gif(2)]);
  await uploaded(first.ann, 'gone');
  t.equal((await first.ann.delete('/realm/emoji/gone')).status, 200);
  const before = await emojiOf(first.api);
  await first.server.stop();

  const second = await startTestServer(t, { dataDir });
  const ann = second.api.as(first.ids.ann);
  t.same(await emojiOf(ann), before, 'the same emoji, the deactivated one too');
  const kept = (await byName(second.api, 'kept'))!;
  t.same((await image(second, kept.source_url)).bytes, gif(2), 'the image is served again');
  t.equal((await image(second, kept.still_url!)).status, 200, 'and its still');
  t.match(await upload(ann, 'kept'), { body: { msg: 'A custom emoji with this name already exists.' } }, 'the name index is rebuilt');
  await uploaded(ann, 'gone');
  t.equal(Number((await byName(second.api, 'gone'))!.id), Math.max(...Object.keys(before).map(Number)) + 1, 'ids continue');
  await second.api.post('/users/me/subscriptions', { subscriptions: [{ name: 'lobby' }] });
  const sent = await sendToChannel(second.api, 'lobby', 'after', ':kept:');
  t.match((await second.api.get(`/messages/${sent}`)).body.message.content, /^<p><img alt=":kept:" class="emoji"/);
});

t.test('custom emoji survive SIGKILL (log replay)', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const server = await startChild(dataDir);
  await uploaded(server.api, 'kept', [gif(2)]);
  await uploaded(server.api, 'gone');
  t.equal((await server.api.delete('/realm/emoji/gone')).status, 200);
  const before = await emojiOf(server.api);
  server.process.kill('SIGKILL');
  await server.exited;
  const again = await startChild(dataDir);
  t.teardown(() => void again.process.kill('SIGKILL'));
  t.same(await emojiOf(again.api), before);
  const kept = (await byName(again.api, 'kept'))!;
  t.same(Buffer.from(await (await fetch(`${again.url}${kept.source_url}`)).arrayBuffer()), gif(2), 'the image was on disk before the record');
  t.match(await upload(again.api, 'kept'), { body: { msg: 'A custom emoji with this name already exists.' } });
});

t.test('a message keeps at most 100 different emoji; made-up codes and names are bounded in length', async (t) => {
  const { api } = await startTestServer(t, { rateLimit: null });
  const ann = api.as(await api.createUser('ann@example.com', 'Ann'));
  const lobby = await channel(api, 'lobby', [1, (await ann.get('/users/me')).body.user_id]);
  const message = await sendToChannel(api, lobby, 'fun', 'React to me');
  const react = (who: ApiClient, code: string, name = 'made_up') => who.post(`/messages/${message}/reactions`, { emoji_name: name, emoji_code: code, reaction_type: 'unicode_emoji' });
  // Any well-formed code is taken: the owner hangs 100 different ones on the message.
  for (let i = 0; i < MAX_EMOJI_PER_MESSAGE; i++) {
    const { status, body } = await react(api, (0x1f300 + i).toString(16));
    if (status !== 200) t.fail(`emoji ${i}: ${JSON.stringify(body)}`);
  }
  const full = await react(api, (0x1f300 + MAX_EMOJI_PER_MESSAGE).toString(16));
  t.equal(full.status, 400);
  t.equal(full.body.msg, 'This message already has 100 different emoji reactions, the most it may have; react with one of those', 'the 101st different emoji is refused');
  t.equal((await react(ann, '1f300')).status, 200, 'another user still reacts with one the message has');
  t.equal((await react(ann, (0x1f300 + MAX_EMOJI_PER_MESSAGE).toString(16))).status, 400, 'but adds no new one');
  t.equal((await api.delete(`/messages/${message}/reactions`, { emoji_code: '1f301', reaction_type: 'unicode_emoji' })).status, 200);
  t.equal((await react(ann, (0x1f300 + MAX_EMOJI_PER_MESSAGE).toString(16))).status, 200, 'once one is gone, a new one fits');
  t.equal((await api.get(`/messages/${message}`)).body.message.reactions.length, 101, '100 emoji, one of them twice');

  const other = await sendToChannel(api, lobby, 'fun', 'And to me');
  const reactTo = (code: string, name: string) => api.post(`/messages/${other}/reactions`, { emoji_name: name, emoji_code: code, reaction_type: 'unicode_emoji' });
  // The longest sequence Unicode defines: a kiss, two people with skin tones (10 code points).
  t.equal((await reactTo('1f9d1-1f3fb-200d-2764-fe0f-200d-1f48b-200d-1f9d1-1f3fc', 'kiss')).status, 200, 'a 10-code-point sequence');
  t.match(await reactTo(Array(11).fill('1f600').join('-'), 'long'), { status: 400, body: { msg: 'Invalid emoji code' } }, '11 code points are not an emoji');
  t.equal((await reactTo('1f601', 'n'.repeat(100))).status, 200, 'a 100-character name');
  t.match(await reactTo('1f602', 'n'.repeat(101)), { status: 400, body: { msg: 'Invalid emoji name' } }, 'a 101-character name');
});
