import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { channel, drain, ofType, sendDirect, sendToChannel, type Event } from './helpers/messages.ts';
import { cli, cliWith } from './helpers/cli.ts';
import { HostClient } from './helpers/host-client.ts';
import { OpenApi } from './helpers/openapi.ts';
import { ApiClient, readZuliprc, startTestServer, tempDir } from './helpers/server.ts';
import { openExportFile } from '../src/realm-export-file.ts';

/** POST and GET /export/realm: a background export, without credentials, of what the export type and consents allow. */
const api = new OpenApi();
const events = api.resolve((api.doc.paths['/events']!.get as any).responses['200'].content['application/json'].schema);
const exportEventSchema = api.resolve(api.properties(events).events!.items!).oneOf!.find((schema) => api.properties(schema).type?.allOf?.some((part) => part.enum?.[0] === 'realm_export'))!;
const listSchema = (api.doc.paths['/export/realm']!.get as any).responses['200'].content['application/json'].schema;

async function upload(client: ApiClient, name: string, text: string): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([text]), name);
  const auth = `Basic ${Buffer.from(`${client.credentials!.email}:${client.credentials!.key}`).toString('base64')}`;
  const response = await fetch(`${client.baseUrl}/api/v1/user_uploads`, { method: 'POST', headers: { Authorization: auth }, body: form });
  return ((await response.json()) as { url: string }).url;
}

