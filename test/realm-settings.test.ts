import { rmSync } from 'node:fs';
import t from 'tap';
import { openRuntime } from './helpers/runtime.ts';
// The runtime first: realm/state.ts and groups/state.ts import each other, and the runtime loads them in the working order.
import { Role, realmFromRecord, realmToRecord, type RealmRecord } from '../actors/realm/state.ts';
import { advanceClock, channel, drain, fetchIds, sendDirect, sendToChannel } from './helpers/messages.ts';
import { startTestServer, tempDir, type ApiClient } from './helpers/server.ts';

const realmOf = async (api: ApiClient) => (await api.register({ fetch_event_types: ['realm'] })).body;

async function groupIds(api: ApiClient): Promise<Record<string, number>> {
  const groups: { id: number; name: string }[] = (await api.get('/user_groups')).body.user_groups;
  return Object.fromEntries(groups.map((group) => [group.name, group.id]));
}

/** A server with an owner (the api), an administrator, a moderator and two members. */
async function organization(t: { teardown(fn: () => unknown): void }) {
  const server = await startTestServer(t);
  const { api } = server;
  const admin = await api.createUser('admin@example.com', 'Admin');
  const moderator = await api.createUser('moderator@example.com', 'Moderator');
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  await api.patch(`/users/${admin.userId}`, { role: Role.administrator });
  await api.patch(`/users/${moderator.userId}`, { role: Role.moderator });
  return { server, api, admin: api.as(admin), moderator: api.as(moderator), ann: api.as(ann), bob: api.as(bob), ids: { admin, moderator, ann, bob } };
}

t.test('registration reports the realm settings and the permissions from the realm state', async (t) => {
  const { api } = await startTestServer(t);
  const state = await realmOf(api);
  const groups = await groupIds(api);
  t.match(state, {
    realm_allow_message_editing: true,
    realm_message_content_edit_limit_seconds: 600,
    realm_move_messages_within_stream_limit_seconds: 604_800,
    realm_move_messages_between_streams_limit_seconds: 604_800,
    realm_topics_policy: 'allow_empty_topic',
    realm_mandatory_topics: false,
    realm_default_language: 'en',
    realm_message_retention_days: -1,
    realm_enable_spectator_access: false,
    realm_empty_topic_display_name: 'general chat',
    realm_can_create_groups: groups['role:members'],
    realm_can_manage_all_groups: groups['role:administrators'],
    realm_can_move_messages_between_topics_group: groups['role:everyone'],
    realm_can_create_bots_group: groups['role:members'],
    realm_can_create_write_only_bots_group: groups['role:members'],
  });
});

t.test('who may change what: administrators, owners for the owner-only settings', async (t) => {
  const { api, admin, moderator, ann } = await organization(t);
  for (const [who, client] of [['member', ann], ['moderator', moderator]] as const) {
    const refused = await client.patch('/realm', { name: 'Mine' });
    t.equal(refused.body.code, 'UNAUTHORIZED_PRINCIPAL', who);
    t.equal(refused.body.msg, 'Must be an organization administrator', who);
    t.equal((await client.patch('/realm', { message_content_edit_limit_seconds: 'soon' })).body.code, 'UNAUTHORIZED_PRINCIPAL', `${who}: refused before the parameters are read`);
  }
  const groups = await groupIds(api);
  for (const params of [{ message_retention_days: 30 }, { can_create_groups: { new: groups['role:administrators'] } }, { can_manage_all_groups: { new: groups['role:owners'] } }]) {
    const refused = await admin.patch('/realm', params);
    t.equal(refused.body.code, 'UNAUTHORIZED_PRINCIPAL', `administrator: ${Object.keys(params)[0]}`);
    t.equal(refused.body.msg, 'Must be an organization owner');
  }
  t.equal((await realmOf(api)).realm_message_retention_days, -1, 'unchanged');

  const changed = await admin.patch('/realm', { name: 'Renamed', allow_message_editing: false, message_content_edit_limit_seconds: 'unlimited' });
  t.equal(changed.status, 200);
  t.same(changed.body, { result: 'success', msg: '', name: 'updated', allow_message_editing: false, message_content_edit_limit_seconds: null }, 'the response names what changed');
  const owned = await api.patch('/realm', { message_retention_days: 30 });
  t.same(owned.body, { result: 'success', msg: '', message_retention_days: 30 }, 'the owner sets the retention');
  t.equal((await api.patch('/realm', { message_retention_days: 'unlimited' })).body.message_retention_days, -1);
  t.match(await realmOf(ann), { realm_name: 'Renamed', realm_allow_message_editing: false, realm_message_content_edit_limit_seconds: null, realm_message_retention_days: -1 });
});

