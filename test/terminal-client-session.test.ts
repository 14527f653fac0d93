import t from 'tap';
import { png } from './helpers/images.ts';
import { channel, sendDirect, sendToChannel } from './helpers/messages.ts';
import { startTestServer, type ApiClient } from './helpers/server.ts';
import {
  SEARCH_ANCHOR, TERMINAL_USER_AGENT, TerminalClient, presenceProblems, reactionProblems, readProblems, type Event,
} from './helpers/terminal-client.ts';

// A session of the terminal client (zulip/zulip-terminal), replayed request by request against the real server
// by two users, each answer and event checked for every key the client reads (test/helpers/terminal-client.ts
// names them and the client's files they come from): a key missing here is a KeyError traceback there.
// Login (cli/run.py): GET /server_settings, POST /fetch_api_key. Start (model.py): POST /register with its event
// and fetch types, GET /messages for the first unread, POST /users/me/presence. Reading: narrows by channel,
// topic, direct conversation, starred and mentions; GET /users/me/{id}/topics; marking read. Composing
// (ui_tools/boxes.py): typing start/stop, a channel message (`subject`), a direct message, editing (GET
// /messages/{id} for the raw text, PATCH with `topic` always sent) and moving a topic. Reacting: add and remove.
// Searching (core.py): GET /messages with the anchor 10^10. Message info (ui_tools/views.py): the edit history of
// a message edited during the session. Then the event queue lost and registered again, and the deregistration.

const PASSWORD = 'a-Strong-passw0rd-for-tests';

async function uploadEmoji(api: ApiClient, name: string): Promise<void> {
  const form = new FormData();
  form.append('f1', new Blob([new Uint8Array(png())]), `${name}.png`);
  const auth = `Basic ${Buffer.from(`${api.credentials!.email}:${api.credentials!.key}`).toString('base64')}`;
  const response = await fetch(`${api.baseUrl}/api/v1/realm/emoji/${name}`, { method: 'POST', headers: { Authorization: auth }, body: form });
  if (response.status !== 200) throw new Error(`emoji upload failed: ${await response.text()}`);
}

const isMessage = (id: number) => (event: Event) => event.type === 'message' && (event.message as { id: number }).id === id;

