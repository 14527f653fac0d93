import t from 'tap';
import { channel, drain, ofType, sendDirect, sendToChannel } from './helpers/messages.ts';
import { startTestServer } from './helpers/server.ts';

t.test('channel messages: by name or id; topic and content rules', async (t) => {
  const { api } = await startTestServer(t);
  const general = await channel(api, 'general', [1]);
  const byName = await sendToChannel(api, 'General', 'greetings', 'hello');
  const byId = await sendToChannel(api, general, 'greetings', 'again');
  t.same([byName, byId], [1, 2], 'ids are given in order');
  const got = (await api.get(`/messages/${byName}`)).body;
  t.match(got, { raw_content: 'hello', message: { id: 1, type: 'stream', stream_id: general, display_recipient: 'general', subject: 'greetings', content: '<p>hello</p>', content_type: 'text/html', flags: ['read'] } });

  // The empty topic's display names are read as the empty topic, which clients without the capability see by that name.
  for (const name of ['general chat', '(no topic)', '', '  ']) {
    const id = await sendToChannel(api, general, name, 'x');
    t.equal((await api.get(`/messages/${id}`, { allow_empty_topic_name: true })).body.message.subject, '', `'${name}' is the empty topic`);
    t.equal((await api.get(`/messages/${id}`)).body.message.subject, 'general chat');
  }
  const long = await sendToChannel(api, general, 't'.repeat(70), 'x');
  t.equal((await api.get(`/messages/${long}`)).body.message.subject, `${'t'.repeat(57)}...`, 'a long topic is cut to max_topic_length');
  const big = await sendToChannel(api, general, 'big', 'y'.repeat(10_050));
  const raw = (await api.get(`/messages/${big}`)).body.raw_content as string;
  t.equal(raw.length, 10_000, 'long content is cut to max_message_length');
  t.ok(raw.endsWith('\n[message truncated]'));

  const errors: [Record<string, unknown>, string, string][] = [
    [{ type: 'stream', to: 'general', content: 'x' }, 'BAD_REQUEST', 'Missing topic'],
    [{ type: 'stream', to: 'general', topic: 'a\u0000b', content: 'x' }, 'BAD_REQUEST', 'Topic must not contain null bytes'],
    [{ type: 'stream', to: 'general', topic: 't', content: '  \n ' }, 'BAD_REQUEST', 'Message must not be empty'],
    [{ type: 'stream', to: 'general', topic: 't', content: 'a\u0000' }, 'BAD_REQUEST', 'Message must not contain null bytes'],
    [{ type: 'stream', to: 'nowhere', topic: 't', content: 'x' }, 'STREAM_DOES_NOT_EXIST', "Channel 'nowhere' does not exist"],
    [{ type: 'stream', to: '999', topic: 't', content: 'x' }, 'STREAM_DOES_NOT_EXIST', "Channel with ID '999' does not exist"],
    [{ type: 'letter', to: 'general', topic: 't', content: 'x' }, 'BAD_REQUEST', 'Invalid type'],
    [{ type: 'stream', topic: 't', content: 'x' }, 'REQUEST_VARIABLE_MISSING', "Missing 'to' argument"],
  ];
  for (const [params, code, msg] of errors) {
    const result = await api.post('/messages', params);
    t.equal(result.status, 400, msg);
    t.match(result.body, { code, msg: new RegExp(msg.replace(/[()]/g, '\\$&')) });
  }
  t.match((await api.post('/messages', { type: 'stream', to: 'nowhere', topic: 't', content: 'x' })).body, { stream: 'nowhere' });
  t.match((await api.post('/messages', { type: 'channel', to: '999', topic: 't', content: 'x' })).body, { stream_id: 999 });
});

