import t from 'tap';
import { NEUTRAL_NAMES, OpenApi, type Schema } from './helpers/openapi.ts';
import { drain } from './helpers/messages.ts';
import { startTestServer } from './helpers/server.ts';

/**
 * The POST /register answer against the document: for every fetch type the document names, and for none
 * (everything), every key the document lists for it is there, with the documented shape.
 */
const api = new OpenApi();
const responseSchema = api.doc.components.schemas.register_queue_200_response!;
const documented = api.properties(responseSchema);

/** The document's own words for when a key is present: one fetch type, or two that must both be asked for. */
const PRESENT_IF = /Present\s+if\s+`([a-z_]+)`(?:\s+and\s+`([a-z_]+)`\s+are\s+both|\s+is)\s+present\s+in\s+`(?:fetch_)?event_types`/;
/** A key that also depends on state this server has no notion of (Zulip's demo organizations). */
const DEMO_ONLY = /and the realm is a demo organization/;
/**
 * The keys whose description names no fetch type: where Zulip's registration (zerver/lib/events.py) puts
 * them. `always`: in every answer; `optional`: only when there is something to say.
 */
const UNSTATED: Record<string, readonly string[] | 'always' | 'optional'> = {
  result: 'always',
  msg: 'always',
  queue_id: 'always',
  last_event_id: 'always',
  zulip_feature_level: 'always',
  zulip_version: 'always',
  zulip_merge_base: 'always',
  receives_typing_notifications: 'always',
  ignored_parameters_unsupported: 'optional',
  drafts: ['drafts'],
  max_reminder_note_length: ['realm'],
  max_bulk_new_subscription_messages: ['realm'],
};

type Condition = readonly string[] | 'always' | 'optional' | 'demo';
const conditions = new Map<string, Condition>();
for (const [key, schema] of Object.entries(documented)) {
  const description = api.resolve(schema).description ?? schema.description ?? '';
  const match = PRESENT_IF.exec(description);
  const condition: Condition | undefined = DEMO_ONLY.test(description)
    ? 'demo'
    : match
      ? match.slice(1).filter((type): type is string => type !== undefined)
      : UNSTATED[key];
  conditions.set(NEUTRAL_NAMES[key] ?? key, condition ?? []);
}
const schemaOf = (key: string): Schema => documented[Object.keys(NEUTRAL_NAMES).find((name) => NEUTRAL_NAMES[name] === key) ?? key]!;
const fetchTypes = [...new Set([...conditions.values()].flatMap((condition) => (Array.isArray(condition) ? condition : [])))].sort();

/** The keys the document promises for a registration asking for `types` (null: every type). */
function expectedKeys(types: readonly string[] | null): string[] {
  return [...conditions]
    .filter(([, condition]) => condition === 'always' || (Array.isArray(condition) && condition.every((type) => types === null || types.includes(type))))
    .map(([key]) => key);
}

t.test('POST /register answers every documented key of every fetch type, in the documented shape', async (t) => {
  const unknown = [...conditions].filter(([, condition]) => Array.isArray(condition) && condition.length === 0).map(([key]) => key);
  t.same(unknown, [], 'the document: every key names its fetch type, or is in UNSTATED');
  t.ok(conditions.size > 240 && fetchTypes.length > 40, `the document: ${conditions.size} keys, ${fetchTypes.length} fetch types`);
  const { api: client } = await startTestServer(t);
  await populate(client);
  const requests: (readonly string[] | null)[] = [null, ...fetchTypes.map((type) => [type]), ['message', 'update_message_flags']];
  for (const types of requests) {
    const params = types === null ? {} : { fetch_event_types: JSON.stringify(types), event_types: JSON.stringify(types) };
    const { body } = await client.register(params);
    const label = types === null ? 'every type' : types.join('+');
    const missing = expectedKeys(types).filter((key) => !(key in body));
    t.same(missing, [], `${label}: no documented key missing`);
    const misshapen = Object.entries(body as Record<string, unknown>)
      .filter(([key]) => conditions.has(key))
      .flatMap(([key, value]) => api.mismatches(value, schemaOf(key), key));
    t.same(misshapen, [], `${label}: every value has its documented shape`);
  }
});

