import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { MAX_PLAYGROUNDS } from '../actors/realm/playgrounds/decide.ts';
import { defaultConfig } from '../src/config.ts';
import { operatorCommands } from '../src/operator.ts';
import { OpenApi } from './helpers/openapi.ts';
import { realmCommands } from '../src/operator-realm.ts';
import { channel, drain, sendDirect, sendToChannel } from './helpers/messages.ts';
import { startTestServer, tempDir } from './helpers/server.ts';

// Operations of the OpenAPI document that had no route: each with a success and a documented error.

const openApi = new OpenApi();
/** Where an answer differs from the shape the document gives the operation's answer of that status. */
function undocumented(method: string, path: string, result: { status: number; body: unknown }): string[] {
  const operation = openApi.doc.paths[path]?.[method] as { responses: Record<string, { content: { 'application/json': { schema: object } } }> };
  const schema = operation.responses[String(result.status)]?.content['application/json'].schema;
  return schema ? openApi.mismatches(result.body, schema, `${method} ${path} ${result.status}`) : [`${method} ${path}: no ${result.status} answer documented`];
}

t.test('DELETE /users/me: a user leaves on its own; the only user and the only owner cannot', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir });
  const { api } = first;

  const alone = await api.delete('/users/me');
  t.same([alone.status, alone.body], [400, {
    result: 'error', msg: 'Cannot deactivate the only user', code: 'CANNOT_DEACTIVATE_LAST_USER', entity: 'user', is_last_owner: false,
  }], 'the only user of the organization');
  const ann = await api.createUser('ann@example.com', 'Ann');
  const lastOwner = await api.delete('/users/me');
  t.same([lastOwner.status, lastOwner.body], [400, {
    result: 'error', msg: 'Cannot deactivate the only organization owner', code: 'CANNOT_DEACTIVATE_LAST_USER', entity: 'organization owner', is_last_owner: true,
  }], 'the only owner, beside another user');

  const { queueId } = await api.register({ event_types: ['realm_user'] });
  const bot = (await api.as(ann).post('/bots', { full_name: 'Ann Bot', short_name: 'annbot' })).body;
  t.same((await api.as(ann).delete('/users/me')).body, { result: 'success', msg: '' }, 'a member needs no administrator to leave');
  t.equal((await api.as(ann).get('/users/me')).status, 401, 'its key no longer works');
  const events = (await api.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).body.events;
  const deactivated = events.filter((event: { op: string; person?: { is_active?: boolean } }) => event.op === 'update' && event.person?.is_active === false);
  t.same(deactivated.map((event: { person: { user_id: number } }) => event.person.user_id).sort(), [ann.userId, bot.user_id].sort(), 'the user and its bot are announced as deactivated');

  await first.stop();
  const second = await startTestServer(t, { dataDir });
  const members = (await second.api.get('/users')).body.members as { user_id: number; is_active: boolean }[];
  t.equal(members.find((member) => member.user_id === ann.userId)?.is_active, false, 'still deactivated after a restart');
});

t.test('POST /users/{id}/status: an administrator sets another user\'s status', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const { queueId } = await api.as(bob).register({ event_types: ['user_status'] });

  const set = await api.post(`/users/${ann.userId}/status`, { status_text: 'on vacation', emoji_name: 'car', emoji_code: '1f697', reaction_type: 'unicode_emoji' });
  t.same(set.body, { result: 'success', msg: '' });
  t.same((await api.as(bob).get(`/users/${ann.userId}/status`)).body.status,
    { status_text: 'on vacation', emoji_name: 'car', emoji_code: '1f697', reaction_type: 'unicode_emoji' });
  const events = (await api.as(bob).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).body.events;
  t.match(events, [{ type: 'user_status', user_id: ann.userId, status_text: 'on vacation', emoji_name: 'car' }], 'announced to the realm');

  const refused = await api.as(bob).post(`/users/${ann.userId}/status`, { status_text: 'hacked' });
  t.same([refused.status, refused.body], [400, { result: 'error', msg: 'Insufficient permission', code: 'BAD_REQUEST' }], 'a member may not');
  t.same((await api.post(`/users/${ann.userId}/status`)).body, { result: 'error', msg: 'Client did not pass any new values.', code: 'BAD_REQUEST' });
  t.same((await api.post(`/users/${ann.userId}/status`, { status_text: 'x'.repeat(61) })).body.msg, 'status_text is too long (limit: 60 characters)');
  t.same((await api.post('/users/9999/status', { status_text: 'x' })).body.msg, 'No such user');
  t.same((await api.post(`/users/${ann.userId}/status`, { status_text: '' })).status, 200, 'the empty text clears it');
  t.equal((await api.get(`/users/${ann.userId}/status`)).body.status.status_text, undefined);
});

t.test('PATCH /users/me/subscriptions: subscribe and unsubscribe in one request', async (t) => {
  const { api } = await startTestServer(t);
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'old' }, { name: 'kept' }] });
  const both = await api.patch('/users/me/subscriptions', { add: [{ name: 'new', description: 'A new channel' }, { name: 'kept' }], delete: ['old'] });
  t.same(both.body, { result: 'success', msg: '', subscribed: { 1: ['new'] }, already_subscribed: { 1: ['kept'] }, removed: ['old'], not_removed: [] });
  const names = (await api.get('/users/me/subscriptions')).body.subscriptions.map((s: { name: string }) => s.name).sort();
  t.same(names, ['kept', 'new']);
  t.equal((await api.get(`/streams/${(await api.get('/get_stream_id', { stream: 'new' })).body.stream_id}`)).body.stream.description, 'A new channel');
  t.same((await api.patch('/users/me/subscriptions', { delete: ['old'] })).body.not_removed, ['old'], 'no longer subscribed');

  const nothing = await api.patch('/users/me/subscriptions');
  t.same(nothing.body, { result: 'error', msg: 'Nothing to do. Specify at least one of "add" or "delete".', code: 'BAD_REQUEST' });
  const unknown = await api.patch('/users/me/subscriptions', { add: [{ name: 'third' }], delete: ['nowhere'] });
  t.equal(unknown.body.msg, "Invalid channel name 'nowhere'");
  t.equal((await api.get('/get_stream_id', { stream: 'third' })).status, 400, 'an unknown removal fails the request before anything is added');
});

t.test('POST /dev_fetch_api_key: only where the development switch is on', async (t) => {
  const production = await startTestServer(t);
  const refused = await production.api.as(null).post('/dev_fetch_api_key', { username: production.owner.email });
  t.same([refused.status, refused.body], [400, { result: 'error', msg: 'Endpoint not available in production.', code: 'BAD_REQUEST' }]);

  const dev = await startTestServer(t, { devAuthEnabled: true });
  const fetched = await dev.api.as(null).post('/dev_fetch_api_key', { username: dev.owner.email });
  t.same(fetched.body, { result: 'success', msg: '', api_key: dev.owner.key, email: dev.owner.email, user_id: 1 });
  const unknown = await dev.api.as(null).post('/dev_fetch_api_key', { username: 'nobody@example.com' });
  t.same([unknown.status, unknown.body.code], [401, 'AUTHENTICATION_FAILED']);
  t.equal((await dev.api.as(null).post('/dev_fetch_api_key')).body.code, 'REQUEST_VARIABLE_MISSING');
});

