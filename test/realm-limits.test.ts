import t from 'tap';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_REALM_LIMITS } from '../actors/realm/limits.ts';
import { configFrom } from '../src/config.ts';
import { png } from './helpers/images.ts';
import { startTestServer, tempDir, type ApiClient } from './helpers/server.ts';

/** POST /realm/emoji/{name} with one image, as clients send it. */
async function upload(api: ApiClient, name: string) {
  const form = new FormData();
  form.append('f1', new Blob([new Uint8Array(png())]), 'emoji.png');
  const auth = `Basic ${Buffer.from(`${api.credentials!.email}:${api.credentials!.key}`).toString('base64')}`;
  const response = await fetch(`${api.baseUrl}/api/v1/realm/emoji/${encodeURIComponent(name)}`, { method: 'POST', headers: { Authorization: auth }, body: form });
  return { status: response.status, body: await response.json() as Record<string, unknown> };
}

const refusal = (count: number, what: string) => ({ status: 400, body: { code: 'BAD_REQUEST', msg: `This organization already has ${count} ${what}, the most it may have` } });

/** Every file under a directory, for what a refused upload leaves behind. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

t.test('an organization has a bounded number of user groups, channels and custom emoji; the kept ones count; the bounds hold after a restart', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const start = async (userGroups: number) => startTestServer(t, { dataDir, rateLimit: null, realmLimits: { ...DEFAULT_REALM_LIMITS, userGroups, channels: 3, customEmoji: 2 } });
  // The system groups (role:everyone and the others) are groups too: the bound leaves room for two more.
  const probe = await start(100);
  const systemGroups = (await probe.api.get('/user_groups')).body.user_groups.length as number;
  await probe.stop();
  let server = await start(systemGroups + 2);
  let { api } = server;
  const ann = api.as(await api.createUser('ann@example.com', 'Ann'));

  // User groups: descriptions are bounded in length, the deactivated count.
  t.match(await ann.post('/user_groups/create', { name: 'long', description: 'd'.repeat(1025), members: [] }), { status: 400, body: { msg: 'User group description cannot exceed 1024 characters.' } });
  const crew = (await ann.post('/user_groups/create', { name: 'crew', description: 'd'.repeat(1024), members: [] })).body.group_id as number;
  t.type(crew, 'number', 'a 1,024-character description');
  t.match(await ann.patch(`/user_groups/${crew}`, { description: 'e'.repeat(1025) }), { status: 400, body: { msg: 'User group description cannot exceed 1024 characters.' } }, 'nor made longer');
  t.equal((await ann.post('/user_groups/create', { name: 'deck', description: '', members: [] })).status, 200);
  t.match(await ann.post('/user_groups/create', { name: 'hold', description: '', members: [] }), refusal(systemGroups + 2, 'user groups'), 'one group past the bound');
  t.equal((await ann.post(`/user_groups/${crew}/deactivate`)).status, 200);
  t.match(await ann.post('/user_groups/create', { name: 'hold', description: '', members: [] }), refusal(systemGroups + 2, 'user groups'), 'a deactivated group still counts');
  t.equal((await ann.patch(`/user_groups/${crew}`, { name: 'old crew' })).status, 200, 'at the bound, a group is still edited');

  // Channels (configured: 3): a request that would create more than fit is refused whole; archived ones count.
  const subscribe = (who: ApiClient, names: string[]) => who.post('/users/me/subscriptions', { subscriptions: names.map((name) => ({ name })) });
  t.equal((await subscribe(ann, ['one', 'two'])).status, 200);
  t.match(await subscribe(ann, ['three', 'four']), refusal(3, 'channels'), 'two new channels where one fits');
  t.notOk(((await api.get('/streams')).body.streams as { name: string }[]).some((s) => s.name === 'three'), 'neither was made');
  t.equal((await subscribe(ann, ['three'])).status, 200, 'the third');
  t.match(await subscribe(ann, ['four']), refusal(3, 'channels'), 'a fourth');
  t.equal((await subscribe(api, ['one', 'two', 'three'])).status, 200, 'at the bound, existing channels are still joined');
  const three = (await api.get('/get_stream_id', { stream: 'three' })).body.stream_id as number;
  t.equal((await api.delete(`/streams/${three}`)).status, 200);
  t.match(await subscribe(ann, ['four']), refusal(3, 'channels'), 'an archived channel still counts');

  // Custom emoji (configured: 2): names are bounded in length; a refused upload leaves no file behind.
  t.match(await upload(ann, 'e'.repeat(101)), { status: 400, body: { msg: 'Emoji name is too long (limit: 100 characters)' } });
  t.equal((await upload(ann, 'e'.repeat(100))).status, 200, 'a 100-character name');
  t.equal((await upload(ann, 'parrot')).status, 200);
  const files = filesUnder(dataDir).filter((file) => file.includes('emoji')).sort();
  t.ok(files.length >= 2, `the two emoji's images are in the data directory (${files.length} files)`);
  t.match(await upload(ann, 'third'), refusal(2, 'custom emoji'), 'a third emoji');
  t.same(filesUnder(dataDir).filter((file) => file.includes('emoji')).sort(), files, 'its image was not kept');
  t.equal((await ann.delete('/realm/emoji/parrot')).status, 200);
  t.match(await upload(ann, 'third'), refusal(2, 'custom emoji'), 'a deactivated emoji still counts');

  await server.stop();
  server = await start(systemGroups + 2);
  api = server.api;
  t.match(await api.post('/user_groups/create', { name: 'after', description: '', members: [] }), refusal(systemGroups + 2, 'user groups'), 'after a restart: groups');
  t.match(await subscribe(api, ['after']), refusal(3, 'channels'), 'after a restart: channels');
  t.match(await upload(api, 'after'), refusal(2, 'custom emoji'), 'after a restart: emoji');
});

t.test('the organization bounds are read from the environment', async (t) => {
  t.same(configFrom({}, {}).realmLimits, { userGroups: 5000, channels: 10_000, customEmoji: 5000, invitations: 10_000, users: 100_000 }, 'by default');
  const config = configFrom({}, {
    CHAT_MAX_USER_GROUPS_PER_REALM: '7', CHAT_MAX_CHANNELS_PER_REALM: '8', CHAT_MAX_CUSTOM_EMOJI_PER_REALM: '9',
    CHAT_MAX_INVITATIONS_PER_REALM: '10', CHAT_MAX_USERS_PER_REALM: '11',
  });
  t.same(config.realmLimits, { userGroups: 7, channels: 8, customEmoji: 9, invitations: 10, users: 11 });
  t.throws(() => configFrom({}, { CHAT_MAX_CHANNELS_PER_REALM: 'many' }), /CHAT_MAX_CHANNELS_PER_REALM/);
});