t.test('who may post to a channel', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const guest = await api.createUser('guest@example.com', 'Guest');
  await api.patch(`/users/${guest.userId}`, { role: 600 });
  await channel(api, 'secret', [ann.userId], { invite_only: true });
  await channel(api, 'open', [1]);
  const missing = await api.post('/messages', { type: 'stream', to: 'nowhere', topic: 't', content: 'x' });
  const hidden = await api.as(guest).post('/messages', { type: 'stream', to: 'secret', topic: 't', content: 'x' });
  t.same({ ...hidden.body, stream: 'nowhere', msg: hidden.body.msg.replace('secret', 'nowhere') }, missing.body, 'a hidden private channel answers like a missing one');
  t.match((await api.post('/messages', { type: 'stream', to: 'secret', topic: 't', content: 'x' })).body.msg, /Not authorized to send to channel 'secret'/, 'an administrator sees it but is not subscribed');
  t.equal((await api.as(ann).post('/messages', { type: 'stream', to: 'secret', topic: 't', content: 'x' })).status, 200);
  t.match((await api.as(guest).post('/messages', { type: 'stream', to: 'open', topic: 't', content: 'x' })).body.code, 'STREAM_DOES_NOT_EXIST', 'guests see (and post to) only channels they are in');
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'open' }], principals: [guest.userId] });
  t.equal((await api.as(guest).post('/messages', { type: 'stream', to: 'open', topic: 't', content: 'x' })).status, 200);

  const admins = (await api.get('/user_groups')).body.user_groups.find((g: { name: string }) => g.name === 'role:administrators').id;
  const announce = await channel(api, 'announce', [1, ann.userId], { can_send_message_group: admins });
  t.match((await api.as(ann).post('/messages', { type: 'stream', to: announce, topic: 't', content: 'x' })).body, { code: 'BAD_REQUEST', msg: 'You do not have permission to post in this channel.' });
  t.equal((await api.post('/messages', { type: 'stream', to: announce, topic: 't', content: 'x' })).status, 200);
  await api.delete(`/streams/${announce}`);
  t.match((await api.post('/messages', { type: 'stream', to: announce, topic: 't', content: 'x' })).body.msg, /Not authorized/, 'archived channels take no messages');
});

t.test('direct messages: by id or email; one recipient_id per conversation', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const out = await sendDirect(api, [ann.userId], 'hi Ann');
  const back = await sendDirect(api.as(ann), ['owner@example.com'], 'hi Owner');
  const group = await sendDirect(api, [ann.email, bob.userId], 'hi both');
  const self = await sendDirect(api, [1], 'note to self');
  const view = async (id: number) => (await api.get(`/messages/${id}`)).body.message;
  const [a, b, g, s] = [await view(out), await view(back), await view(group), await view(self)];
  t.equal(a.recipient_id, b.recipient_id, 'both directions of a 1:1 share the recipient id (level 327)');
  t.not(a.recipient_id, g.recipient_id);
  t.not(a.recipient_id, s.recipient_id);
  t.same(g.display_recipient.map((r: { id: number }) => r.id), [1, ann.userId, bob.userId]);
  t.match(g.display_recipient[1], { id: ann.userId, email: 'ann@example.com', full_name: 'Ann', is_mirror_dummy: false });
  t.match(a, { type: 'private', subject: '', flags: ['read'] });
  t.notOk('stream_id' in a);
  t.same(s.display_recipient.map((r: { id: number }) => r.id), [1]);
  t.equal((await api.as(ann).get(`/messages/${out}`)).body.message.flags.length, 0, 'unread for the recipient');

  t.match((await api.post('/messages', { type: 'private', to: [999], content: 'x' })).body, { code: 'BAD_REQUEST', msg: 'Invalid user ID 999' });
  t.match((await api.post('/messages', { type: 'direct', to: ['nobody@example.com'], content: 'x' })).body.msg, "Invalid email 'nobody@example.com'");
  t.match((await api.post('/messages', { type: 'direct', to: [], content: 'x' })).body.msg, 'Message must have recipients');
  t.equal((await api.post('/messages', { type: 'direct', to: 'ann@example.com,bob@example.com', content: 'x' })).status, 200, 'a comma-separated email list');
  await api.delete(`/users/${bob.userId}`);
  t.match((await api.post('/messages', { type: 'direct', to: [bob.userId], content: 'x' })).body.msg, /no longer using/);
});