t.test('GET /messages/{id}/read_receipts: who read it, as their privacy and the realm allow', async (t) => {
  const { api } = await startTestServer(t);
  const [ann, bob, carl, dave] = [
    await api.createUser('ann@example.com', 'Ann'), await api.createUser('bob@example.com', 'Bob'),
    await api.createUser('carl@example.com', 'Carl'), await api.createUser('dave@example.com', 'Dave'),
  ];
  await channel(api, 'ops', [1, ann.userId, bob.userId, carl.userId, dave.userId]);
  const id = await sendToChannel(api.as(ann), 'ops', 'plans', 'Ready?');
  const disabled = await api.get(`/messages/${id}/read_receipts`);
  t.same([disabled.status, disabled.body], [400, { result: 'error', msg: 'Read receipts are disabled in this organization.', code: 'BAD_REQUEST' }]);
  t.equal((await api.patch('/realm', { enable_read_receipts: true })).status, 200);
  t.same((await api.get(`/messages/${id}/read_receipts`)).body, { result: 'success', msg: '', user_ids: [] }, 'nobody but its sender has read it');

  for (const reader of [bob, carl, dave]) await api.as(reader).post('/messages/flags', { messages: [id], op: 'add', flag: 'read' });
  await api.post('/messages/flags', { messages: [id], op: 'add', flag: 'read' });
  t.same((await api.get(`/messages/${id}/read_receipts`)).body.user_ids, [1, bob.userId, carl.userId, dave.userId], 'never the sender; the viewer itself is there');
  const bot = (await api.post('/bots', { full_name: 'Reader', short_name: 'reader' })).body;
  await channel(api, 'ops', [bot.user_id]);
  const botMessage = await sendToChannel(api.as(ann), 'ops', 'plans', 'Processed?');
  const botEmail = (await api.get(`/users/${bot.user_id}`)).body.user.email;
  await api.as({ email: botEmail, key: bot.api_key }).post('/messages/flags', { messages: [botMessage], op: 'add', flag: 'read' });
  t.same((await api.get(`/messages/${botMessage}/read_receipts`)).body.user_ids, [bot.user_id], 'a bot that marked it read is listed');

  t.equal((await api.as(carl).patch('/settings', { send_read_receipts: false })).status, 200);
  t.equal((await api.post(`/users/me/muted_users/${dave.userId}`)).status, 200);
  t.equal((await api.as(bob).post('/users/me/muted_users/1')).status, 200);
  t.same((await api.get(`/messages/${id}/read_receipts`)).body.user_ids, [1],
    'not Carl (keeps reading private), Dave (muted by the viewer) nor Bob (muted the viewer)');
  t.same((await api.as(ann).get(`/messages/${id}/read_receipts`)).body.user_ids, [1, bob.userId, dave.userId], 'another viewer sees Bob and Dave');

  const hidden = await sendDirect(api.as(ann), [bob.userId], 'psst');
  t.same((await api.as(carl).get(`/messages/${hidden}/read_receipts`)).body, { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' }, 'a message the caller cannot read');
});

t.test('POST /messages/{id}/report: a report reaches the moderation request channel', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir });
  const { api } = first;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  await channel(api, 'general', [ann.userId, bob.userId]);
  const id = await sendToChannel(api.as(ann), 'general', 'chat', 'You are all ``` wrong');

  const unset = await api.as(bob).post(`/messages/${id}/report`, { report_type: 'harassment' });
  t.same([unset.status, unset.body], [400, { result: 'error', msg: 'Moderation request channel must be specified to enable message reporting.', code: 'BAD_REQUEST' }]);
  const general = (await api.get('/get_stream_id', { stream: 'general' })).body.stream_id;
  t.equal((await api.patch('/realm', { moderation_request_channel_id: general })).body.msg, 'Moderation request channel must be private.');
  const moderation = await channel(api, 'moderation', [1], { invite_only: true });
  t.equal((await api.patch('/realm', { moderation_request_channel_id: moderation })).status, 200);
  const { queueId } = await api.register({ event_types: ['message'], apply_markdown: true });

  t.equal((await api.as(bob).post(`/messages/${id}/report`, { report_type: 'other' })).body.msg, 'An explanation is required.');
  t.equal((await api.as(bob).post(`/messages/${id}/report`, { report_type: 'rude' })).status, 400, 'an unknown report type');
  t.equal((await api.as(bob).post(`/messages/${id}/report`, { report_type: 'norms', description: 'x'.repeat(1001) })).body.msg, 'description is too long (limit: 1000 characters)');
  t.equal((await api.as(bob).post('/messages/99999/report', { report_type: 'spam' })).body.msg, 'Invalid message(s)');
  t.same((await api.as(bob).post(`/messages/${id}/report`, { report_type: 'harassment', description: 'Rude to everyone' })).body, { result: 'success', msg: '' });

  const events = (await drain(api, queueId)).filter((event) => event.type === 'message');
  t.equal(events.length, 1, 'one report, to the moderators');
  const report = events[0]!.message as Record<string, unknown>;
  t.match(report, { type: 'stream', stream_id: moderation, subject: "Ann's moderation requests", sender_full_name: 'Notification Bot' });
  t.match(report.content, /reported .*general.*sent by .*Ann/);
  t.match(report.content, /Harassment/);
  t.match(report.content, /<blockquote>\s*<p>Rude to everyone<\/p>/);
  t.match(report.content, /spoiler-block[\s\S]*You are all ``` wrong/, 'the reported text under a spoiler, its backticks unable to close the fence');
  t.notOk((await api.as(bob).get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'channel', operand: moderation }] })).body.messages?.length,
    'the reporter does not see the moderators\' channel');
  t.equal((await api.patch(`/streams/${moderation}`, { is_private: false })).body.msg, 'Moderation request channel must be private.');

  await first.stop();
  const second = await startTestServer(t, { dataDir });
  const kept = await second.api.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'channel', operand: moderation }] });
  t.same(kept.body.messages.map((message: { id: number }) => message.id), [report.id], 'the report is still there after a restart');
  t.equal((await second.api.register({ fetch_event_types: ['realm'] })).body.realm_moderation_request_channel_id, moderation);
});

t.test('/realm/playgrounds: administrators add and remove them, everyone is told, a restart keeps them', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir });
  const { api } = first;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const { queueId } = await api.as(ann).register({ event_types: ['realm_playgrounds'] });
  t.same((await api.as(ann).register({ fetch_event_types: ['realm_playgrounds'] })).body.realm_playgrounds, []);

  const python = { name: 'Python playground', pygments_language: 'Python', url_template: 'https://python.example.com?code={code}' };
  const added = await api.post('/realm/playgrounds', python);
  t.same(added.body, { result: 'success', msg: '', id: 1 });
  const rust = (await api.post('/realm/playgrounds', { name: 'Rust', pygments_language: 'Rust', url_template: 'https://play.example.com/{?code}' })).body.id;
  t.equal(rust, 2);

  const refusals: [Record<string, unknown>, string][] = [
    [python, 'Realm playground with this Realm, Pygments language and Name already exists.'],
    [{ ...python, name: 'Other', url_template: 'https://python.example.com?code={source}' }, '"code" should be the only variable present in the URL template'],
    [{ ...python, name: 'Other', url_template: 'https://python.example.com?code={code' }, 'Invalid URL template.'],
    [{ ...python, name: 'Other', pygments_language: 'Py<thon>' }, 'Invalid characters in pygments language'],
    [{ ...python, name: '' }, 'This field cannot be blank.'],
  ];
  for (const [params, msg] of refusals) t.same((await api.post('/realm/playgrounds', params)).body, { result: 'error', msg, code: 'BAD_REQUEST' }, msg);
  t.equal((await api.as(ann).post('/realm/playgrounds', { ...python, name: 'Mine' })).body.msg, 'Must be an organization administrator');
  t.equal((await api.post('/realm/playgrounds', { name: 'x', pygments_language: 'x' })).body.code, 'REQUEST_VARIABLE_MISSING');

  t.same((await api.delete('/realm/playgrounds/1')).body, { result: 'success', msg: '' });
  t.same((await api.delete('/realm/playgrounds/1')).body, { result: 'error', msg: 'Invalid playground', code: 'BAD_REQUEST' });
  t.equal((await api.as(ann).delete(`/realm/playgrounds/${rust}`)).body.msg, 'Must be an organization administrator');

  const pythonView = { id: 1, name: 'Python playground', pygments_language: 'Python', url_template: python.url_template };
  const rustView = { id: rust, name: 'Rust', pygments_language: 'Rust', url_template: 'https://play.example.com/{?code}' };
  const events = await drain(api.as(ann), queueId);
  t.same(events.map((event) => event.realm_playgrounds), [[pythonView], [pythonView, rustView], [rustView]], 'the whole list after each change');
  t.ok(events.every((event) => event.type === 'realm_playgrounds'));

  await first.stop();
  const second = await startTestServer(t, { dataDir });
  t.same((await second.api.register({ fetch_event_types: ['realm_playgrounds'] })).body.realm_playgrounds, [rustView], 'replayed after a restart');
  t.equal((await second.api.post('/realm/playgrounds', { ...python, name: 'Again' })).body.id, 3, 'ids are not reused');
});

t.test('/realm/playgrounds: an organization holds a bounded number of them, each of bounded size', async (t) => {
  const { api } = await startTestServer(t, { rateLimit: null });
  const playground = (n: number) => ({ name: `P${n}`, pygments_language: 'Python', url_template: 'https://python.example.com?code={code}' });
  t.equal((await api.post('/realm/playgrounds', { ...playground(0), name: 'x'.repeat(1001) })).body.msg, 'Ensure this value has at most 1000 characters (it has 1001).');
  const long = `https://python.example.com/${'x'.repeat(1000)}?code={code}`;
  t.equal((await api.post('/realm/playgrounds', { ...playground(0), url_template: long })).body.msg, `Ensure this value has at most 1000 characters (it has ${long.length}).`);
  for (let n = 0; n < MAX_PLAYGROUNDS; n++) t.equal((await api.post('/realm/playgrounds', playground(n))).status, 200);
  const refused = await api.post('/realm/playgrounds', playground(MAX_PLAYGROUNDS));
  t.same(refused.body, { result: 'error', msg: `This organization already has ${MAX_PLAYGROUNDS} playgrounds, the most it may have`, code: 'BAD_REQUEST' });
  t.equal((await api.delete('/realm/playgrounds/1')).status, 200);
  t.equal((await api.post('/realm/playgrounds', playground(MAX_PLAYGROUNDS))).status, 200, 'a removed one frees its place');
});