t.test('an anonymous registration in a realm with public access: every key of every type, in its shape', async (t) => {
  const { api: owner } = await startTestServer(t, { webPublicStreamsEnabled: true });
  t.equal((await owner.patch('/realm', { enable_spectator_access: true })).status, 200);
  t.equal((await owner.post('/channels/create', { name: 'lobby', subscribers: [1], is_web_public: true })).status, 200);
  const result = await owner.as(null).post('/register');
  t.equal(result.status, 200);
  const body = result.body as Record<string, unknown>;
  t.equal(body.queue_id, null);
  // As in the original, a visitor is shown no presence, so there is no presence position to resume from.
  t.same(expectedKeys(null).filter((key) => key !== 'presence_last_update_id' && !(key in body)), [], 'no documented key missing');
  const misshapen = Object.entries(body)
    .filter(([key]) => conditions.has(key))
    .flatMap(([key, value]) => api.mismatches(value, schemaOf(key), key));
  t.same(misshapen, [], 'every value has its documented shape');
  t.same(body.user_status, {}, 'no statuses for the Internet');
});

/** Something of each kind, so that the shapes of list items are checked too. */
async function populate(client: Awaited<ReturnType<typeof startTestServer>>['api']) {
  const other = await client.createUser('other@example.com', 'Other');
  const ok = (result: { status: number; body: unknown }, what: string) => {
    if (result.status !== 200) throw new Error(`${what}: ${JSON.stringify(result.body)}`);
    return result.body as Record<string, any>;
  };
  ok(await client.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'general' }, { name: 'old' }]), principals: JSON.stringify([other.userId]) }), 'subscribe');
  const channels = ok(await client.get('/streams'), 'streams').streams as { name: string; stream_id: number }[];
  const general = channels.find((channel) => channel.name === 'general')!;
  const old = channels.find((channel) => channel.name === 'old')!;
  ok(await client.post('/messages', { type: 'stream', to: general.stream_id, topic: 'hello', content: 'hi @**Other**' }), 'send');
  ok(await client.post('/messages', { type: 'private', to: JSON.stringify([other.userId]), content: 'psst' }), 'send dm');
  ok(await client.post('/user_topics', { stream_id: general.stream_id, topic: 'hello', visibility_policy: 1 }), 'mute topic');
  ok(await client.post('/users/me/status', { status_text: 'on the train', emoji_name: 'car', emoji_code: '1f697', reaction_type: 'unicode_emoji' }), 'status');
  ok(await client.post('/user_groups/create', { name: 'crew', description: 'the crew', members: JSON.stringify([other.userId]) }), 'group');
  ok(await client.post('/drafts', { drafts: JSON.stringify([{ type: 'stream', to: [general.stream_id], topic: 'later', content: 'draft', timestamp: 1 }]) }), 'draft');
  ok(await client.post('/saved_snippets', { title: 'hi', content: 'hello there' }), 'snippet');
  ok(await client.post('/users/me/alert_words', { alert_words: JSON.stringify(['train']) }), 'alert word');
  ok(await client.post('/users/me/muted_users/' + other.userId), 'mute user');
  ok(await client.delete(`/streams/${old.stream_id}`), 'archive');
}