t.test('mentions set flags for the recipients they reach', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const cat = await api.createUser('cat@example.com', 'Cat');
  const general = await channel(api, 'general', [1, ann.userId, bob.userId]);
  const flags = async (who: typeof ann | null, id: number) => (await (who ? api.as(who) : api).get(`/messages/${id}`)).body.message.flags;

  const direct = await sendToChannel(api, general, 't', 'hi @**Ann** and @_**Bob**, not @**Cat**');
  t.same(await flags(ann, direct), ['mentioned']);
  t.same(await flags(bob, direct), [], 'a silent mention sets no flag');
  t.same(await flags(null, direct), ['read'], 'read for the sender');
  t.match((await api.get(`/messages/${direct}`)).body.message.content, `<span class="user-mention" data-user-id="${ann.userId}">@Ann</span>`);
  t.match((await api.get(`/messages/${direct}`)).body.message.content, `<span class="user-mention silent" data-user-id="${bob.userId}">Bob</span>`);
  t.equal(cat.userId, 4, 'Cat is not subscribed: the mention reaches no one');

  const all = await sendToChannel(api.as(ann), general, 't', '@**all** lunch', { read_by_sender: false });
  t.same(await flags(bob, all), ['stream_wildcard_mentioned', 'wildcard_mentioned']);
  t.same(await flags(ann, all), ['stream_wildcard_mentioned', 'wildcard_mentioned'], 'read_by_sender false leaves it unread for the sender');
  const topic = await sendToChannel(api, general, 't', '@**topic** news');
  t.same(await flags(ann, topic), ['topic_wildcard_mentioned', 'wildcard_mentioned'], 'Ann has posted in the topic');
  t.same(await flags(bob, topic), [], 'Bob has not');

  const group = (await api.post('/user_groups/create', { name: 'crew', description: 'd', members: [bob.userId] })).body.group_id;
  const viaGroup = await sendToChannel(api, general, 't', 'ping @*crew*');
  t.same(await flags(bob, viaGroup), ['mentioned']);
  t.match((await api.get(`/messages/${viaGroup}`)).body.message.content, `<span class="user-group-mention" data-user-group-id="${group}">@crew</span>`);
  const me = await sendToChannel(api, general, 't', '/me waves');
  t.equal((await api.get(`/messages/${me}`)).body.message.is_me_message, true);

  // Wildcards in a big channel need can_mention_many_users_group (administrators by default).
  const many = [];
  for (let i = 0; i < 14; i++) many.push((await api.post('/users', { email: `u${i}@example.com`, password: 'a-Strong-passw0rd-for-tests', full_name: `U${i}` })).body.user_id);
  await channel(api, 'general', many);
  const refused = await api.as(ann).post('/messages', { type: 'stream', to: 'general', topic: 't', content: '@**everyone** hi' });
  t.match(refused.body, { code: 'STREAM_WILDCARD_MENTION_NOT_ALLOWED' });
  t.equal((await api.post('/messages', { type: 'stream', to: 'general', topic: 't', content: '@**everyone** hi' })).status, 200, 'administrators may');
  t.equal((await api.as(ann).post('/messages', { type: 'stream', to: 'general', topic: 't', content: '@_**everyone** hi' })).status, 200, 'a silent wildcard is no mention');
});

t.test('POST /messages/render', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann Lee');
  const general = await channel(api, 'general', [1]);
  const rendered = (await api.post('/messages/render', { content: '**hi** @**Ann Lee** #**general** :tada:\n```py\nx < 1\n```' })).body.rendered;
  t.match(rendered, '<strong>hi</strong>');
  t.match(rendered, `<span class="user-mention" data-user-id="${ann.userId}">@Ann Lee</span>`);
  t.match(rendered, `<a class="stream" data-stream-id="${general}" href="/#narrow/channel/${general}-general">#general</a>`);
  t.match(rendered, 'class="emoji emoji-1f389"');
  t.match(rendered, '<div class="codehilite" data-code-language="py"><pre><span></span><code>x &lt; 1\n</code></pre></div>');
  t.equal((await api.get('/messages', { anchor: 'newest', num_before: 5, num_after: 0 })).body.messages.length, 0, 'rendering sends nothing');

  // Math in the original's katex spans, with the TeX source for the client to typeset.
  const math = (await api.post('/messages/render', { content: 'So $$a<b^2$$, not $5 or `$$x$$`\n```math\n\\int_0^1 x\\,dx\n\nE=mc^2\n```' })).body.rendered;
  t.match(math, '<p>So <span class="katex">a&lt;b^2</span>, not $5 or <code>$$x$$</code></p>');
  t.match(math, '<p><span class="katex-display"><span class="katex">\\int_0^1 x\\,dx</span></span></p>\n<p><span class="katex-display"><span class="katex">E=mc^2</span></span></p>', 'a math block: one formula per paragraph');
});