t.test('/channel_folders: administrators arrange channels in folders, everyone is told, a restart keeps them', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir, maxChannelFoldersPerRealm: 3 });
  const { api } = first;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const { queueId } = await api.as(ann).register({ event_types: ['channel_folder', 'stream'] });
  const general = await channel(api, 'general', [1, ann.userId]);

  const created = await api.post('/channel_folders/create', { name: 'Teams', description: 'By **team**' });
  t.same(created.body, { result: 'success', msg: '', channel_folder_id: 1 });
  const projects = (await api.post('/channel_folders/create', { name: 'Projects' })).body.channel_folder_id;
  const refusals: [Record<string, unknown>, string][] = [
    [{ name: 'teams' }, 'Channel folder name already in use'],
    [{ name: '  ' }, "Channel folder name can't be empty."],
    [{ name: 'Bad\u202Ename' }, 'Invalid character in channel folder name, at position 4.'],
    [{ name: 'x'.repeat(61) }, 'name is too long (limit: 60 characters)'],
    [{ name: 'Long', description: 'x'.repeat(1025) }, 'description is too long (limit: 1024 characters)'],
  ];
  for (const [params, msg] of refusals) t.same((await api.post('/channel_folders/create', params)).body, { result: 'error', msg, code: 'BAD_REQUEST' }, msg);
  t.equal((await api.as(ann).post('/channel_folders/create', { name: 'Mine' })).body.msg, 'Must be an organization administrator');

  t.equal((await api.patch(`/streams/${general}`, { folder_id: 1 })).status, 200, 'a channel goes in a folder');
  t.equal((await api.get(`/streams/${general}`)).body.stream.folder_id, 1);
  t.same((await api.patch('/channel_folders/1', { is_archived: true })).body.msg, 'You need to remove all the channels from this folder to archive it.');
  t.equal((await api.patch(`/streams/${general}`, { folder_id: null })).status, 200, 'and out of it');
  t.same((await api.patch('/channel_folders/1', { name: 'Groups', description: 'By group', is_archived: true })).body, { result: 'success', msg: '' });
  t.equal((await api.patch(`/streams/${general}`, { folder_id: 1 })).body.msg, 'Invalid channel folder ID', 'not into an archived folder');
  t.equal((await api.patch('/channel_folders/99', { name: 'x' })).body.msg, 'Invalid channel folder ID');
  t.same((await api.patch('/channel_folders', { order: [1] })).body, { result: 'error', msg: 'Invalid order mapping', code: 'BAD_REQUEST' }, 'every folder, archived ones too');
  t.equal((await api.patch('/channel_folders', { order: [projects, 1] })).status, 200);
  t.equal((await api.as(ann).patch('/channel_folders', { order: [1, projects] })).body.msg, 'Must be an organization administrator');
  const filed = (await api.post('/channels/create', { name: 'roadmap', subscribers: [1], folder_id: projects })).body.id;
  t.equal((await api.get(`/streams/${filed}`)).body.stream.folder_id, projects, 'a new channel is made in a folder');
  t.equal((await api.post('/channels/create', { name: 'elsewhere', subscribers: [1], folder_id: 1 })).body.msg, 'Invalid channel folder ID');
  const created3 = await api.post('/channel_folders/create', { name: 'Third' });
  t.equal(created3.status, 200);
  t.equal((await api.post('/channel_folders/create', { name: 'Fourth' })).body.msg, 'This organization already has 3 channel folders, the most it may have');

  const groups = { id: 1, name: 'Groups', description: 'By group', rendered_description: '<p>By group</p>', creator_id: 1, is_archived: true };
  const listed = (await api.as(ann).get('/channel_folders')).body.channel_folders;
  t.match(listed, [{ id: projects, name: 'Projects', order: 0, is_archived: false }, { id: 3, name: 'Third', order: 2 }], 'archived folders only when asked for');
  t.equal(listed.length, 2);
  t.match((await api.as(ann).get('/channel_folders', { include_archived: true })).body.channel_folders[1], { ...groups, order: 1 });

  const events = await drain(api.as(ann), queueId);
  t.match(events.filter((event) => event.type === 'channel_folder'), [
    { op: 'add', channel_folder: { id: 1, name: 'Teams', description: 'By **team**', rendered_description: '<p>By <strong>team</strong></p>', order: 0, is_archived: false } },
    { op: 'add', channel_folder: { id: projects, order: 1 } },
    { op: 'update', channel_folder_id: 1, data: { name: 'Groups', description: 'By group', rendered_description: '<p>By group</p>', is_archived: true } },
    { op: 'reorder', order: [projects, 1] },
    { op: 'add', channel_folder: { id: 3, order: 2 } },
  ]);
  t.match(events.filter((event) => event.type === 'stream' && event.property === 'folder_id').map((event) => event.value), [1, null]);

  await first.stop();
  const second = await startTestServer(t, { dataDir });
  t.match((await second.api.register({ fetch_event_types: ['channel_folders'] })).body.channel_folders, [{ id: projects, order: 0 }, { ...groups, order: 1 }, { id: 3 }],
    'replayed after a restart, archived ones included');
});