t.test('the snapshot follows later changes: edit history policy, muted topics, statuses, time zones, groups, archives', async (t) => {
  const { api: owner } = await startTestServer(t);
  const ann = await owner.createUser('ann@example.com', 'Ann');
  const annApi = owner.as(ann);
  const fresh = (await owner.register()).body;
  t.equal(fresh.realm_message_edit_history_visibility_policy, 'all', "the original's default");
  t.equal(fresh.realm_allow_edit_history, true);
  t.equal(fresh.realm_user_groups.length > 0, true, 'realm_user_groups by its own fetch type');

  const watching = await annApi.register({ event_types: JSON.stringify(['realm', 'realm_user']) });
  t.equal((await owner.patch('/realm', { message_edit_history_visibility_policy: 'moves', waiting_period_threshold: 3 })).status, 200);
  t.equal((await owner.patch('/realm', { message_edit_history_visibility_policy: 'sometimes' })).status, 400, 'only the documented policies');
  t.equal((await annApi.patch('/settings', { timezone: 'Europe/Paris' })).status, 200);
  const events = await drain(annApi, watching.queueId);
  t.ok(events.some((event) => event.type === 'realm' && event.property === 'message_edit_history_visibility_policy' && event.value === 'moves'));
  t.ok(events.some((event) => event.type === 'realm' && event.property === 'allow_edit_history' && event.value === true));
  t.ok(events.some((event) => event.type === 'realm_user' && (event.person as any).timezone === 'Europe/Paris' && (event.person as any).user_id === ann.userId));
  const annEmail = (await annApi.get('/users/me')).body.email;
  t.ok(events.some((event) => event.type === 'realm_user' && (event.person as any).timezone === 'Europe/Paris' && (event.person as any).email === annEmail), 'with the API address, as the original sends it');

  const general = (await owner.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'general' }, { name: 'old' }]) })).status;
  t.equal(general, 200);
  const channels = (await owner.get('/streams')).body.streams as { name: string; stream_id: number }[];
  const generalId = channels.find((channel) => channel.name === 'general')!.stream_id;
  const oldId = channels.find((channel) => channel.name === 'old')!.stream_id;
  await owner.post('/user_topics', { stream_id: generalId, topic: 'noise', visibility_policy: 1 });
  await owner.post('/user_topics', { stream_id: generalId, topic: 'news', visibility_policy: 3 });
  await owner.post('/users/me/status', { status_text: 'out to lunch' });
  const group = (await owner.post('/user_groups/create', { name: 'gone', description: 'soon gone', members: JSON.stringify([ann.userId]) })).body.group_id;
  t.equal((await owner.post(`/user_groups/${group}/deactivate`)).status, 200);
  t.equal((await owner.delete(`/streams/${oldId}`)).status, 200);

  const later = (await owner.register()).body;
  t.equal(later.realm_message_edit_history_visibility_policy, 'moves');
  t.equal(later.realm_allow_edit_history, true);
  t.equal(later.realm_waiting_period_threshold, 3);
  t.same(later.muted_topics.map((entry: unknown[]) => entry.slice(0, 2)), [['general', 'noise']], 'only the muted topic, by channel name');
  const ownerId = (await owner.get('/users/me')).body.user_id as number;
  t.same(later.user_status, { [ownerId]: { status_text: 'out to lunch' } }, 'the statuses that say something');
  t.equal(later.realm_users.find((user: { user_id: number }) => user.user_id === ann.userId).timezone, 'Europe/Paris');
  t.equal((await owner.get(`/users/${ann.userId}`)).body.user.timezone, 'Europe/Paris', 'the user directory too');
  t.notOk(later.realm_user_groups.some((entry: { id: number }) => entry.id === group), 'no deactivated group without the capability');
  t.notOk(later.streams.some((entry: { stream_id: number }) => entry.stream_id === oldId), 'no archived channel without the capability');
  t.notOk(later.subscriptions.some((entry: { stream_id: number }) => entry.stream_id === oldId));

  const capable = (await owner.register({ client_capabilities: JSON.stringify({ include_deactivated_groups: true, archived_channels: true }) })).body;
  t.ok(capable.realm_user_groups.some((entry: { id: number; deactivated: boolean }) => entry.id === group && entry.deactivated));
  t.ok(capable.streams.some((entry: { stream_id: number; is_archived: boolean }) => entry.stream_id === oldId && entry.is_archived));
  t.ok(capable.subscriptions.some((entry: { stream_id: number }) => entry.stream_id === oldId));

  const both = (await owner.register({ fetch_event_types: JSON.stringify(['user_topic', 'muted_topics']) })).body;
  t.notOk('muted_topics' in both, 'a client that reads user_topics is not sent the legacy list');
  const modern = (await owner.register({ fetch_event_types: JSON.stringify(['update_display_settings']), client_capabilities: JSON.stringify({ user_settings_object: true }) })).body;
  t.notOk('twenty_four_hour_time' in modern, 'no legacy copies for user_settings_object clients');
  const emoji = (await (await fetch(later.server_emoji_data_url)).json()) as { code_to_names: Record<string, string[]> };
  t.same(emoji.code_to_names['1f419'], ['octopus'], 'server_emoji_data_url serves the emoji the server knows');
  const icon = await fetch(new URL(later.realm_icon_url, later.realm_url));
  t.equal(icon.status, 200, 'the realm icon is served');
  t.match(icon.headers.get('content-type'), /svg/);
});