t.test('values are checked, and a refused request changes nothing', async (t) => {
  const { api } = await startTestServer(t);
  const { queueId } = await api.register({ event_types: ['realm'] });
  const groups = await groupIds(api);
  const bad: [Record<string, unknown>, string][] = [
    [{ message_content_edit_limit_seconds: 0 }, "Bad value for 'message_content_edit_limit_seconds': 0"],
    [{ move_messages_within_stream_limit_seconds: -5 }, "Bad value for 'move_messages_within_stream_limit_seconds': -5"],
    [{ move_messages_between_streams_limit_seconds: 'soon' }, "Invalid move_messages_between_streams_limit_seconds: must be a number of seconds or 'unlimited'"],
    [{ message_retention_days: 0 }, "Bad value for 'message_retention_days': 0"],
    [{ default_language: 'xx' }, "Invalid language 'xx'"],
    [{ topics_policy: 'sometimes' }, "Invalid topics_policy 'sometimes'"],
    [{ allow_message_editing: 'maybe' }, 'allow_message_editing is not a boolean'],
    [{ name: '   ' }, "Organization name can't be empty."],
    [{ name: 'x'.repeat(41) }, 'name is too long (limit: 40 characters)'],
    [{ description: 'x'.repeat(1001) }, 'description is too long (limit: 1000 characters)'],
    [{ can_create_groups: { new: 9999 } }, 'Invalid user group ID: 9999'],
    [{ can_create_groups: { new: groups['role:internet'] } }, "'can_create_groups' setting cannot be set to 'role:internet' group."],
    [{ can_create_groups: { new: { direct_members: [999], direct_subgroups: [] } } }, 'Invalid user ID: 999'],
    [{ can_access_all_users_group: { new: groups['role:administrators'] } }, "'can_access_all_users_group' must be a system user group."],
    [{ can_create_groups: { new: groups['role:owners'], old: groups['role:administrators'] } }, "'old' value does not match the expected value."],
    [{ name: 'Fine', can_create_groups: 'x' }, '"can_create_groups" is not valid JSON.'],
  ];
  for (const [params, msg] of bad) {
    const refused = await api.patch('/realm', params);
    t.equal(refused.body.code, 'BAD_REQUEST', JSON.stringify(params));
    t.equal(refused.body.msg, msg, JSON.stringify(params));
  }
  t.equal((await api.patch('/realm', { name: 'Fine', default_language: 'xx' })).status, 400);
  t.equal((await realmOf(api)).realm_name, 'Chat', 'the valid name of a refused request was not applied');
  t.same(await drain(api, queueId), [], 'nothing announced');
});