t.test('/navigation_views: a user pins built-in views and saves its own, its clients are told, a restart keeps them', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir, maxNavigationViewsPerUser: 3 });
  const { api } = first;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const { queueId } = await api.register({ event_types: ['navigation_view'] });
  const alerted = encodeURIComponent('narrow/is/alerted');

  t.same((await api.post('/navigation_views', { fragment: 'inbox', is_pinned: false })).body, { result: 'success', msg: '' });
  t.equal((await api.post('/navigation_views', { fragment: ' narrow/is/alerted ', name: ' Alerts ', is_pinned: true })).status, 200, 'trimmed');
  const refusals: [Record<string, unknown>, string][] = [
    [{ fragment: 'recent', name: 'Mine', is_pinned: true }, 'Built-in views cannot have a custom name.'],
    [{ fragment: 'narrow/is/dm', is_pinned: true }, 'Custom views must have a valid name.'],
    [{ fragment: '  ', is_pinned: true }, 'fragment cannot be blank'],
    [{ fragment: 'inbox', is_pinned: true }, 'Navigation view already exists.'],
    [{ fragment: 'narrow/is/dm', name: 'Alerts', is_pinned: true }, 'Navigation view already exists.'],
    [{ fragment: 'narrow/is/dm', name: 'x'.repeat(1001), is_pinned: true }, 'name is too long (limit: 1000 characters)'],
  ];
  for (const [params, msg] of refusals) t.same((await api.post('/navigation_views', params)).body, { result: 'error', msg, code: 'BAD_REQUEST' }, msg);
  t.equal((await api.post('/navigation_views', { fragment: 'narrow/is/dm' })).body.code, 'REQUEST_VARIABLE_MISSING');

  t.same((await api.patch(`/navigation_views/${alerted}`, { name: 'Watched', is_pinned: false })).body, { result: 'success', msg: '' });
  t.equal((await api.patch('/navigation_views/inbox', { name: 'Box' })).body.msg, 'Built-in views cannot have a custom name.');
  const missing = await api.patch('/navigation_views/nowhere', { is_pinned: true });
  t.same([missing.status, missing.body.msg], [404, 'Navigation view does not exist.']);
  t.same((await api.as(ann).get('/navigation_views')).body.navigation_views, [], 'each user has its own');
  t.same((await api.delete('/navigation_views/inbox')).body, { result: 'success', msg: '' });
  t.equal((await api.delete('/navigation_views/inbox')).status, 404);
  t.equal((await api.post('/navigation_views', { fragment: 'feed', is_pinned: true })).status, 200);
  t.equal((await api.post('/navigation_views', { fragment: 'drafts', is_pinned: true })).status, 200);
  t.equal((await api.post('/navigation_views', { fragment: 'recent', is_pinned: true })).body.msg, 'You already have 3 navigation views, the most you may have');

  const watched = { fragment: 'narrow/is/alerted', is_pinned: false, name: 'Watched' };
  t.same((await api.get('/navigation_views')).body.navigation_views, [watched, { fragment: 'feed', is_pinned: true, name: null }, { fragment: 'drafts', is_pinned: true, name: null }]);
  t.same((await drain(api, queueId)).map(({ id: _id, ...event }) => event), [
    { type: 'navigation_view', op: 'add', navigation_view: { fragment: 'inbox', is_pinned: false, name: null } },
    { type: 'navigation_view', op: 'add', navigation_view: { fragment: 'narrow/is/alerted', is_pinned: true, name: 'Alerts' } },
    { type: 'navigation_view', op: 'update', fragment: 'narrow/is/alerted', data: { is_pinned: false, name: 'Watched' } },
    { type: 'navigation_view', op: 'remove', fragment: 'inbox' },
    { type: 'navigation_view', op: 'add', navigation_view: { fragment: 'feed', is_pinned: true, name: null } },
    { type: 'navigation_view', op: 'add', navigation_view: { fragment: 'drafts', is_pinned: true, name: null } },
  ]);

  await first.stop();
  const second = await startTestServer(t, { dataDir });
  t.same((await second.api.register({ fetch_event_types: ['navigation_views'] })).body.navigation_views[0], watched, 'replayed after a restart');
});

t.test('POST /realm/deactivate: an owner closes the organization, its clients are told, every request is refused', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir });
  const { api } = first;
  const ann = await api.createUser('ann@example.com', 'Ann');
  t.equal((await api.patch(`/users/${ann.userId}`, { role: 200 })).status, 200);
  const { queueId } = await api.register({ event_types: ['realm'] });
  const refused = await api.as(ann).post('/realm/deactivate');
  t.same([refused.status, refused.body], [400, { result: 'error', msg: 'Must be an organization owner', code: 'UNAUTHORIZED_PRINCIPAL' }], 'an administrator may not');

  const held = api.get('/events', { queue_id: queueId, last_event_id: -1 });
  t.same((await api.post('/realm/deactivate')).body, { result: 'success', msg: '' });
  const told = await held;
  t.match(told.body.events, [{ type: 'realm', op: 'deactivated', realm_id: first.server.runtime.realmStates()[0]!.realmId }], 'the held poll ends with the news');
  const after = await api.get('/users/me');
  t.same([after.status, after.body.code], [401, 'REALM_DEACTIVATED']);
  t.equal((await api.get('/events', { queue_id: queueId, last_event_id: told.body.events[0].id })).status, 401, 'so is the next poll');
  t.equal((await api.as(null).post('/fetch_api_key', { username: 'ann@example.com', password: 'a-Strong-passw0rd-for-tests' })).status, 401, 'and a login');

  await first.stop();
  const second = await startTestServer(t, { dataDir });
  t.equal((await second.api.as(first.owner).get('/users/me')).status, 401, 'still closed after a restart');
});

t.test('deactivate-realm: the operator closes an organization', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir });
  await first.stop();
  const config = defaultConfig({ dataDir, port: 0 });
  await t.rejects(realmCommands['deactivate-realm']!.run(config, { subdomain: 'nowhere' }, []), /no organization with subdomain 'nowhere'/);
  await realmCommands['deactivate-realm']!.run(config, { subdomain: '' }, []);
  const second = await startTestServer(t, { dataDir });
  const after = await second.api.as(first.owner).get('/users/me');
  t.same([after.status, after.body.code], [401, 'REALM_DEACTIVATED']);
});

t.test('GET /export/realm/consents: administrators see who lets them export private data, and are told of changes', async (t) => {
  const { api } = await startTestServer(t);
  const { queueId } = await api.register({ event_types: ['realm_export_consent'] });
  const ann = await api.createUser('ann@example.com', 'Ann');
  const memberQueue = (await api.as(ann).register({ event_types: ['realm_export_consent'] })).queueId;
  await api.post('/bots', { full_name: 'Helper', short_name: 'helper' });
  t.equal((await api.as(ann).patch('/settings', { allow_private_data_export: true })).status, 200);
  t.same((await api.get('/export/realm/consents')).body, {
    result: 'success', msg: '', export_consents: [{ user_id: 1, consented: false }, { user_id: ann.userId, consented: true }],
  }, 'people only');
  t.same((await api.as(ann).get('/export/realm/consents')).body, { result: 'error', msg: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' });
  t.same((await drain(api, queueId)).map(({ id: _id, ...event }) => event), [
    { type: 'realm_export_consent', user_id: ann.userId, consented: false },
    { type: 'realm_export_consent', user_id: ann.userId, consented: true },
  ], 'on joining, and on each change');
  t.same(await drain(api.as(ann), memberQueue), [], 'members are not told');
});

t.test('POST /users/me/onboarding_steps: a notice seen once is not shown again, on any client', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir });
  const { api } = first;
  const registered = (await api.register({ fetch_event_types: ['onboarding_steps'], event_types: ['onboarding_steps'] })).body;
  const names = registered.onboarding_steps.map((step: { name: string }) => step.name);
  t.ok(names.includes('intro_inbox_view_modal') && !names.includes('navigation_tour_video'), 'every notice but the tour video, which this server has not');
  t.ok(registered.onboarding_steps.every((step: { type: string }) => step.type === 'one_time_notice'));
  t.equal(registered.navigation_tour_video_url, null);

  t.same((await api.post('/users/me/onboarding_steps', { onboarding_step: 'intro_inbox_view_modal' })).body, { result: 'success', msg: '' });
  t.equal((await api.post('/users/me/onboarding_steps', { onboarding_step: 'intro_inbox_view_modal' })).status, 200, 'twice is fine');
  t.same((await api.post('/users/me/onboarding_steps', { onboarding_step: 'intro_tour' })).body,
    { result: 'error', msg: 'Unknown onboarding_step: intro_tour', code: 'BAD_REQUEST' });
  const bot = (await api.post('/bots', { full_name: 'Helper', short_name: 'helper' })).body;
  const botEmail = (await api.get(`/users/${bot.user_id}`)).body.user.email;
  t.equal((await api.as({ email: botEmail, key: bot.api_key }).post('/users/me/onboarding_steps', { onboarding_step: 'intro_inbox_view_modal' })).body.msg,
    'This endpoint does not accept bot requests.');

  const remaining = names.filter((name: string) => name !== 'intro_inbox_view_modal');
  const events = await drain(api, registered.queue_id);
  t.same(events.map((event) => (event.onboarding_steps as { name: string }[]).map((step) => step.name)), [remaining], 'one event, with what is left to show');

  await first.stop();
  const second = await startTestServer(t, { dataDir });
  t.same((await second.api.register({ fetch_event_types: ['onboarding_steps'] })).body.onboarding_steps.map((step: { name: string }) => step.name), remaining,
    'still seen after a restart');
});