t.test('a terminal client session: start, read, compose, react, search, message info', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann Lee', PASSWORD);
  const bob = await api.createUser('bob@example.com', 'Bob Ray', PASSWORD);
  const cat = await api.createUser('cat@example.com', 'Cat Ng', PASSWORD);
  const general = await channel(api, 'general', [1, ann.userId, bob.userId]);
  t.equal((await api.post('/user_groups/create', { name: 'support', description: 'Support', members: [ann.userId, bob.userId] })).status, 200);
  await uploadEmoji(api, 'party');
  const asBob = api.as(bob, { 'User-Agent': TERMINAL_USER_AGENT });
  // The user info popup hands a user's time zone to pytz, which raises on a name it does not know.
  t.equal((await api.as(ann).patch('/settings', { timezone: 'Europe/Berlin' })).status, 200);
  t.equal((await asBob.post('/users/me/presence', { status: 'active', new_user_input: true })).status, 200);

  // What waits for Ann: more of her own (read) messages than the client fetches after its anchor, then a
  // mention, a muted topic, a direct and a group direct message, all unread.
  for (let i = 0; i < 12; i++) await sendToChannel(api.as(ann), 'general', 'earlier', `earlier ${i}`);
  const mention = await sendToChannel(asBob, 'general', 'lunch', 'hi @**Ann Lee**, lunch?');
  await sendToChannel(asBob, 'general', 'noise', 'chatter');
  t.equal((await api.as(ann).post('/user_topics', { stream_id: general, topic: 'noise', visibility_policy: 1 })).status, 200);
  const question = await sendDirect(asBob, [ann.userId], 'are you there?');
  await sendDirect(api.as(cat), [ann.userId, bob.userId], 'group hello');
  t.equal((await api.as(ann).post(`/users/me/muted_users/${cat.userId}`)).status, 200);

  // Login, as cli/run.py does without a zuliprc.
  const anonymous = api.as(null, { 'User-Agent': TERMINAL_USER_AGENT });
  const settings = (await anonymous.get('/server_settings')).body;
  t.same(readProblems('GET /server_settings', settings, { require_email_format_usernames: 'boolean', email_auth_enabled: 'boolean' }), []);
  const login = await anonymous.post('/fetch_api_key', { username: ann.email, password: PASSWORD });
  t.equal(login.status, 200, 'fetch_api_key with the email and password');
  t.same(readProblems('POST /fetch_api_key', login.body, { api_key: 'string' }), []);
  const annClient = new TerminalClient(api.as({ email: ann.email, key: login.body.api_key }, { 'User-Agent': TERMINAL_USER_AGENT }), ann);
  const bobClient = new TerminalClient(asBob, bob);

  await t.test('start', async (t) => {
    for (const client of [annClient, bobClient]) {
      await client.start();
      const first = await client.messages([], null, 30, 10);
      t.ok(first.length > 0, `${client.credentials.email}: the first fetch finds the messages around the first unread`);
      if (client === annClient) {
        // use_first_unread_anchor beside anchor=0: the first unread is the anchor, the focus the client keeps.
        t.equal(client.lastAnchor, mention, "Ann's first unread message is the anchor");
        t.ok(first.some((message) => message.id === mention), 'the first screen holds it');
      }
      const presence = await client.call('POST', '/users/me/presence', { status: 'active', new_user_input: true });
      client.problems.push(...presenceProblems('POST /users/me/presence presences', presence.presences));
    }
    const data = annClient.initial;
    t.equal(data.user_id, ann.userId);
    t.ok((data.svc_feature_level as number) >= 339, 'a feature level the client reads as modern (op, user_id, reaction users)');
    t.same((data.muted_topics as unknown[][]).map((entry) => entry.slice(0, 2)), [['general', 'noise']], 'the muted topic, by channel name');
    t.ok((data.realm_user_groups as { name: string }[]).some((group) => group.name === 'support'), 'the user group, under realm_user_groups');
    t.same((data.muted_users as { id: number }[]).map((entry) => entry.id), [cat.userId]);
    t.ok(Object.values(data.realm_emoji as Record<string, { name: string }>).some((emoji) => emoji.name === 'party'));
    const unread = data.unread_msgs as { mentions: number[]; pms: { sender_id: number }[]; huddles: { user_ids_string: string }[] };
    t.ok(unread.mentions.includes(mention), 'the mention is unread');
    t.same(unread.pms.map((pm) => pm.sender_id), [bob.userId], 'the direct conversation, by sender_id');
    t.same(unread.huddles.map((entry) => entry.user_ids_string), [[ann.userId, bob.userId, cat.userId].sort((a, b) => a - b).join(',')]);
    t.ok(Object.keys(data.presences as object).includes(bob.email), "Bob's presence, by email");
    const me = (data.realm_users as { user_id: number; timezone: string; role: number }[]).find((user) => user.user_id === ann.userId);
    t.match(me, { timezone: 'Europe/Berlin', role: 400 }, 'the user info popup: a time zone pytz knows, a role in ROLE_BY_ID');
    const subscription = (data.subscriptions as { stream_id: number; subscribers: number[] }[]).find((sub) => sub.stream_id === general);
    t.same(subscription?.subscribers.sort((a, b) => a - b), [1, ann.userId, bob.userId], 'include_subscribers');

    // The version comes in every registration, whether the client spells its fetch type with the rename or not.
    for (const spelling of ['svc_version', 'zulip_version']) {
      const result = await annClient.api.post('/register', { event_types: ['message'], fetch_event_types: [spelling] });
      t.same(readProblems(`register fetching ${spelling}`, result.body, { svc_version: 'string', svc_feature_level: 'number' }), []);
    }
    t.same(annClient.takeProblems(), [], 'nothing the client reads at start is missing');
    t.same(bobClient.takeProblems(), []);
  });

  await t.test('read', async (t) => {
    const narrows: unknown[][] = [
      [['stream', 'general']], [['stream', 'general'], ['topic', 'lunch']], [['is', 'private']],
      [['pm-with', bob.email]], [['pm-with', `${bob.email}, ${cat.email}`]], [['is', 'starred']], [['is', 'mentioned']],
    ];
    for (const narrow of narrows) await annClient.messages(narrow, mention);
    t.same((await annClient.messages([['is', 'mentioned']], null)).map((message) => message.id), [mention], 'the mentions narrow');
    t.same(((await annClient.messages([['pm-with', bob.email]], null))[0]?.display_recipient as { email: string }[]).map((user) => user.email).sort(), [ann.email, bob.email]);
    t.same((await annClient.messages([['pm-with', `${bob.email}, ${cat.email}`]], null)).map((message) => message.content), ['<p>group hello</p>'], 'the group conversation, by the emails the client joins with ", "');

    const topics = await annClient.call('GET', `/users/me/${general}/topics`);
    for (const [i, topic] of ((topics.topics ?? []) as unknown[]).entries()) annClient.problems.push(...readProblems(`topics[${i}]`, topic, { name: 'string' }));
    t.ok((topics.topics as { name: string }[]).some((topic) => topic.name === 'lunch'));

    // Reading a message in focus marks it (and the unread ones above it) read; starring flags it.
    await annClient.call('POST', '/messages/flags', { messages: [mention], op: 'add', flag: 'read' });
    await annClient.poll((event) => event.type === 'update_message_flags' && event.flag === 'read');
    await annClient.call('POST', '/messages/flags', { messages: [mention], op: 'add', flag: 'starred' });
    await annClient.poll((event) => event.type === 'update_message_flags' && event.flag === 'starred');
    t.same((await annClient.messages([['is', 'starred']], null)).map((message) => message.id), [mention]);
    t.same(annClient.takeProblems(), [], 'nothing the client reads while reading is missing');
  });

  let annStream = 0;
  await t.test('compose', async (t) => {
    // Opening a direct compose box to Bob and typing sends start, then stop on sending.
    await annClient.call('POST', '/typing', { to: [bob.userId], op: 'start' });
    const typing = await bobClient.poll((event) => event.type === 'typing' && event.op === 'start');
    t.match(typing.find((event) => event.type === 'typing'), { sender: { user_id: ann.userId, email: ann.email } });
    await annClient.call('POST', '/typing', { to: [bob.userId], op: 'stop' });
    await bobClient.poll((event) => event.type === 'typing' && event.op === 'stop');

    const direct = (await annClient.call('POST', '/messages', { type: 'private', to: [bob.userId], content: 'yes, here' })).id as number;
    await bobClient.poll(isMessage(direct));
    await annClient.poll(isMessage(direct));
    // Editing a direct message sends the content alone.
    await annClient.call('PATCH', `/messages/${direct}`, { message_id: direct, content: 'yes, right here' });
    await bobClient.poll((event) => event.type === 'update_message' && event.message_id === direct);
    await annClient.poll((event) => event.type === 'update_message' && event.message_id === direct);

    // A channel message names the channel and the topic as `subject`.
    annStream = (await annClient.call('POST', '/messages', { type: 'stream', to: 'general', subject: 'lunch', content: 'a sandwich at noon' })).id as number;
    const received = await bobClient.poll(isMessage(annStream));
    t.match(received.find(isMessage(annStream)), { message: { subject: 'lunch', display_recipient: 'general' } });
    await annClient.poll(isMessage(annStream));

    // Editing: the raw text first, then the edit with the unchanged topic the compose box always sends.
    const raw = await annClient.call('GET', `/messages/${annStream}`);
    t.same(readProblems('GET /messages/{id}', raw, { raw_content: 'string' }), []);
    await annClient.call('PATCH', `/messages/${annStream}`, { message_id: annStream, propagate_mode: 'change_one', topic: 'lunch', content: 'a sandwich at one' });
    const edit = (await bobClient.poll((event) => event.type === 'update_message' && event.message_id === annStream)).find((event) => event.type === 'update_message');
    t.match(edit, { rendered_content: /at one/ });
    await annClient.poll((event) => event.type === 'update_message' && event.message_id === annStream);

    // Moving a topic: the event names the old topic and every message moved.
    const plan = await sendToChannel(annClient.api, 'general', 'plans', 'friday');
    await bobClient.poll(isMessage(plan));
    await annClient.call('PATCH', `/messages/${plan}`, { message_id: plan, propagate_mode: 'change_all', topic: 'friday plans', content: 'friday' });
    const moved = (await bobClient.poll((event) => event.type === 'update_message' && event.message_id === plan)).find((event) => event.type === 'update_message');
    t.match(moved, { subject: 'friday plans', orig_subject: 'plans', stream_id: general, message_ids: [plan] });
    await annClient.poll((event) => event.type === 'update_message' && event.message_id === plan);
    t.same(annClient.takeProblems(), [], 'nothing the client reads while composing is missing');
    t.same(bobClient.takeProblems(), []);
  });

  let bobQuestion = 0;
  let annReaction: Event | undefined;
  await t.test('react', async (t) => {
    bobQuestion = await sendToChannel(bobClient.api, 'general', 'lunch', 'lunch at noon?');
    await annClient.poll(isMessage(bobQuestion));
    const thumbs = { emoji_name: 'thumbs_up', emoji_code: '1f44d', reaction_type: 'unicode_emoji', message_id: String(bobQuestion) };
    await annClient.call('POST', `/messages/${bobQuestion}/reactions`, thumbs);
    const added = (await bobClient.poll((event) => event.type === 'reaction' && event.op === 'add')).find((event) => event.type === 'reaction');
    t.match(added, { user: { user_id: ann.userId, full_name: 'Ann Lee' }, emoji_code: '1f44d' });
    annReaction = (await annClient.poll((event) => event.type === 'reaction' && event.op === 'add')).find((event) => event.type === 'reaction');

    // A custom emoji, found by its code in realm_emoji; the toggle removes it again.
    const party = Object.entries(annClient.initial.realm_emoji as Record<string, { name: string }>).find(([, emoji]) => emoji.name === 'party')![0];
    const custom = { emoji_name: 'party', emoji_code: party, reaction_type: 'realm_emoji', message_id: String(bobQuestion) };
    await annClient.call('POST', `/messages/${bobQuestion}/reactions`, custom);
    await annClient.poll((event) => event.type === 'reaction' && event.op === 'add' && event.emoji_code === party);
    await annClient.call('DELETE', `/messages/${bobQuestion}/reactions`, custom);
    await annClient.poll((event) => event.type === 'reaction' && event.op === 'remove');
    await bobClient.poll((event) => event.type === 'reaction' && event.op === 'remove');

    const [fetched] = await annClient.messages([['stream', 'general'], ['topic', 'lunch']], bobQuestion, 0, 0);
    t.match(fetched?.reactions, [{ emoji_code: '1f44d', user_id: ann.userId }], "the fetched message carries Ann's reaction");
    t.same(annClient.takeProblems(), [], 'nothing the client reads while reacting is missing');
    t.same(bobClient.takeProblems(), []);
  });

  await t.test('search', async (t) => {
    const search = async (narrow: unknown[][]) => (await annClient.messages(narrow, SEARCH_ANCHOR, 30, 0)).map((message) => message.id);
    t.same(await search([['search', 'sandwich']]), [annStream], 'a search of every message');
    t.same(await search([['stream', 'general'], ['search', 'noon']]), [bobQuestion], 'a search within the channel narrow');
    t.same(await search([['pm-with', bob.email], ['search', 'there']]), [question], 'a search within a direct conversation');
    t.same(annClient.takeProblems(), [], 'nothing the client reads while searching is missing');
  });

  await t.test('message info', async (t) => {
    // Bob edits his question while Ann's client runs: her client marks it EDITED from the event.
    await bobClient.call('PATCH', `/messages/${bobQuestion}`, { message_id: bobQuestion, propagate_mode: 'change_one', topic: 'lunch', content: 'lunch at one?' });
    await annClient.poll((event) => event.type === 'update_message' && event.message_id === bobQuestion);
    t.ok(annClient.edited.has(bobQuestion));
    t.equal(annClient.initial.realm_allow_edit_history, true, 'the popup offers the edit history');

    const history = await annClient.call('GET', `/messages/${bobQuestion}/history`);
    const snapshots = (history.message_history ?? []) as Record<string, unknown>[];
    t.equal(snapshots.length, 2, 'the original and the edit');
    const known = new Set((annClient.initial.realm_users as { user_id: number }[]).map((user) => user.user_id));
    snapshots.forEach((snapshot, i) => {
      annClient.problems.push(...readProblems(`message_history[${i}]`, snapshot, {
        content: 'string', topic: 'string', timestamp: 'number', 'user_id?': 'number', 'prev_content?': 'string', 'prev_topic?': 'string',
      }));
      // user_name_from_id raises "Invalid user ID." for a user the client does not know.
      if (typeof snapshot.user_id === 'number' && !known.has(snapshot.user_id)) annClient.problems.push(`message_history[${i}].user_id is unknown`);
    });
    t.match(snapshots[1], { prev_content: 'lunch at noon?', content: 'lunch at one?', user_id: bob.userId });

    // The popup lists `reaction["user"]["full_name"]` of the reactions the client holds for the message. A
    // message's reactions carry no `user` object since feature level 328 (the document's EmojiReaction forbids
    // it, the original too), so that read holds for the ones the reaction handler appended from events, whose
    // `user` came back at feature level 339: {user, reaction_type, emoji_code, emoji_name} of Ann's thumbs up.
    const held = { user: annReaction?.user, reaction_type: annReaction?.reaction_type, emoji_code: annReaction?.emoji_code, emoji_name: annReaction?.emoji_name };
    t.same(reactionProblems('the reaction held from the event', held, true), []);
    t.match(held, { user: { full_name: 'Ann Lee' }, emoji_name: 'thumbs_up' });

    const raw = await annClient.call('GET', `/messages/${bobQuestion}`);
    t.same(readProblems('GET /messages/{id} (full raw message)', raw, { raw_content: 'string' }), []);
    t.same(annClient.takeProblems(), [], 'nothing the message info popup reads is missing');
  });

  await t.test('a lost queue, registered again, and the exit', async (t) => {
    const lost = await annClient.api.get('/events', { queue_id: 'no-such-queue', last_event_id: -1 });
    t.match(lost, { status: 400, body: { code: 'BAD_EVENT_QUEUE_ID', msg: /^Bad event queue ID: / } });
    // poll_for_events registers again without fetching: the python client sends the absent fetch types as JSON null.
    const again = await annClient.register(null);
    t.same(readProblems('register again', again, { max_message_id: 'number', queue_id: 'string', last_event_id: 'number' }), []);
    t.same(await annClient.call('DELETE', '/events', { queue_id: annClient.queueId }), { result: 'success', msg: '' }, 'deregister on exit');
    t.same(annClient.takeProblems(), []);
  });
});