t.test('a mention by name follows the names as they change: a rename, a namesake, a deactivation', async (t) => {
  // The names are kept until the realm changes (render.ts namesOf): each render after a change reads them anew.
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann Lee');
  const mentioned = async (name: string) => {
    const rendered = (await api.post('/messages/render', { content: `@**${name}**` })).body.rendered as string;
    return /data-user-id="(\d+)"/.exec(rendered)?.[1] ?? null;
  };
  t.equal(await mentioned('Ann Lee'), String(ann.userId));
  t.equal((await api.patch(`/users/${ann.userId}`, { full_name: 'Ann Smith' })).status, 200);
  t.equal(await mentioned('Ann Lee'), null, 'the old name mentions nobody');
  t.equal(await mentioned('ann smith'), String(ann.userId), 'the new name, in any case');
  const other = await api.createUser('other@example.com', 'Ann Smith');
  t.equal(await mentioned('Ann Smith'), null, 'a name two users share mentions nobody');
  t.equal(await mentioned(`Ann Smith|${other.userId}`), String(other.userId), 'the id tells them apart');
  t.equal((await api.delete(`/users/${other.userId}`)).status, 200);
  t.equal(await mentioned('Ann Smith'), String(ann.userId), 'a deactivated namesake no longer counts');
});

t.test('message events reach the recipients only, shaped per queue', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const cat = await api.createUser('cat@example.com', 'Cat');
  const general = await channel(api, 'general', [1, ann.userId]);
  await channel(api, 'secret', [1, ann.userId], { invite_only: true });
  const caps = { client_capabilities: { empty_topic_name: true } };
  const owner = await api.register({ event_types: ['message', 'stream'], apply_markdown: true, ...caps });
  const ownerOther = await api.register({ event_types: ['message'], apply_markdown: true, ...caps });
  const annHtml = await api.as(ann).register({ event_types: ['message'], apply_markdown: true, ...caps });
  const annRaw = await api.as(ann).register({ event_types: ['message'], client_extavatar: false, ...caps });
  const bobQueue = await api.as(bob).register({ event_types: ['message'], ...caps });
  const catAll = await api.as(cat).register({ event_types: ['message'], all_public_streams: true, ...caps });
  const annNarrow = await api.as(ann).register({ event_types: ['message'], narrow: [['stream', 'secret']], ...caps });

  const first = await sendToChannel(api, general, 'news', '**hi**', { queue_id: owner.queueId, local_id: '7.01' });
  await sendToChannel(api, 'secret', 'inner', 'hush');
  await sendDirect(api, [ann.userId], 'psst');

  const ownerEvents = await drain(api, owner.queueId);
  t.match(ofType(ownerEvents, 'message')[0], { message: { id: first }, flags: ['read'], local_message_id: '7.01' }, 'the echoing queue gets local_message_id');
  t.notOk(ofType(ownerEvents, 'message').slice(1).some((e) => 'local_message_id' in e));
  t.notOk((await drain(api, ownerOther.queueId)).some((e) => 'local_message_id' in e), "the sender's other queues do not");
  t.match(ofType(ownerEvents, 'stream'), [{ op: 'update', stream_id: general, property: 'first_message_id', value: first }], 'the first message of a channel is announced once');

  const html = ofType(await drain(api.as(ann), annHtml.queueId), 'message');
  t.same(html.map((e) => (e.message as { id: number }).id), [1, 2, 3]);
  t.match(html[0], { flags: [], message: { content: '<p><strong>hi</strong></p>', content_type: 'text/html', avatar_url: null, subject: 'news', sender_realm_str: '' } });
  const raw = ofType(await drain(api.as(ann), annRaw.queueId), 'message');
  t.match(raw[0], { message: { content: '**hi**', content_type: 'text/x-markdown', avatar_url: /^\/user_avatars\/default\// } });
  t.same((await drain(api.as(bob), bobQueue.queueId)).length, 0, 'Bob is in none of the conversations');
  const catEvents = ofType(await drain(api.as(cat), catAll.queueId), 'message');
  t.same(catEvents.map((e) => (e.message as { id: number }).id), [first], 'all_public_streams: public channel messages only');
  t.same(ofType(await drain(api.as(ann), annNarrow.queueId), 'message').map((e) => (e.message as { subject: string }).subject), ['inner'], 'a narrowed queue takes matching messages only');
});

// Regression: a send naming a recipient's queue as its echo queue left that queue without the message.
t.test("a local echo naming another user's queue: that queue gets the message, without local_message_id", async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const general = await channel(api, 'general', [1, ann.userId]);
  const annQueue = await api.as(ann).register({ event_types: ['message'] });
  const id = await sendToChannel(api, general, 'news', 'hello', { queue_id: annQueue.queueId, local_id: '1.01' });
  const events = ofType(await drain(api.as(ann), annQueue.queueId), 'message');
  t.same(events.map((e) => (e.message as { id: number }).id), [id]);
  t.notOk('local_message_id' in events[0]!, 'the echo is for the sender');
});