t.test('/realm/domains: owners limit who may join to addresses of their domains', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir, maxRealmDomains: 2 });
  const { api } = first;
  const ann = await api.createUser('ann@example.com', 'Ann');
  t.equal((await api.patch(`/users/${ann.userId}`, { role: 200 })).status, 200);
  const { queueId } = await api.as(ann).register({ event_types: ['realm_domains', 'realm'] });

  t.same((await api.post('/realm/domains', { domain: ' Example.COM ', allow_subdomains: false })).body, { result: 'success', msg: '', new_domain: [1, 'example.com'] });
  t.equal((await api.post('/realm/domains', { domain: 'example.com', allow_subdomains: true })).body.msg, 'The domain example.com is already a part of your organization.');
  t.match((await api.post('/realm/domains', { domain: 'bad domain', allow_subdomains: true })).body.msg, /^Invalid domain: /);
  t.same((await api.as(ann).post('/realm/domains', { domain: 'ann.test', allow_subdomains: true })).body,
    { result: 'error', msg: 'Must be an organization owner', code: 'UNAUTHORIZED_PRINCIPAL' }, 'an administrator may not');
  t.equal((await api.post('/realm/domains', { domain: 'corp.test', allow_subdomains: false })).status, 200);
  t.equal((await api.post('/realm/domains', { domain: 'third.test', allow_subdomains: false })).body.msg, 'This organization already has 2 domains, the most it may have');
  t.same((await api.patch('/realm/domains/corp.test', { allow_subdomains: true })).body, { result: 'success', msg: '' });
  t.equal((await api.patch('/realm/domains/nowhere.test', { allow_subdomains: true })).body.msg, 'No entry found for domain nowhere.test.');
  t.same((await api.as(ann).get('/realm/domains')).body.domains, [{ domain: 'example.com', allow_subdomains: false }, { domain: 'corp.test', allow_subdomains: true }]);

  t.equal((await api.post('/users', { email: 'outsider@else.test', password: 'a-Strong-passw0rd-for-tests', full_name: 'Out' })).status, 200, 'unrestricted until the setting is on');
  t.equal((await api.patch('/realm', { emails_restricted_to_domains: true })).status, 200);
  t.equal((await api.post('/users', { email: 'other@else.test', password: 'a-Strong-passw0rd-for-tests', full_name: 'Other' })).body.msg, "Email 'other@else.test' not allowed in this organization");
  t.equal((await api.post('/users', { email: 'dev@eu.corp.test', password: 'a-Strong-passw0rd-for-tests', full_name: 'Dev' })).status, 200, 'a subdomain where allowed');
  t.equal((await api.post('/users', { email: 'sub@eu.example.com', password: 'a-Strong-passw0rd-for-tests', full_name: 'Sub' })).status, 400, 'not where not');
  const refused = await api.post('/invites', { invitee_emails: 'new@example.com, x+tag@example.com, y@else.test', stream_ids: [] });
  t.match(refused.body, { code: 'INVITATION_FAILED', msg: "Some emails did not validate, so we didn't send any invitations.", sent_invitations: false,
    errors: [['x+tag@example.com', 'Email addresses containing + are not allowed.', false], ['y@else.test', 'Outside your domain.', false]] });
  const link = (await api.post('/invites/multiuse', {})).body.invite_link as string;
  const key = /\/join\/([a-z0-9]+)\/$/.exec(link)![1]!;
  const joined = await api.as(null).post(`/invites/join/${key}`, { email: 'visitor@else.test', full_name: 'Visitor', password: 'a-Strong-passw0rd-for-tests' });
  t.equal(joined.body.msg, 'Your email address, visitor@else.test, is not in one of the domains that are allowed to register for accounts in this organization.');

  t.equal((await api.delete('/realm/domains/example.com')).status, 200);
  t.same((await api.delete('/realm/domains/corp.test')).body, { result: 'success', msg: '' });
  t.equal((await api.delete('/realm/domains/corp.test')).body.msg, 'No entry found for domain corp.test.');
  const events = (await drain(api.as(ann), queueId)).map(({ id: _id, ...event }) => event);
  t.same(events, [
    { type: 'realm_domains', op: 'add', realm_domain: { domain: 'example.com', allow_subdomains: false } },
    { type: 'realm_domains', op: 'add', realm_domain: { domain: 'corp.test', allow_subdomains: false } },
    { type: 'realm_domains', op: 'change', realm_domain: { domain: 'corp.test', allow_subdomains: true } },
    { type: 'realm', op: 'update', property: 'emails_restricted_to_domains', value: true },
    { type: 'realm_domains', op: 'remove', domain: 'example.com' },
    { type: 'realm_domains', op: 'remove', domain: 'corp.test' },
    { type: 'realm', op: 'update', property: 'emails_restricted_to_domains', value: false },
  ], 'removing the last one lifts the restriction');

  t.equal((await api.post('/realm/domains', { domain: 'kept.test', allow_subdomains: false })).status, 200);
  await first.stop();
  const second = await startTestServer(t, { dataDir });
  t.same((await second.api.register({ fetch_event_types: ['realm_domains'] })).body.realm_domains, [{ domain: 'kept.test', allow_subdomains: false }], 'kept after a restart');
});

t.test('the settings of feature levels 385-411: a user and the defaults for new users', async (t) => {
  const { api } = await startTestServer(t);
  const newer = { web_left_sidebar_show_channel_folders: false, web_left_sidebar_unreads_count_summary: false, resolved_topic_notice_auto_read_policy: 'never' };
  const before = (await api.register({ fetch_event_types: ['user_settings'] })).body.user_settings;
  t.match(before, { web_left_sidebar_show_channel_folders: true, web_left_sidebar_unreads_count_summary: true, resolved_topic_notice_auto_read_policy: 'except_followed' });
  t.same((await api.patch('/settings', newer)).body, { result: 'success', msg: '' }, 'none ignored');
  t.match((await api.register({ fetch_event_types: ['user_settings'] })).body.user_settings, newer);
  t.equal((await api.patch('/settings', { resolved_topic_notice_auto_read_policy: 'sometimes' })).status, 400);
  t.same((await api.patch('/realm/user_settings_defaults', newer)).body, { result: 'success', msg: '' });
  const ann = await api.createUser('ann@example.com', 'Ann');
  t.match((await api.as(ann).register({ fetch_event_types: ['user_settings'] })).body.user_settings, newer, 'a new user starts from the defaults');
});

