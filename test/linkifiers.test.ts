import { rmSync } from 'node:fs';
import t from 'tap';
import { MAX_LINKIFIER_TEXT_LENGTH } from '../actors/realm/linkifiers/validate.ts';
import { Role } from '../actors/realm/state.ts';
import { channel, drain, ofType, sendDirect, sendToChannel } from './helpers/messages.ts';
import { startChild } from './helpers/child.ts';
import { startTestServer, tempDir, type ApiClient } from './helpers/server.ts';

type Linkifier = { id: number; pattern: string; url_template: string };

const listOf = async (api: ApiClient) => (await api.get('/realm/linkifiers')).body.linkifiers as Linkifier[];

async function add(api: ApiClient, pattern: string, urlTemplate: string): Promise<number> {
  const result = await api.post('/realm/filters', { pattern, url_template: urlTemplate });
  if (result.status !== 200) throw new Error(`add failed: ${JSON.stringify(result.body)}`);
  return result.body.id;
}

const TRAC = ['#(?P<id>[0-9]+)', 'https://trac.example.com/ticket/{id}'] as const;
const GITHUB = ['(?P<org>[a-zA-Z0-9_-]+)/(?P<repo>[a-zA-Z0-9_-]+)#(?P<id>[0-9]+)', 'https://github.com/{org}/{repo}/issues/{id}'] as const;

/** A server with an owner (the api), an administrator, a moderator, a member and a guest. */
async function organization(t: { teardown(fn: () => unknown): void }) {
  const server = await startTestServer(t);
  const { api } = server;
  const make = async (email: string, role: number | null) => {
    const user = await api.createUser(email, email.split('@')[0]);
    if (role !== null) await api.patch(`/users/${user.userId}`, { role });
    return user;
  };
  const ids = {
    admin: await make('admin@example.com', Role.administrator),
    moderator: await make('moderator@example.com', Role.moderator),
    ann: await make('ann@example.com', null),
    guest: await make('guest@example.com', Role.guest),
  };
  return { server, api, ids, admin: api.as(ids.admin), moderator: api.as(ids.moderator), ann: api.as(ids.ann), guest: api.as(ids.guest) };
}