t.test('the realm settings that restrict users are obeyed: name and email changes, unique names', async (t) => {
  const { api: owner } = await startTestServer(t);
  const ann = owner.as(await owner.createUser('ann@example.com', 'Ann'));
  t.equal((await owner.patch('/realm', { name_changes_disabled: true, email_changes_disabled: true })).status, 200);
  const renamed = await ann.patch('/settings', { full_name: 'Annie' });
  t.equal(renamed.status, 400);
  t.equal(renamed.body.msg, 'Name changes are disabled in this organization.');
  const moved = await ann.patch('/settings', { email: 'annie@example.com' });
  t.equal(moved.status, 400);
  t.equal(moved.body.msg, 'Email address changes are disabled in this organization.');
  t.equal((await owner.patch('/settings', { full_name: 'The Owner' })).status, 200, 'administrators still may');
  t.equal((await owner.patch('/realm', { name_changes_disabled: false })).status, 200);
  t.equal((await ann.patch('/settings', { full_name: 'Annie' })).status, 200, 'and everyone once it is on again');

  t.equal((await owner.patch('/realm', { require_unique_names: true })).status, 200);
  const taken = await ann.patch('/settings', { full_name: 'the owner' });
  t.equal(taken.status, 400, 'a name another user has, in any case, where names must be unique');
  t.equal(taken.body.msg, 'Unique names required in this organization.');
  t.equal((await owner.post('/users', { email: 'dup@example.com', password: 'a-Strong-passw0rd-for-tests', full_name: 'ANNIE' })).status, 400);
  t.equal((await owner.post('/users', { email: 'bob@example.com', password: 'a-Strong-passw0rd-for-tests', full_name: 'Bob' })).status, 200);
  const state = (await ann.register({ fetch_event_types: JSON.stringify(['realm']) })).body;
  t.equal(state.realm_require_unique_names, true);
  t.equal(state.realm_name_changes_disabled, false);
  t.equal(state.realm_email_changes_disabled, true);
});

t.test('the edit history policy governs what users see of edits', async (t) => {
  const { api: owner } = await startTestServer(t);
  await owner.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'general' }]) });
  const sent = await owner.post('/messages', { type: 'stream', to: 'general', topic: 'first', content: 'draft one' });
  const id = sent.body.id as number;
  t.equal((await owner.patch(`/messages/${id}`, { content: 'final text' })).status, 200);
  t.equal((await owner.patch(`/messages/${id}`, { topic: 'second' })).status, 200);
  const editHistory = async () => (await owner.get(`/messages/${id}`)).body.message.edit_history as Record<string, unknown>[] | undefined;
  t.equal((await editHistory())?.length, 2, 'all: the content edit and the move');
  t.equal((await owner.get(`/messages/${id}/history`)).body.message_history.length, 3);

  t.equal((await owner.patch('/realm', { message_edit_history_visibility_policy: 'moves' })).status, 200);
  const moves = await editHistory();
  t.equal(moves?.length, 1, 'moves: only the move');
  t.equal(moves?.[0]?.prev_topic, 'first');
  t.notOk(moves?.some((entry) => 'prev_content' in entry));
  const snapshots = (await owner.get(`/messages/${id}/history`)).body.message_history as { content: string }[];
  t.equal(snapshots.length, 2);
  t.ok(snapshots.every((snapshot) => snapshot.content === 'final text'), 'no earlier content shows through');

  t.equal((await owner.patch('/realm', { message_edit_history_visibility_policy: 'none' })).status, 200);
  t.equal(await editHistory(), undefined, 'none: no edit history');
  const refused = await owner.get(`/messages/${id}/history`);
  t.equal(refused.status, 400);
  t.equal(refused.body.msg, 'Message edit history is disabled in this organization');
  t.equal((await owner.register({ fetch_event_types: JSON.stringify(['realm']) })).body.realm_allow_edit_history, false);
});