t.test('GET /streams include_can_access_content: the channels whose messages the caller may read', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const gus = await api.createUser('gus@example.com', 'Gus');
  t.equal((await api.patch(`/users/${gus.userId}`, { role: 600 })).status, 200);
  await channel(api, 'open', [1]);
  await channel(api, 'closed', [1], { invite_only: true });
  await channel(api, 'joinable', [1], { invite_only: true, can_subscribe_group: { direct_members: [ann.userId], direct_subgroups: [] } });
  await channel(api, 'guests', [gus.userId]);
  const names = async (client: typeof api) =>
    ((await client.get('/streams', { include_public: false, include_subscribed: false, include_can_access_content: true })).body.streams as { name: string }[]).map((s) => s.name).sort();
  t.same(await names(api.as(ann)), ['guests', 'joinable', 'open'], 'public ones, and a private one it may join');
  t.same(await names(api.as(gus)), ['guests'], 'a guest: only where subscribed');
});

t.test('GET /api/v1/user_uploads/...: a short-lived link to a file that needs no credentials', async (t) => {
  const { api, server } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(Buffer.from('the plan'))]), 'plan.txt');
  const auth = `Basic ${Buffer.from(`${api.credentials!.email}:${api.credentials!.key}`).toString('base64')}`;
  const uploaded = await (await fetch(`${api.baseUrl}/api/v1/user_uploads`, { method: 'POST', headers: { Authorization: auth }, body: form })).json();
  const path = (uploaded.url as string).replace(/^\/user_uploads/, '');

  const linked = await api.get(`/user_uploads${path}`);
  t.match(linked.body, { result: 'success', msg: '', url: /^\/user_uploads\/temporary\/[^/]+\/plan\.txt$/ });
  const fetched = await fetch(`${api.baseUrl}${linked.body.url}`);
  t.same([fetched.status, await fetched.text()], [200, 'the plan'], 'the link works without credentials');
  t.equal((await api.as(ann).get(`/user_uploads${path}`)).status, 404, 'only for those who may read the file');
  const forged = linked.body.url.replace(/temporary\/([^.]+)\.[^/]+\//, 'temporary/$1.AAAA/');
  t.equal((await fetch(`${api.baseUrl}${forged}`)).status, 404, 'a forged link does not');
  const clock = server.runtime.clock;
  const now = clock.now;
  clock.now = () => now() + 61_000;
  t.equal((await fetch(`${api.baseUrl}${linked.body.url}`)).status, 404, 'nor one older than a minute');
});

t.test('/default_stream_groups: administrators group default channels; everyone but guests is told, a restart keeps them', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir, maxDefaultChannelGroups: 2 });
  const { api } = first;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const gus = await api.createUser('gus@example.com', 'Gus');
  t.equal((await api.patch(`/users/${gus.userId}`, { role: 600 })).status, 200);
  const [design, ops, general] = [await channel(api, 'design', [1]), await channel(api, 'ops', [1]), await channel(api, 'general', [1])];
  t.equal((await api.post('/default_streams', { stream_id: general })).status, 200);
  const member = (await api.as(ann).register({ event_types: ['default_stream_groups'] })).queueId;
  const guest = (await api.as(gus).register({ event_types: ['default_stream_groups'] })).queueId;

  t.same((await api.post('/default_stream_groups/create', { group_name: 'Makers', description: 'Build things', stream_names: ['design'] })).body, { result: 'success', msg: '' });
  const refusals: [Record<string, unknown>, string][] = [
    [{ group_name: 'Makers', description: '', stream_names: [] }, "Default channel group 'Makers' already exists"],
    [{ group_name: ' ', description: '', stream_names: [] }, "Invalid default channel group name ' '"],
    [{ group_name: 'x'.repeat(61), description: '', stream_names: [] }, 'Default channel group name too long (limit: 60 characters)'],
    [{ group_name: 'Core', description: '', stream_names: ['general'] }, "'general' is a default channel and cannot be added to 'Core'"],
    [{ group_name: 'Core', description: '', stream_names: ['nowhere'] }, "Invalid channel name 'nowhere'"],
  ];
  for (const [params, msg] of refusals) t.same((await api.post('/default_stream_groups/create', params)).body, { result: 'error', msg, code: 'BAD_REQUEST' }, msg);
  t.equal((await api.as(ann).post('/default_stream_groups/create', { group_name: 'Mine', description: '', stream_names: [] })).body.msg, 'Must be an organization administrator');

  t.equal((await api.patch('/default_stream_groups/1/streams', { op: 'add', stream_names: ['ops'] })).status, 200);
  t.equal((await api.patch('/default_stream_groups/1/streams', { op: 'add', stream_names: ['ops'] })).body.msg, "Channel 'ops' is already present in default channel group 'Makers'");
  t.equal((await api.patch('/default_stream_groups/1/streams', { op: 'remove', stream_names: ['design'] })).status, 200);
  t.equal((await api.patch('/default_stream_groups/1/streams', { op: 'remove', stream_names: ['design'] })).body.msg, "Channel 'design' is not present in default channel group 'Makers'");
  t.equal((await api.patch('/default_stream_groups/1', {})).body.msg, 'You must pass "new_description" or "new_group_name".');
  t.equal((await api.patch('/default_stream_groups/1', { new_group_name: 'Builders', new_description: 'Build and run' })).status, 200);
  t.equal((await api.post('/default_stream_groups/create', { group_name: 'Second', description: '', stream_names: ['design'] })).status, 200);
  t.equal((await api.post('/default_stream_groups/create', { group_name: 'Third', description: '', stream_names: [] })).body.msg,
    'This organization already has 2 default channel groups, the most it may have');
  t.same((await api.delete('/default_stream_groups/2')).body, { result: 'success', msg: '' });
  t.equal((await api.delete('/default_stream_groups/2')).body.msg, "Default channel group with id '2' does not exist.");

  const builders = { id: 1, name: 'Builders', description: 'Build and run', streams: [ops] };
  const lists = (await drain(api.as(ann), member)).map((event) => event.default_stream_groups);
  t.same(lists, [
    [{ id: 1, name: 'Makers', description: 'Build things', streams: [design] }],
    [{ id: 1, name: 'Makers', description: 'Build things', streams: [design, ops] }],
    [{ id: 1, name: 'Makers', description: 'Build things', streams: [ops] }],
    [builders],
    [builders, { id: 2, name: 'Second', description: '', streams: [design] }],
    [builders],
  ], 'the whole list after each change');
  t.same(await drain(api.as(gus), guest), [], 'guests are not told');

  await first.stop();
  const second = await startTestServer(t, { dataDir });
  t.same((await second.api.register({ fetch_event_types: ['default_stream_groups'] })).body.realm_default_stream_groups, [builders], 'kept after a restart');
});