/** Waits until the export is no longer pending (it is made in the background), then answers the list. */
async function finished(client: ApiClient | HostClient, id: number): Promise<Record<string, any>> {
  for (;;) {
    const { body } = client instanceof HostClient ? await client.send('GET', '/export/realm') : await client.get('/export/realm');
    const entry = body.exports.find((candidate: { id: number }) => candidate.id === id);
    if (entry && !entry.pending) return entry;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function download(client: ApiClient, url: string, dir: string): Promise<ReturnType<typeof openExportFile>> {
  const auth = `Basic ${Buffer.from(`${client.credentials!.email}:${client.credentials!.key}`).toString('base64')}`;
  const response = await fetch(url, { headers: { Authorization: auth } });
  if (response.status !== 200) throw new Error(`download: ${response.status}`);
  const file = join(dir, `export-${Math.random()}.chat-export`);
  writeFileSync(file, Buffer.from(await response.arrayBuffer()));
  return openExportFile(file);
}

t.test('exports through the API: public and with consent, told by events, downloaded by administrators, imported', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { api: owner } = await startTestServer(t, { realmExportLimit: 2 });
  const ann = await owner.createUser('ann@example.com', 'Ann');
  const bob = await owner.createUser('bob@example.com', 'Bob');
  await owner.as(ann).patch('/settings', { allow_private_data_export: true });
  const general = await channel(owner, 'general', [1, ann.userId, bob.userId]);
  await channel(owner, 'secret', [1, ann.userId], { invite_only: true });
  t.equal((await owner.as(ann).post('/drafts', { drafts: [{ type: 'stream', to: [general], topic: 'x', content: 'ann draft', timestamp: 1 }] })).status, 200);
  const publicFile = await upload(owner, 'public.txt', 'public words');
  await sendToChannel(owner, general, 'hello', `Hi all [file](${publicFile})`);
  await sendToChannel(owner.as(ann), 'secret', 'plans', 'a secret plan');
  const directFile = await upload(owner.as(bob), 'private.txt', 'private words');
  await sendDirect(owner.as(bob), [ann.userId], `for ann [file](${directFile})`);
  await sendDirect(owner.as(bob), [1], 'for the owner only');
  const { queueId } = await owner.register({ event_types: ['realm_export'] });

  const refused = await owner.as(ann).post('/export/realm');
  t.same([refused.status, refused.body.msg], [400, 'Must be an organization administrator']);
  t.equal((await owner.as(ann).get('/export/realm')).status, 400, 'the list is for administrators');

  const requested = await owner.post('/export/realm');
  t.equal(requested.status, 200, JSON.stringify(requested.body));
  const done = await finished(owner, requested.body.id);
  t.match(done, { id: requested.body.id, acting_user_id: 1, export_type: 1, pending: false, failed_timestamp: null, deleted_timestamp: null });
  const realmUrl = (await owner.get('/server_settings')).body.realm_url as string;
  t.ok(done.export_url.startsWith(`${realmUrl}/user_exports/`), `export_url ${done.export_url} is absolute, at the organization's URL ${realmUrl}`);
  const list = await owner.get('/export/realm');
  t.same(api.mismatches(list.body, listSchema, 'GET /export/realm'), [], 'the list in its documented shape');

  const told = ofType(await drain(owner, queueId), 'realm_export') as Event[];
  t.same(told.map((event) => (event.exports as { pending: boolean }[]).at(-1)!.pending), [true, false], 'started, then finished');
  for (const event of told) t.same(api.mismatches(event, exportEventSchema, 'realm_export'), [], 'each event in its documented shape');
  t.equal((told.at(-1)!.exports as { export_url: string }[]).at(-1)!.export_url, done.export_url, 'the events give the same absolute URL');

  const fetchAs = (client: ApiClient) => fetch(done.export_url, { headers: { Authorization: `Basic ${Buffer.from(`${client.credentials!.email}:${client.credentials!.key}`).toString('base64')}` } });
  t.equal((await fetchAs(owner.as(ann))).status, 400, 'not for a user who is no administrator');

  const keys = new Set([owner.credentials!.key, ann.key, bob.key]);
  const publicExport = await download(owner, done.export_url, dir);
  const { realm, users } = publicExport.header;
  t.notOk(realm.users.some((user) => keys.has(user.apiKey) || user.passwordHash !== null), 'no API key, no password hash');
  t.same(realm.channels.map((channel) => channel.name).sort(), ['general'], 'public channels only');
  t.same(realm.messages!.messages.map((message) => message.content), [`Hi all [file](${publicFile})`], 'public messages only');
  t.same(realm.attachments!.attachments.map((attachment) => attachment.name), ['public.txt'], 'the files of exported messages only');
  t.same([...publicExport.files()].map((file) => file.data.toString()), ['public words']);
  t.notOk(users.some((record) => (record.state.drafts ?? []).length > 0), 'no personal state');
  t.same(Object.values(realm.messages!.flags).flat(), [], 'no read or starred flags');
  publicExport.close();

  const full = await owner.post('/export/realm', { export_type: 2 });
  const fullDone = await finished(owner, full.body.id);
  const consented = await download(owner, fullDone.export_url, dir);
  t.same(consented.header.realm.messages!.messages.map((message) => message.content).sort(),
    [`Hi all [file](${publicFile})`, 'a secret plan', `for ann [file](${directFile})`].sort(), 'what a consenting user reads, not the others\' direct messages');
  t.same(consented.header.users.find((record) => record.state.userId === ann.userId)!.state.drafts!.map((draft) => draft.content), ['ann draft'], 'the consenting user\'s own state');
  t.notOk(consented.header.realm.users.some((user) => keys.has(user.apiKey)), 'still no API key');
  consented.close();

  const limited = await owner.post('/export/realm');
  t.same([limited.status, limited.body.msg], [400, 'Exceeded rate limit.'], 'CHAT_REALM_EXPORT_LIMIT in 7 days');

  // The file is an export import-realm takes.
  const file = join(dir, 'imported.chat-export');
  writeFileSync(file, Buffer.from(await (await fetchAs(owner)).arrayBuffer()));
  const target = join(dir, 'target');
  // Served at a name, so that the organization's subdomain is a host of its own.
  const externalUrl = 'http://chat.localhost';
  const imported = await cliWith({ CHAT_EXTERNAL_URL: externalUrl }, 'import-realm', file, '--data-dir', target, '--subdomain', 'copy');
  t.equal(imported.code, 0, imported.stderr);
  t.match(imported.stdout, /3 users, 1 channels, 1 messages, 1 files/);

  // The export held no credentials: the owner gets new ones, and they work against the imported organization.
  const handed = /^ {2}(\S+) \(id (\d+)\): password \(shown once\) (\S+); client configuration \(zuliprc\): (\S+)$/m.exec(imported.stdout);
  t.ok(handed, `the owner's new credentials are told:\n${imported.stdout}`);
  if (!handed) return;
  const [, email, userId, password, rcPath] = handed;
  t.equal(rcPath, join(target, `zuliprc-copy-${userId}`));
  const rc = readZuliprc(rcPath!);
  t.equal(rc.email, email);
  t.equal(rc.site, 'http://copy.chat.localhost', 'the zuliprc names the imported organization');
  const copy = await startTestServer(t, { dataDir: target, externalUrl });
  const asOwner = new HostClient(copy.url, new URL(rc.site).hostname, { email: rc.email, key: rc.key });
  const me = await asOwner.send('GET', '/users/me');
  t.same([me.status, me.body.email, me.body.user_id, me.body.is_owner], [200, email, Number(userId), true], "the zuliprc's API key works");
  const login = await asOwner.as(null).send('POST', '/fetch_api_key', { username: email!, password: password! });
  t.same([login.status, login.body.api_key], [200, rc.key], 'and so does the password');

  // An organization at a subdomain gives its own URL.
  const again = await asOwner.send('POST', '/export/realm');
  t.equal(again.status, 200, JSON.stringify(again.body));
  const entry = await finished(asOwner, again.body.id);
  t.equal((await asOwner.send('GET', '/server_settings')).body.realm_url, 'http://copy.chat.localhost');
  t.match(entry.export_url, /^http:\/\/copy\.chat\.localhost\/user_exports\//, 'the export of the organization at a subdomain is at its URL');
});

t.test('an export holds the history as it was asked for: a message sent, deleted or moved out of it while the export is made is not in it', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { api: owner, server } = await startTestServer(t);
  const general = await channel(owner, 'general', [1]);
  const secret = await channel(owner, 'secret', [1], { invite_only: true });
  // A history long enough that the export is still walking and writing it, many turns of the event loop
  // later, when the changes below are made; read back from the data directory, as a running server's is.
  const realmId = server.runtime.realmStates()[0]!.realmId;
  const ids: number[] = [];
  for (let start = 0; start < 6000; start += 500) {
    const sent = await Promise.all(Array.from({ length: 500 }, (_, i) => server.runtime.execute(realmId, {
      type: 'message.send', caller: { kind: 'user', userId: 1 }, kind: 'channel', to: general, topic: `topic ${(start + i) % 10}`, content: `message ${start + i}`, client: 'test',
    })));
    for (const [change] of sent) if (change?.type === 'message.sent') ids.push(change.message.id);
  }
  await server.runtime.snapshot();
  const [deleted, moved] = ids.slice(-2);

  const requested = await owner.post('/export/realm');
  t.equal(requested.status, 200, JSON.stringify(requested.body));
  const changed = await Promise.all([
    owner.post('/messages', { type: 'stream', to: 'general', topic: 'late', content: 'sent after the export began' }),
    owner.delete(`/messages/${deleted}`),
    owner.patch(`/messages/${moved}`, { stream_id: secret, send_notification_to_old_thread: false, send_notification_to_new_thread: false }),
  ]);
  t.same(changed.map((result) => result.status), [200, 200, 200], JSON.stringify(changed.map((result) => result.body)));
  const done = await finished(owner, requested.body.id);
  t.equal(done.failed_timestamp, null, 'made');

  const exported = await download(owner, done.export_url, dir);
  const { realm } = exported.header;
  const channelIds = realm.channels.map((channel) => channel.id);
  t.same(channelIds, [general], 'the public channel only');
  const messages = realm.messages!.messages;
  t.same(messages.filter((message) => message.recipient.kind !== 'channel' || !channelIds.includes(message.recipient.channelId)).map((message) => message.id), [], 'every message in a channel the export holds');
  t.same(messages.map((message) => message.id), ids.filter((id) => id !== deleted && id !== moved), 'the history asked for, but for the message deleted and the one moved out of it since');
  exported.close();
});