t.test('settings, subscriptions and custom emoji changes reach the client in the shapes it reads', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann Lee', PASSWORD);
  const cat = await api.createUser('cat@example.com', 'Cat Ng', PASSWORD);
  const general = await channel(api, 'general', [1, ann.userId]);
  const client = new TerminalClient(api.as(ann, { 'User-Agent': TERMINAL_USER_AGENT }), ann);
  await client.start();

  // From another client of Ann's: the legacy events beside user_settings, as the client declared no capabilities.
  t.equal((await api.as(ann).patch('/settings', { twenty_four_hour_time: true })).status, 200);
  const display = await client.poll((event) => event.type === 'update_display_settings');
  t.match(display.find((event) => event.type === 'update_display_settings'), { setting_name: 'twenty_four_hour_time', setting: true });
  t.equal((await api.as(ann).patch('/settings', { pm_content_in_desktop_notifications: false })).status, 200);
  const notification = await client.poll((event) => event.type === 'update_global_notifications');
  t.match(notification.find((event) => event.type === 'update_global_notifications'), { notification_name: 'pm_content_in_desktop_notifications', setting: false });
  t.equal((await api.as(ann).patch('/settings', { send_private_typing_notifications: false })).status, 200);
  await client.poll((event) => event.type === 'user_settings' && event.property === 'send_private_typing_notifications');

  // The stream popup's toggles, and a new subscriber.
  await client.call('POST', '/users/me/subscriptions/properties', { subscription_data: [{ stream_id: general, property: 'pin_to_top', value: true }] });
  await client.poll((event) => event.type === 'subscription' && event.property === 'pin_to_top');
  await client.call('POST', '/users/me/subscriptions/properties', { subscription_data: [{ stream_id: general, property: 'is_muted', value: true }] });
  const muted = await client.poll((event) => event.type === 'subscription' && event.property === 'in_home_view');
  t.match(muted.find((event) => event.property === 'in_home_view'), { stream_id: general, value: false }, 'muting is announced as in_home_view too');
  t.equal((await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }], principals: [cat.userId] })).status, 200);
  const peer = await client.poll((event) => event.type === 'subscription' && event.op === 'peer_add');
  t.match(peer.find((event) => event.op === 'peer_add'), { stream_ids: [general], user_ids: [cat.userId] });

  await uploadEmoji(api, 'wave');
  const emoji = await client.poll((event) => event.type === 'realm_emoji');
  t.ok(Object.values(emoji.find((event) => event.type === 'realm_emoji')!.realm_emoji as Record<string, { name: string }>).some((entry) => entry.name === 'wave'));
  t.same(client.takeProblems(), [], 'nothing the event handlers read is missing');
});