t.test('/reminders: the notification bot reminds a user of a message at the time it asked for', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir, maxRemindersPerUser: 2 });
  const { api } = first;
  let now = Math.ceil(Date.now() / 1000) * 1000;
  first.server.runtime.clock.now = () => now;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  await channel(api, 'plans', [1, ann.userId]);
  const target = await sendToChannel(api.as(ann), 'plans', 'launch', 'Ship it **Friday**');
  const hidden = await sendDirect(api.as(bob), [1], 'between us');
  const { queueId } = await api.as(ann).register({ event_types: ['reminders', 'message', 'scheduled_messages'] });
  const at = now / 1000 + 3600;

  const set = await api.as(ann).post('/reminders', { message_id: target, scheduled_delivery_timestamp: at, note: 'check the date' });
  t.same(set.body, { result: 'success', msg: '', reminder_id: 1 });
  t.equal((await api.as(ann).post('/reminders', { message_id: target, scheduled_delivery_timestamp: now / 1000 - 1 })).body.msg, 'Scheduled delivery time must be in the future.');
  t.equal((await api.as(ann).post('/reminders', { message_id: hidden, scheduled_delivery_timestamp: at })).body.msg, 'Invalid message(s)', 'only a message it may read');
  t.equal((await api.as(ann).post('/reminders', { message_id: target, scheduled_delivery_timestamp: at, note: 'x'.repeat(1001) })).body.msg, 'note is too long (limit: 1000 characters)');
  const second = (await api.as(ann).post('/reminders', { message_id: target, scheduled_delivery_timestamp: at + 60 })).body.reminder_id;
  t.equal((await api.as(ann).post('/reminders', { message_id: target, scheduled_delivery_timestamp: at })).body.msg, 'You already have 2 reminders, the most you may have');

  const listed = (await api.as(ann).get('/reminders')).body.reminders;
  t.match(listed[0], { reminder_id: 1, type: 'private', to: [ann.userId], scheduled_delivery_timestamp: at, failed: false, reminder_target_message_id: target });
  t.match(listed[0].content, /You requested a reminder for #\*\*plans>launch@\d+\*\*\. Note:\n> check the date/);
  t.match(listed[0].content, /```quote\nShip it \*\*Friday\*\*\n```/);
  t.same((await api.as(ann).get('/scheduled_messages')).body.scheduled_messages, [], 'not among scheduled messages');
  t.equal((await api.as(ann).delete('/scheduled_messages/1')).status, 404, 'nor deleted as one');
  t.equal((await api.delete('/reminders/1')).status, 404, 'another user\'s is not there');
  t.same((await api.as(ann).delete(`/reminders/${second}`)).body, { result: 'success', msg: '' });
  t.same([(await api.as(ann).delete(`/reminders/${second}`)).status, (await api.as(ann).delete(`/reminders/${second}`)).body.msg], [404, 'Reminder does not exist']);

  now += 3600 * 1000;
  first.server.runtime.scheduled.wake();
  await new Promise((resolve) => setImmediate(resolve));
  await first.server.runtime.settled();
  const events = await drain(api.as(ann), queueId);
  t.match(events.filter((event) => event.type === 'reminders'), [
    { op: 'add', reminders: [{ reminder_id: 1 }] }, { op: 'add', reminders: [{ reminder_id: second }] },
    { op: 'remove', reminder_id: second }, { op: 'remove', reminder_id: 1 },
  ]);
  t.notOk(events.some((event) => event.type === 'scheduled_messages'), 'no scheduled-message events');
  const sent = events.find((event) => event.type === 'message')!.message as Record<string, any>;
  t.match(sent, { type: 'private', sender_full_name: 'Notification Bot' });
  t.match(sent.content, /check the date/);
  t.same(sent.display_recipient.map((person: { full_name: string }) => person.full_name).sort(), ['Ann', 'Notification Bot']);
  t.same((await api.as(ann).get('/reminders')).body.reminders, [], 'delivered');

  await api.as(ann).post('/reminders', { message_id: target, scheduled_delivery_timestamp: now / 1000 + 60 });
  await first.stop();
  const again = await startTestServer(t, { dataDir });
  t.match((await again.api.as(ann).register({ fetch_event_types: ['reminders'] })).body.reminders, [{ reminder_target_message_id: target }], 'kept after a restart');
  const dm = await again.api.as(ann).get('/messages', { anchor: 'newest', num_before: 5, num_after: 0, narrow: [{ operator: 'is', operand: 'dm' }] });
  t.match(dm.body.messages.at(-1), { sender_full_name: 'Notification Bot' }, 'the reminder stays in its direct messages');
});

t.test('GET /calls/bigbluebutton/create: a signed call link, which makes the meeting on the configured server', async (t) => {
  const unset = await startTestServer(t);
  t.same((await unset.api.get('/calls/bigbluebutton/create', { meeting_name: 'Standup' })).body,
    { result: 'error', msg: 'BigBlueButton is not configured.', code: 'BAD_REQUEST' }, 'a clear error without a server');

  // A stand-in for the BigBlueButton server: it checks the checksum of every call, as the real one does.
  const secret = 'bbb-shared-secret';
  const calls: URL[] = [];
  const bbb = createServer((request, response) => {
    const url = new URL(request.url!, 'http://bbb');
    calls.push(url);
    const call = url.pathname.replace('/bigbluebutton/api/', '');
    const query = url.search.slice(1).replace(/&checksum=[0-9a-f]+$/, '');
    const valid = url.searchParams.get('checksum') === createHash('sha256').update(call + query + secret).digest('hex');
    response.end(valid ? '<response><returncode>SUCCESS</returncode><createTime>1700000000000</createTime></response>' : '<response><returncode>FAILED</returncode></response>');
  });
  await new Promise<void>((resolve) => bbb.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => bbb.close(() => resolve())));
  const base = `http://127.0.0.1:${(bbb.address() as AddressInfo).port}/bigbluebutton/`;
  const { api } = await startTestServer(t, { bigBlueButton: { url: base, secret } });
  const ann = await api.createUser('ann@example.com', 'Ann');

  const created = await api.get('/calls/bigbluebutton/create', { meeting_name: 'Standup', voice_only: true });
  t.match(created.body, { result: 'success', url: /^\/calls\/bigbluebutton\/join\?bigbluebutton=[\w-]+\.[\w-]+$/ });
  const basic = (who: { email: string; key: string }) => ({ Authorization: `Basic ${Buffer.from(`${who.email}:${who.key}`).toString('base64')}` });
  const join = await fetch(`${api.baseUrl}${created.body.url}`, { headers: basic(api.credentials!), redirect: 'manual' });
  t.equal(join.status, 302);
  const location = new URL(join.headers.get('location')!);
  t.equal(`${location.origin}${location.pathname}`, `${base}api/join`);
  t.match(Object.fromEntries(location.searchParams), { role: 'MODERATOR', fullName: 'Owner', createTime: '1700000000000' }, 'its creator moderates');
  t.match(Object.fromEntries(calls[0]!.searchParams), { name: 'Standup', lockSettingsDisableCam: 'true', meetingID: /^zulip-\d{12}$/ }, 'the meeting was made first');
  const viewer = await fetch(`${api.baseUrl}${created.body.url}`, { headers: basic(ann), redirect: 'manual' });
  t.equal(new URL(viewer.headers.get('location')!).searchParams.get('role'), 'VIEWER', 'anyone else joins as a viewer');

  const tampered = created.body.url.replace(/bigbluebutton=[\w-]+/, `bigbluebutton=${Buffer.from('{"meeting_id":"other"}').toString('base64url')}`);
  const refused = await fetch(`${api.baseUrl}${tampered}`, { redirect: 'manual' });
  t.same([refused.status, (await refused.json()).msg], [400, 'Invalid signature.']);
});

t.test('PATCH /users/{id} new_email: the server-level permission changes a user\'s address at once', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir });
  const ann = await first.api.createUser('ann@example.com', 'Ann');
  await first.stop();
  const config = defaultConfig({ dataDir, port: 0 });
  process.env.CHAT_PASSWORD = 'an-Admin-passw0rd-for-tests';
  t.teardown(() => delete process.env.CHAT_PASSWORD);
  await operatorCommands['create-user']!.run(config, { email: 'admin@example.com', 'full-name': 'Admin', role: 'administrator' }, []);
  const { api } = await startTestServer(t, { dataDir });
  const admin = { email: 'admin@example.com', key: (await api.as(null).post('/fetch_api_key', { username: 'admin@example.com', password: 'an-Admin-passw0rd-for-tests' })).body.api_key };
  const { queueId } = await api.as(ann).register({ event_types: ['realm_user'] });

  t.same((await api.as(admin).patch(`/users/${ann.userId}`, { new_email: 'ann@new.example.com' })).body,
    { result: 'error', msg: 'User not authorized to change user emails', code: 'UNAUTHORIZED_PRINCIPAL' }, 'an administrator without the permission');
  t.same((await api.patch(`/users/${ann.userId}`, { new_email: 'ann@new.example.com' })).body, { result: 'success', msg: '' }, 'the first owner holds it');
  t.equal((await api.as(null).post('/fetch_api_key', { username: 'ann@new.example.com', password: 'a-Strong-passw0rd-for-tests' })).status, 200, 'she logs in with it');
  t.equal((await api.patch(`/users/${ann.userId}`, { new_email: 'admin@example.com' })).body.msg, "Email 'admin@example.com' already in use");
  t.equal((await api.patch(`/users/${ann.userId}`, { new_email: 'not an address' })).status, 400);
  t.match(await drain(api.as({ ...ann, email: 'ann@new.example.com' }), queueId), [{ type: 'realm_user', op: 'update', person: { user_id: ann.userId, delivery_email: 'ann@new.example.com' } }]);
});