t.test('administrators add, update, reorder and remove linkifiers; everyone lists them', async (t) => {
  const { api, admin, moderator, ann, guest } = await organization(t);
  for (const [who, client] of [['member', ann], ['moderator', moderator], ['guest', guest]] as const) {
    for (const refused of [
      await client.post('/realm/filters', { pattern: TRAC[0], url_template: TRAC[1] }),
      await client.post('/realm/filters', {}),
      await client.patch('/realm/filters/1', { pattern: TRAC[0], url_template: TRAC[1] }),
      await client.delete('/realm/filters/1'),
      await client.patch('/realm/linkifiers', { ordered_linkifier_ids: [] }),
    ]) {
      t.match(refused, { status: 400, body: { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' } }, who);
    }
  }
  t.same(await listOf(guest), []);
  const trac = await add(admin, `  ${TRAC[0]} `, TRAC[1]);
  const github = await add(api, ...GITHUB);
  t.same(await listOf(guest), [
    { pattern: TRAC[0], url_template: TRAC[1], id: trac },
    { pattern: GITHUB[0], url_template: GITHUB[1], id: github },
  ], 'in order of creation, the pattern trimmed');

  t.equal((await admin.patch(`/realm/filters/${trac}`, { pattern: '#(?P<id>[0-9]{2,})', url_template: 'https://trac.example.com/t/{id}' })).status, 200);
  t.same((await listOf(ann))[0], { pattern: '#(?P<id>[0-9]{2,})', url_template: 'https://trac.example.com/t/{id}', id: trac }, 'updated in place');
  t.match(await admin.patch(`/realm/filters/${github + 10}`, { pattern: TRAC[0], url_template: TRAC[1] }), { body: { msg: 'Linkifier not found.' } });
  t.match(await admin.patch(`/realm/filters/${trac}`, { pattern: TRAC[0] }), { body: { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'url_template' argument" } });

  // Reordering: every linkifier exactly once.
  const jira = await add(admin, 'JIRA-(?P<id>\\d+)', 'https://jira.example.com/browse/JIRA-{id}');
  t.equal((await admin.patch('/realm/linkifiers', { ordered_linkifier_ids: [jira, trac, github] })).status, 200);
  t.same((await listOf(ann)).map((linkifier) => linkifier.id), [jira, trac, github]);
  t.match(await admin.patch('/realm/linkifiers', { ordered_linkifier_ids: [jira, trac, github, jira] }), { body: { msg: 'The ordered list must not contain duplicated linkifiers' } });
  t.match(await admin.patch('/realm/linkifiers', { ordered_linkifier_ids: [jira, trac] }), { body: { msg: 'The ordered list must enumerate all existing linkifiers exactly once' } });
  t.match(await admin.patch('/realm/linkifiers', { ordered_linkifier_ids: [jira, trac, github, 999] }), { body: { msg: 'The ordered list must enumerate all existing linkifiers exactly once' } });
  t.match(await admin.patch('/realm/linkifiers', { ordered_linkifier_ids: 'first' }), { body: { msg: '"ordered_linkifier_ids" is not valid JSON.' } });
  const later = await add(admin, 'PR (?P<id>\\d+)', 'https://example.com/pr/{id}');
  t.same((await listOf(ann)).map((linkifier) => linkifier.id), [jira, trac, github, later], 'a new linkifier comes last');

  t.equal((await admin.delete(`/realm/filters/${trac}`)).status, 200);
  t.same((await listOf(ann)).map((linkifier) => linkifier.id), [jira, github, later], 'removing keeps the order');
  t.match(await admin.delete(`/realm/filters/${trac}`), { status: 400, body: { code: 'BAD_REQUEST', msg: 'Linkifier not found.' } });
  t.match(await admin.delete('/realm/filters/x'), { body: { msg: 'filter_id is not an integer' } });
});

t.test('patterns and templates are checked as the original checks them', async (t) => {
  const { api } = await startTestServer(t);
  await add(api, ...TRAC);
  const cases: [string, string, string, Record<string, string[]>?][] = [
    ['', 'https://realm.com/my_realm_filter/{id}', 'This field cannot be blank.'],
    ['#(?P<id>\\d+)', '', 'This field cannot be blank.'],
    ['(foo', 'https://realm.com/{id}', 'Bad regular expression: missing ): (foo'],
    ['ZUL-(?P<id>\\d????)', 'https://realm.com/{id}', 'Bad regular expression: bad repetition operator: ????'],
    // RE2's wording (the original passes RE2's error on); "invalid or unsupported Perl syntax" is Go's.
    ['(?<=#)(?P<id>\\d+)', 'https://realm.com/{id}', 'Bad regular expression: invalid perl operator: (?<='],
    ['(?P<id>\\d)\\1', 'https://realm.com/{id}', 'Bad regular expression: invalid escape sequence: \\1'],
    ['[z-a](?P<id>\\d)', 'https://realm.com/{id}', 'Bad regular expression: invalid character class range: z-a'],
    ['(?P<id>\\d)(?P<id>\\d)', 'https://realm.com/{id}', 'Bad regular expression: duplicate capture group name: id'],
    ['(?P<linkifier_actual_match>\\d)', 'https://realm.com/{linkifier_actual_match}', 'Bad regular expression: duplicate capture group name: linkifier_actual_match'],
    ['ZUL-(?P<id>\\d+)', '$fgfg', "Group 'id' in linkifier pattern is not present in URL template."],
    ['ZUL-(?P<id>\\d+)', 'https://realm.com/my_realm_filter/', "Group 'id' in linkifier pattern is not present in URL template."],
    ['ZUL-(?P<id>\\d+)', 'https://realm.com/{hello}', "Group 'hello' in URL template is not present in linkifier pattern."],
    ['ZUL-(?P<id>\\d+)-(?P<hello>\\d+)-(?P<world>\\d+)', 'https://realm.com/{hello}', "Group 'id' in linkifier pattern is not present in URL template."],
    ['ZUL-(?P<id>\\d+)', 'https://realm.com/{id', 'Invalid URL template.', { url_template: ['Invalid URL template.'] }],
    ['ZUL-(?P<id>\\d+)', 'https://realm.com/{{}', 'Invalid URL template.'],
    ['ZUL-(?P<id>\\d+)', 'https://realm.com/{//id}', 'Invalid URL template.'],
    ['ZUL-(?P<id>\\d+)', 'https://realm.com/{id++}', 'Invalid URL template.'],
    [TRAC[0], 'https://elsewhere.example.com/{id}', 'Realm filter with this Realm and Pattern already exists.', { __all__: ['Realm filter with this Realm and Pattern already exists.'] }],
    ['', '', 'This field cannot be blank.', { pattern: ['This field cannot be blank.'], url_template: ['This field cannot be blank.'] }],
  ];
  for (const [pattern, template, message, errors] of cases) {
    const result = await api.post('/realm/filters', { pattern, url_template: template });
    t.match(result, { status: 400, body: { code: 'BAD_REQUEST', msg: message } }, `${pattern} ${template}`);
    if (errors) t.same(result.body.errors, errors, 'each field\'s problems');
  }
  t.equal((await listOf(api)).length, 1, 'nothing added');

  for (const [pattern, template] of [
    ['ZUL-(?P<id>\\d+)', 'https://realm.com/my_realm_filter/#hashtag/{id}'],
    ['_code=(?P<id>[0-9a-zA-Z]+)', 'https://example.com/product/{id}/details'],
    ['!(?P<id>[0-9]+)', 'https://realm.com/index.pl?Action=AgentTicketZoom;TicketNumber={id}'],
    ['ZUL-URL-(?P<id>\\d+)', 'https://example.com/%ba/{id}'],
    ['(?i)case-(?P<id>\\d+)', 'https://example.com/{id}'],
    ['no groups at all', 'https://example.com/static'],
    [
      'FOO_(?P<id>[a-f]{5});(?P<zone>[a-f]);(?P<domain>[a-z]+);(?P<location>[a-z]+);(?P<name>[a-z]{2,8});(?P<chapter>[0-9]{2,3});(?P<fragment>[a-z]{2,8})',
      'https://zone_{zone}{.domain}.net/ticket{/location}{/id}{?name,chapter}{#fragment:5}',
    ],
  ]) {
    t.equal((await api.post('/realm/filters', { pattern: pattern!, url_template: template! })).status, 200, `${pattern} ${template}`);
  }
  // The same checks on update; the linkifier's own pattern is no duplicate of itself.
  const [first] = await listOf(api);
  t.match(await api.patch(`/realm/filters/${first!.id}`, { pattern: '(foo', url_template: TRAC[1] }), { body: { msg: 'Bad regular expression: missing ): (foo' } });
  t.match(await api.patch(`/realm/filters/${first!.id}`, { pattern: 'ZUL-(?P<id>\\d+)', url_template: TRAC[1] }), { body: { msg: 'Realm filter with this Realm and Pattern already exists.' } });
  t.equal((await api.patch(`/realm/filters/${first!.id}`, { pattern: TRAC[0], url_template: 'https://trac.example.com/new/{id}' })).status, 200);
});

t.test('events and registration: to everyone in the realm, only with the linkifier_url_template capability', async (t) => {
  const { api, admin, ann, guest } = await organization(t);
  const trac = await add(api, ...TRAC);
  const capable = { client_capabilities: { linkifier_url_template: true } };
  const queues: [string, ApiClient, Awaited<ReturnType<ApiClient['register']>>][] = [
    ['member', ann, await ann.register({ fetch_event_types: ['realm_linkifiers', 'realm_filters'], ...capable })],
    ['guest', guest, await guest.register({ fetch_event_types: ['realm_linkifiers'], ...capable })],
    ['without the capability', admin, await admin.register({ fetch_event_types: ['realm_linkifiers'] })],
    ['declining it', admin, await admin.register({ fetch_event_types: ['realm_linkifiers'], client_capabilities: { linkifier_url_template: false } })],
    ['not asking for the type', ann, await ann.register({ event_types: ['message'], ...capable })],
  ];
  const expected = [{ pattern: TRAC[0], url_template: TRAC[1], id: trac }];
  t.same(queues[0]![2].body.realm_linkifiers, expected);
  t.same(queues[0]![2].body.realm_filters, [], 'the legacy form is always empty');
  t.same(queues[1]![2].body.realm_linkifiers, expected, 'guests too');
  t.same(queues[2]![2].body.realm_linkifiers, [], 'none without the capability');
  t.same(queues[3]![2].body.realm_linkifiers, []);

  const github = await add(admin, ...GITHUB);
  await admin.patch(`/realm/filters/${github}`, { pattern: GITHUB[0], url_template: 'https://github.com/{org}/{repo}/pull/{id}' });
  await admin.patch('/realm/linkifiers', { ordered_linkifier_ids: [github, trac] });
  await admin.patch('/realm/linkifiers', { ordered_linkifier_ids: [github, trac] });
  await admin.delete(`/realm/filters/${github}`);
  const idLists = [[trac, github], [trac, github], [github, trac], [trac]];
  for (const [who, client, { queueId }] of queues) {
    const events = await drain(client, queueId);
    const received = ofType(events, 'realm_linkifiers').map((event) => (event.realm_linkifiers as Linkifier[]).map((linkifier) => linkifier.id));
    t.same(received, who === 'member' || who === 'guest' ? idLists : [], `${who}: one event per change (an unchanged order is none), the whole list`);
    t.equal(events.length, received.length, `${who}: nothing else`);
  }
  t.same(ofType(await drain(ann, queues[0]![2].queueId), 'realm_linkifiers'), []);
});

t.test('linkifiers in sent messages, previews and topic_links', async (t) => {
  const { api, ann, admin, ids } = await organization(t);
  const lobby = await channel(api, 'lobby', [ids.ann.userId, ids.admin.userId]);
  const trac = await add(api, ...TRAC);
  const github = await add(api, ...GITHUB);
  await add(api, '(?i)jira-(?P<id>\\d+)', 'https://jira.example.com/browse{?id}');
  const events = await ann.register({ event_types: ['message', 'update_message'], apply_markdown: true });

  const sent = await sendToChannel(ann, 'lobby', 'about #12 and zulip/zulip#34, see https://example.com/x', [
    'Fixes #123, zulip/zulip#45 and JIRA-7.',
    'Not in `#9` or [a link](https://a.example.com/#10), nor a#11 or #12x or \\#13; but (#14) and **#15** are.',
  ].join('\n'));
  const message = (await ann.get(`/messages/${sent}`)).body.message;
  t.equal(message.content, [
    '<p>Fixes <a href="https://trac.example.com/ticket/123">#123</a>, <a href="https://github.com/zulip/zulip/issues/45">zulip/zulip#45</a> '
      + 'and <a href="https://jira.example.com/browse?id=7">JIRA-7</a>.<br>',
    'Not in <code>#9</code> or <a href="https://a.example.com/#10">a link</a>, nor a#11 or #12x or #13; '
      + 'but (<a href="https://trac.example.com/ticket/14">#14</a>) and <strong><a href="https://trac.example.com/ticket/15">#15</a></strong> are.</p>',
  ].join('\n'));
  t.same(message.topic_links, [
    { text: '#12', url: 'https://trac.example.com/ticket/12' },
    { text: 'zulip/zulip#34', url: 'https://github.com/zulip/zulip/issues/34' },
    { text: 'https://example.com/x', url: 'https://example.com/x' },
  ], 'linkifiers and bare URLs in the topic, in the API shape');
  const [event] = ofType(await drain(ann, events.queueId), 'message');
  t.same((event!.message as { topic_links: unknown }).topic_links, message.topic_links, 'the message event carries them');
  t.equal((event!.message as { content: string }).content, message.content);

  const preview = await ann.post('/messages/render', { content: 'see #5' });
  t.equal(preview.body.rendered, '<p>see <a href="https://trac.example.com/ticket/5">#5</a></p>', 'previews render them too');
  const direct = await sendDirect(ann, [ids.admin.userId], 'dm #6');
  t.match((await ann.get(`/messages/${direct}`)).body.message, { content: '<p>dm <a href="https://trac.example.com/ticket/6">#6</a></p>', topic_links: [] });

  // The order decides between overlapping linkifiers: the GitHub one first, then the ticket one.
  await add(api, 'zulip/zulip#(?P<id>[0-9]+)', 'https://zulip.example.com/{id}');
  const first = await sendToChannel(ann, lobby, 'zulip/zulip#1 and www.example.org', 'zulip/zulip#1');
  t.equal((await ann.get(`/messages/${first}`)).body.message.content, '<p><a href="https://github.com/zulip/zulip/issues/1">zulip/zulip#1</a></p>');
  const ids2 = (await listOf(api)).map((linkifier) => linkifier.id);
  await api.patch('/realm/linkifiers', { ordered_linkifier_ids: [ids2[3], ...ids2.slice(0, 3)] });
  const second = await sendToChannel(ann, lobby, 'zulip/zulip#1 and www.example.org', 'zulip/zulip#1');
  const reordered = (await ann.get(`/messages/${second}`)).body.message;
  t.equal(reordered.content, '<p><a href="https://zulip.example.com/1">zulip/zulip#1</a></p>');
  t.same(reordered.topic_links, [
    { text: 'zulip/zulip#1', url: 'https://zulip.example.com/1' },
    { text: 'www.example.org', url: 'https://www.example.org' },
  ], 'the first linkifier wins an overlap in a topic too; a URL without scheme opens over HTTPS');

  // A topic edit announces the new topic's links; the stored rendering of old messages stays as it was.
  await drain(ann, events.queueId);
  t.equal((await ann.patch(`/messages/${sent}`, { topic: 'now #99', propagate_mode: 'change_one', send_notification_to_new_thread: false })).status, 200);
  const [edit] = ofType(await drain(ann, events.queueId), 'update_message');
  t.same(edit!.topic_links, [{ text: '#99', url: 'https://trac.example.com/ticket/99' }]);
  await api.delete(`/realm/filters/${trac}`);
  await api.delete(`/realm/filters/${github}`);
  t.equal((await ann.get(`/messages/${sent}`)).body.message.content, message.content, 'rendered when sent');
  t.same((await ann.get(`/messages/${sent}`)).body.message.topic_links, [], 'topic links follow the linkifiers of now');
  t.equal((await admin.post('/messages/render', { content: 'see #5' })).body.rendered, '<p>see #5</p>');
});

t.test('a pattern that backtracks exponentially elsewhere runs in linear time here', async (t) => {
  const { api } = await startTestServer(t);
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'lobby' }] });
  await add(api, '(?P<word>(\\w+\\s?)+)!', 'https://example.com/{word}');
  // With a backtracking engine each extra letter doubles the work: this would not finish.
  const text = `${'a'.repeat(3000)}?`;
  const sent = await sendToChannel(api, 'lobby', text.slice(0, 50), text);
  t.equal((await api.get(`/messages/${sent}`)).body.message.content, `<p>${text}</p>`);
  const matched = await sendToChannel(api, 'lobby', 'ok', 'say hello world!');
  t.equal((await api.get(`/messages/${matched}`)).body.message.content, '<p><a href="https://example.com/say%20hello%20world">say hello world!</a></p>', 'the group, encoded, in the URL');
});

t.test('linkifiers survive a restart, in their order', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir });
  const trac = await add(first.api, ...TRAC);
  const github = await add(first.api, ...GITHUB);
  const gone = await add(first.api, 'gone-(?P<id>\\d+)', 'https://example.com/{id}');
  await first.api.patch('/realm/linkifiers', { ordered_linkifier_ids: [github, gone, trac] });
  await first.api.patch(`/realm/filters/${trac}`, { pattern: TRAC[0], url_template: 'https://trac.example.com/t/{id}' });
  await first.api.delete(`/realm/filters/${gone}`);
  const before = await listOf(first.api);
  await first.stop();

  const second = await startTestServer(t, { dataDir });
  t.same(await listOf(second.api), before);
  t.same(before.map((linkifier) => linkifier.id), [github, trac]);
  await second.api.post('/users/me/subscriptions', { subscriptions: [{ name: 'lobby' }] });
  const sent = await sendToChannel(second.api, 'lobby', 'topic #1', 'see #2');
  t.match((await second.api.get(`/messages/${sent}`)).body.message, {
    content: '<p>see <a href="https://trac.example.com/t/2">#2</a></p>',
    topic_links: [{ text: '#1', url: 'https://trac.example.com/t/1' }],
  }, 'compiled again after the restart');
  t.equal(await add(second.api, 'new-(?P<id>\\d+)', 'https://example.com/{id}'), gone + 1, 'ids continue');
});