t.test('events: update for plain properties, update_dict for editing settings and permissions, to everyone', async (t) => {
  const { api, admin, ann } = await organization(t);
  const groups = await groupIds(api);
  const queues = await Promise.all([api, ann].map(async (client) => ({ client, queueId: (await client.register({ event_types: ['realm'] })).queueId })));
  await admin.patch('/realm', { name: 'Acme', description: 'We **make** things', default_language: 'de', enable_spectator_access: true });
  await admin.patch('/realm', { allow_message_editing: false, message_content_edit_limit_seconds: 120, move_messages_within_stream_limit_seconds: 'unlimited', move_messages_between_streams_limit_seconds: 3600 });
  await admin.patch('/realm', { mandatory_topics: true });
  await admin.patch('/realm', { can_move_messages_between_topics_group: { new: groups['role:moderators'], old: groups['role:everyone'] } });
  await admin.patch('/realm', { can_resolve_topics_group: { new: { direct_members: [1, 1], direct_subgroups: [groups['role:moderators']] } } });
  await admin.patch('/realm', { can_delete_own_message_group: { new: { direct_members: [], direct_subgroups: [groups['role:members']] } } });
  await admin.patch('/realm', { name: 'Acme', allow_message_editing: false, can_move_messages_between_topics_group: { new: groups['role:moderators'] } });
  const expected = [
    { type: 'realm', op: 'update', property: 'name', value: 'Acme' },
    { type: 'realm', op: 'update', property: 'description', value: 'We **make** things' },
    { type: 'realm', op: 'update', property: 'default_language', value: 'de' },
    { type: 'realm', op: 'update', property: 'enable_spectator_access', value: true },
    { type: 'realm', op: 'update_dict', property: 'default', data: { allow_message_editing: false } },
    { type: 'realm', op: 'update_dict', property: 'default', data: { message_content_edit_limit_seconds: 120 } },
    { type: 'realm', op: 'update_dict', property: 'default', data: { move_messages_within_stream_limit_seconds: null } },
    { type: 'realm', op: 'update_dict', property: 'default', data: { move_messages_between_streams_limit_seconds: 3600 } },
    { type: 'realm', op: 'update', property: 'topics_policy', value: 'disable_empty_topic' },
    { type: 'realm', op: 'update', property: 'mandatory_topics', value: true },
    { type: 'realm', op: 'update_dict', property: 'default', data: { can_move_messages_between_topics_group: groups['role:moderators'] } },
    { type: 'realm', op: 'update_dict', property: 'default', data: { can_resolve_topics_group: { direct_members: [1], direct_subgroups: [groups['role:moderators']] } } },
    // An anonymous group of one group and no one else is that group.
    { type: 'realm', op: 'update_dict', property: 'default', data: { can_delete_own_message_group: groups['role:members'] } },
  ];
  for (const { client, queueId } of queues) {
    const events = (await drain(client, queueId)).map(({ id: _id, ...event }) => event);
    t.same(events, expected, `${client.credentials!.email}: in order, and nothing for the repeated values`);
  }
  t.match(await realmOf(ann), {
    realm_name: 'Acme', realm_description: 'We **make** things', realm_default_language: 'de', realm_enable_spectator_access: true,
    realm_topics_policy: 'disable_empty_topic', realm_mandatory_topics: true, realm_move_messages_within_stream_limit_seconds: null,
    realm_can_resolve_topics_group: { direct_members: [1], direct_subgroups: [groups['role:moderators']] },
  });
  t.equal((await api.as(null).get('/server_settings')).body.realm_description, '<p>We <strong>make</strong> things</p>', 'login pages show it rendered');
  t.equal((await realmOf(ann)).server_web_public_streams_enabled, false, 'spectator access is stored; the server still offers no web-public channels');
});

t.test('allow_message_editing and the content edit window govern content edits, for administrators too', async (t) => {
  const { server, api, admin, ann, ids } = await organization(t);
  const general = await channel(api, 'general', [1, ids.admin.userId, ids.ann.userId]);
  const mine = await sendToChannel(ann, general, 'plans', 'draft');
  const theirs = await sendToChannel(admin, general, 'plans', 'admin draft');
  const dm = await sendDirect(ann, [ids.admin.userId], 'hello');

  await admin.patch('/realm', { allow_message_editing: false });
  for (const [client, id] of [[ann, mine], [admin, theirs], [ann, dm]] as const) {
    t.equal((await client.patch(`/messages/${id}`, { content: 'edited' })).body.msg, 'Your organization has turned off message editing');
  }
  t.equal((await ann.patch(`/messages/${mine}`, { topic: 'renamed', send_notification_to_new_thread: false })).status, 200, 'moving a topic is not content editing');
  await admin.patch('/realm', { allow_message_editing: true, message_content_edit_limit_seconds: 60 });
  t.equal((await ann.patch(`/messages/${mine}`, { content: 'edited' })).status, 200, 'editing is back');

  advanceClock(server, 90);
  for (const [client, id] of [[ann, mine], [admin, theirs]] as const) {
    t.equal((await client.patch(`/messages/${id}`, { content: 'late' })).body.msg, 'The time limit for editing this message has passed');
  }
  await admin.patch('/realm', { message_content_edit_limit_seconds: 'unlimited' });
  advanceClock(server, 365 * 24 * 3600);
  t.equal((await ann.patch(`/messages/${mine}`, { content: 'a year later' })).status, 200, 'no limit');
  t.equal((await api.get(`/messages/${mine}`)).body.raw_content, 'a year later');
});