t.test('a channel\'s topics_policy: set by the allowed group, obeyed by every message sent to it', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const { queueId } = await api.as(ann).register({ event_types: ['stream'] });
  const lounge = (await api.post('/channels/create', { name: 'lounge', subscribers: [1, ann.userId], topics_policy: 'empty_topic_only' })).body.id;
  t.equal((await api.get(`/streams/${lounge}`)).body.stream.topics_policy, 'empty_topic_only');
  t.equal((await api.as(ann).post('/messages', { type: 'stream', to: lounge, topic: 'named', content: 'hi' })).body.msg, 'Only the general chat topic is allowed in this channel.');
  t.equal((await api.as(ann).post('/messages', { type: 'stream', to: lounge, topic: '', content: 'hi' })).status, 200);

  const ops = await channel(api, 'ops', [1, ann.userId]);
  t.equal((await api.get(`/streams/${ops}`)).body.stream.topics_policy, 'inherit', 'inherit unless told');
  t.equal((await api.as(ann).post('/messages', { type: 'stream', to: ops, topic: '', content: 'hi' })).status, 200, 'the realm allows the empty topic');
  t.same((await api.patch(`/streams/${ops}`, { topics_policy: 'disable_empty_topic' })).body, { result: 'success', msg: '' });
  t.equal((await api.as(ann).post('/messages', { type: 'stream', to: ops, topic: '', content: 'hi' })).body.msg, 'Sending messages to the general chat topic is not allowed in this channel.');
  await sendToChannel(api, ops, 'plans', 'a named topic');
  t.match((await api.patch(`/streams/${ops}`, { topics_policy: 'empty_topic_only' })).body.msg, /all messages in this channel must be in the general chat topic/);
  const annsOwn = (await api.as(ann).post('/channels/create', { name: 'anns', subscribers: [ann.userId] })).body.id;
  t.equal((await api.as(ann).patch(`/streams/${annsOwn}`, { topics_policy: 'allow_empty_topic' })).body.msg, 'Insufficient permission', 'moderators and up, by default');
  t.match((await drain(api.as(ann), queueId)).filter((event) => event.property === 'topics_policy'), [{ stream_id: ops, value: 'disable_empty_topic' }]);
});

t.test('GET /streams/{id}/email_address: the channel\'s address, for those who may read it and senders of theirs', async (t) => {
  const { api } = await startTestServer(t);
  const ownerId: number = (await api.get('/users/me')).body.user_id;
  const other = await api.createUser('other@example.com');
  const open = await channel(api, 'open', [ownerId]);
  const secret = await channel(api, 'secret', [ownerId], { invite_only: true });
  const otherApi = api.as(other);

  const answered = await otherApi.get(`/streams/${open}/email_address`);
  t.same([answered.status, answered.body], [200, { result: 'success', msg: '', email: '' }], 'no email gateway: an empty address, as the original');
  t.same(undocumented('get', '/streams/{stream_id}/email_address', answered), []);
  t.equal((await otherApi.get(`/streams/${open}/email_address`, { sender_id: other.userId })).status, 200, 'the caller as sender');

  const hidden = await otherApi.get(`/streams/${secret}/email_address`);
  t.same([hidden.status, hidden.body], [400, { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' }], 'a private channel of others');
  t.same(undocumented('get', '/streams/{stream_id}/email_address', hidden), []);
  t.equal((await otherApi.get('/streams/999999/email_address')).body.msg, 'Invalid channel ID');
  const foreignSender = await otherApi.get(`/streams/${open}/email_address`, { sender_id: ownerId });
  t.same([foreignSender.status, foreignSender.body.msg], [400, 'Invalid user ID'], 'another person as sender');
});

t.test('/mobile_push/*: without a push notification service, the original\'s answers after its checks', async (t) => {
  const { api } = await startTestServer(t);
  const registration = { token_kind: 'fcm', push_account_id: 2408, push_public_key: 'key', bouncer_public_key: 'bouncer', encrypted_push_registration: 'data' };
  const register = await api.post('/mobile_push/register', registration);
  t.same([register.status, register.body], [400, { result: 'error', msg: 'Server is not configured to use push notification service.', code: 'PUSH_SERVICE_NOT_CONFIGURED' }]);
  t.same(undocumented('post', '/mobile_push/register', register), []);
  t.match((await api.post('/mobile_push/register', { ...registration, token_kind: 'sms' })).body, { code: 'BAD_REQUEST', msg: /token_kind/ }, 'token_kind checked first');
  t.equal((await api.post('/mobile_push/register', { token_kind: 'fcm' })).body.code, 'REQUEST_VARIABLE_MISSING');

  const unknown = await api.post('/mobile_push/test_notification', { token: '111222' });
  t.same([unknown.status, unknown.body], [400, { result: 'error', msg: 'Device not recognized', code: 'INVALID_PUSH_DEVICE_TOKEN' }], 'a token the user has not registered');
  t.same(undocumented('post', '/mobile_push/test_notification', unknown), []);
  t.equal((await api.post('/users/me/push_device_token', { token: '111222' })).status, 200);
  const known = await api.post('/mobile_push/test_notification', { token: '111222' });
  t.same([known.status, known.body.code], [400, 'PUSH_SERVICE_NOT_CONFIGURED'], 'a registered device: nothing can send to it');

  const e2ee = await api.post('/mobile_push/e2ee/test_notification', { push_account_id: 2408 });
  t.same([e2ee.status, e2ee.body], [400, { result: 'error', msg: 'No active registered push device', code: 'NO_ACTIVE_PUSH_DEVICE' }]);
  t.same(undocumented('post', '/mobile_push/e2ee/test_notification', e2ee), []);
  t.match((await api.post('/mobile_push/e2ee/test_notification', { push_account_id: 'x' })).body, { code: 'BAD_REQUEST', msg: /push_account_id/ });
});

t.test('POST /realm/test_welcome_bot_custom_message: an administrator previews a welcome text in its direct messages', async (t) => {
  const { api } = await startTestServer(t);
  const ownerId: number = (await api.get('/users/me')).body.user_id;
  const sent = await api.post('/realm/test_welcome_bot_custom_message', { welcome_message_custom_text: 'Welcome, **read** the rules.' });
  t.equal(sent.status, 200);
  t.same(undocumented('post', '/realm/test_welcome_bot_custom_message', sent), []);
  const message = (await api.get(`/messages/${sent.body.message_id}`)).body.message;
  t.match(message, { type: 'private', content: '<p>Welcome, <strong>read</strong> the rules.</p>', sender_full_name: 'Notification Bot' });
  t.same(message.display_recipient.map((person: { id: number }) => person.id).sort(), [message.sender_id, ownerId].sort(), 'from the bot to the administrator only');

  const member = api.as(await api.createUser('member@example.com'));
  const refused = await member.post('/realm/test_welcome_bot_custom_message', { welcome_message_custom_text: 'Hi' });
  t.same([refused.status, refused.body.msg], [400, 'Must be an organization administrator']);
  t.equal((await api.post('/realm/test_welcome_bot_custom_message', { welcome_message_custom_text: 'x'.repeat(8001) })).status, 400, 'beyond 8000 characters');
  t.equal((await api.post('/realm/test_welcome_bot_custom_message', { welcome_message_custom_text: '  ' })).body.msg, 'Message must not be empty');
});