t.test('linkifiers survive SIGKILL (log replay recompiles them)', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const server = await startChild(dataDir);
  const trac = await add(server.api, ...TRAC);
  const github = await add(server.api, ...GITHUB);
  await server.api.patch('/realm/linkifiers', { ordered_linkifier_ids: [github, trac] });
  await server.api.patch(`/realm/filters/${trac}`, { pattern: TRAC[0], url_template: 'https://trac.example.com/t/{id}' });
  const before = await listOf(server.api);
  server.process.kill('SIGKILL');
  await server.exited;
  const again = await startChild(dataDir);
  t.teardown(() => void again.process.kill('SIGKILL'));
  t.same(await listOf(again.api), before);
  t.equal((await again.api.post('/messages/render', { content: 'see #3' })).body.rendered, '<p>see <a href="https://trac.example.com/t/3">#3</a></p>');
});

t.test('an organization holds a bounded number of linkifiers (CHAT_MAX_LINKIFIERS_PER_REALM)', async (t) => {
  const { api } = await startTestServer(t, { maxLinkifiersPerRealm: 3 });
  const ids = [];
  for (let n = 0; n < 3; n++) ids.push(await add(api, `L${n}-(?P<id>[0-9]+)`, `https://example.com/${n}/{id}`));
  const refused = await api.post('/realm/filters', { pattern: 'L3-(?P<id>[0-9]+)', url_template: 'https://example.com/3/{id}' });
  t.match(refused.body, { code: 'BAD_REQUEST', msg: 'This organization already has 3 linkifiers, the most it may have' });
  t.equal((await listOf(api)).length, 3);
  t.equal((await api.patch(`/realm/filters/${ids[0]}`, { pattern: 'M0-(?P<id>[0-9]+)', url_template: 'https://example.com/m/{id}' })).status, 200, 'one may still be changed');
  t.equal((await api.delete(`/realm/filters/${ids[1]}`)).status, 200);
  t.ok(await add(api, 'L3-(?P<id>[0-9]+)', 'https://example.com/3/{id}'), 'a removed one frees its place');
  const long = `(?P<id>${'x'.repeat(MAX_LINKIFIER_TEXT_LENGTH)})`;
  const tooLong = await api.patch(`/realm/filters/${ids[0]}`, { pattern: long, url_template: 'https://example.com/{id}' });
  t.match(tooLong.body, { msg: `Ensure this value has at most ${MAX_LINKIFIER_TEXT_LENGTH} characters (it has ${long.length}).`, errors: { pattern: [String] } }, 'a pattern of bounded length');
});