t.test('the move windows and the move permissions govern topic and channel moves', async (t) => {
  const { server, api, admin, moderator, ann, bob, ids } = await organization(t);
  const groups = await groupIds(api);
  const members = [1, ids.admin.userId, ids.moderator.userId, ids.ann.userId, ids.bob.userId];
  const general = await channel(api, 'general', members);
  const other = await channel(api, 'other', members);
  const old = await sendToChannel(ann, general, 'plans', 'old');
  await admin.patch('/realm', { move_messages_within_stream_limit_seconds: 3600, move_messages_between_streams_limit_seconds: 7200 });
  advanceClock(server, 5000);
  const recent = await sendToChannel(ann, general, 'plans', 'recent');

  t.equal((await ann.patch(`/messages/${old}`, { topic: 'moved', send_notification_to_new_thread: false })).body.msg, "The time limit for editing this message's topic has passed");
  t.equal((await ann.patch(`/messages/${old}`, { stream_id: other, send_notification_to_new_thread: false })).status, 200, 'within the longer window for channel moves');
  await ann.patch(`/messages/${old}`, { stream_id: general, send_notification_to_new_thread: false });
  const whole = await ann.patch(`/messages/${recent}`, { topic: 'moved', propagate_mode: 'change_all', send_notification_to_new_thread: false });
  t.match(whole.body, { code: 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED', first_message_id_allowed_to_move: recent, total_messages_in_topic: 2, total_messages_allowed_to_move: 1 });
  t.equal((await moderator.patch(`/messages/${old}`, { topic: 'moved', send_notification_to_new_thread: false })).status, 200, 'moderators have no move limit');
  await moderator.patch(`/messages/${old}`, { topic: 'plans', send_notification_to_new_thread: false });

  await admin.patch('/realm', { move_messages_within_stream_limit_seconds: 'unlimited' });
  t.equal((await ann.patch(`/messages/${old}`, { topic: 'moved', send_notification_to_new_thread: false })).status, 200, 'no limit now');

  await admin.patch('/realm', { can_move_messages_between_topics_group: { new: groups['role:moderators'] } });
  t.equal((await ann.patch(`/messages/${recent}`, { topic: 'elsewhere', send_notification_to_new_thread: false })).body.msg, "You don't have permission to edit this message");
  t.equal((await moderator.patch(`/messages/${recent}`, { topic: 'elsewhere', send_notification_to_new_thread: false })).status, 200);
  await admin.patch('/realm', { can_move_messages_between_topics_group: { new: { direct_members: [ids.bob.userId], direct_subgroups: [] } } });
  t.equal((await bob.patch(`/messages/${recent}`, { topic: 'by bob', send_notification_to_new_thread: false })).status, 200, 'an anonymous group of one member');
  t.equal((await ann.patch(`/messages/${recent}`, { topic: 'by ann', send_notification_to_new_thread: false })).body.msg, "You don't have permission to edit this message");

  await admin.patch('/realm', { can_move_messages_between_channels_group: { new: groups['role:administrators'] } });
  t.equal((await ann.patch(`/messages/${recent}`, { stream_id: other, send_notification_to_new_thread: false })).body.msg, "You don't have permission to move this message");
  t.equal((await admin.patch(`/messages/${recent}`, { stream_id: other, send_notification_to_new_thread: false })).status, 200);
});

t.test('topics_policy (mandatory_topics): the empty topic is refused in sends and moves', async (t) => {
  const { api, admin, ann, ids } = await organization(t);
  const general = await channel(api, 'general', [1, ids.admin.userId, ids.ann.userId]);
  const id = await sendToChannel(ann, general, 'plans', 'one');
  t.equal((await ann.post('/messages', { type: 'stream', to: String(general), topic: '', content: 'x' })).status, 200, 'allowed by default');

  await admin.patch('/realm', { topics_policy: 'disable_empty_topic' });
  for (const topic of ['', '  ', 'general chat', '(no topic)']) {
    const refused = await ann.post('/messages', { type: 'stream', to: String(general), topic, content: 'x' });
    t.equal(refused.body.msg, 'Topics are required in this organization', JSON.stringify(topic));
  }
  t.equal((await ann.patch(`/messages/${id}`, { topic: 'general chat', send_notification_to_new_thread: false })).body.msg, 'Topics are required in this organization', 'moves too');
  t.ok(await sendDirect(ann, [1], 'direct messages have no topic'), 'direct messages are unaffected');
  t.ok(await sendToChannel(ann, general, 'named', 'fine'), 'named topics are fine');

  await admin.patch('/realm', { mandatory_topics: false });
  t.equal((await realmOf(api)).realm_topics_policy, 'allow_empty_topic', 'mandatory_topics is the older name');
  t.equal((await ann.patch(`/messages/${id}`, { topic: '', send_notification_to_new_thread: false })).status, 200);
  t.ok((await fetchIds(api, [['topic', '']])).includes(id), 'moved into the empty topic');
});

t.test('settings and permissions survive a restart; an older snapshot loads with the defaults', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir });
  const groups = await groupIds(first.api);
  await first.api.patch('/realm', {
    name: 'Kept', allow_message_editing: false, message_content_edit_limit_seconds: 'unlimited', topics_policy: 'disable_empty_topic',
    message_retention_days: 90, can_create_bots_group: { new: groups['role:administrators'] },
  });
  await first.stop();
  const second = await startTestServer(t, { dataDir });
  t.match(await realmOf(second.api), {
    realm_name: 'Kept', realm_allow_message_editing: false, realm_message_content_edit_limit_seconds: null, realm_topics_policy: 'disable_empty_topic',
    realm_message_retention_days: 90, realm_can_create_bots_group: groups['role:administrators'],
  });
  await second.stop();

  // Replayed from the log alone (no snapshot), then loaded from a snapshot that predates settings and bots.
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const clock = { now: () => Date.UTC(2026, 0, 1) };
  const open = () => openRuntime(dir, clock);
  const live = open();
  const { realmId } = await live.runtime.createRealm('', 'Test');
  await live.runtime.execute(realmId, { type: 'realm.update', caller: { kind: 'operator' }, settings: { message_content_edit_limit_seconds: 30 }, permissions: {} });
  const record = realmToRecord(live.runtime.realmState(realmId));
  await live.store.close();
  const replayed = open();
  t.same(realmToRecord(replayed.runtime.realmState(realmId)), record, 'replay gives the same realm');
  t.equal(replayed.runtime.realmState(realmId).settings.message_content_edit_limit_seconds, 30);
  await replayed.store.close();

  const { settings: _settings, ...older } = record;
  const { can_create_bots_group: _a, can_create_write_only_bots_group: _b, ...olderPermissions } = older.permissions;
  const loaded = realmFromRecord({ ...older, permissions: olderPermissions } as RealmRecord);
  t.equal(loaded.settings.message_content_edit_limit_seconds, 600, 'settings a snapshot lacks get their defaults');
  t.equal(loaded.permissions.can_create_bots_group, loaded.systemGroupIds.get('role:members'), 'so do permissions added since');
});
