import t, { type Test } from 'tap';
import { channel, sendDirect, sendToChannel } from './helpers/messages.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { flagsFor } from '../actors/realm/messages/access.ts';
import { recordTextEnd, recordTextStart, RENDERED_CONTENT } from '../actors/realm/messages/bodies.ts';
import { writeMessageView } from '../actors/realm/messages/view-json.ts';
import { messageView, type ViewOptions } from '../actors/realm/messages/views.ts';
import type { RealmState } from '../actors/realm/state.ts';
import { JsonBytes } from '../actors/wire/json-bytes.ts';
import { encode } from '../snapshots/codec.ts';

/**
 * GET /messages writes each message's view as bytes (actors/realm/messages/view-json.ts), copying a cold
 * body's text straight from its stored record: the bytes must be those of JSON.stringify over the view
 * object (messageView, which events still send), for every kind of content and every set of options.
 */

const OPTIONS: ViewOptions[] = [];
for (const applyMarkdown of [true, false]) {
  for (const clientExtavatar of [true, false]) for (const allowEmptyTopicName of [true, false]) OPTIONS.push({ applyMarkdown, clientExtavatar, allowEmptyTopicName });
}

const expected = (realm: RealmState, id: number, options: ViewOptions) => JSON.stringify(messageView(realm, realm.messages.byId.get(id)!, options)).slice(0, -1);

/** What a writer holds, as text. */
const textOf = (out: JsonBytes) => Buffer.from(out.written()).toString('utf8');

function written(realm: RealmState, id: number, options: ViewOptions): string {
  const out = new JsonBytes(16);
  writeMessageView(out, realm, realm.messages.byId.get(id)!, options);
  return textOf(out);
}

/** Every message of the history, its view written against the view stringified, for each set of options. */
function compareAll(t: Test, realm: RealmState, ids: readonly number[], label: string): void {
  let differ = 0;
  for (const id of ids) {
    for (const options of OPTIONS) {
      const want = expected(realm, id, options);
      const got = written(realm, id, options);
      if (got !== want && differ++ < 3) t.equal(got, want, `${label}: message ${id}, ${JSON.stringify(options)}`);
    }
  }
  t.equal(differ, 0, `${label}: the ${ids.length} messages' views, byte for byte, with each of ${OPTIONS.length} sets of options`);
}

const LONG_MARKUP = '<&"'.repeat(3000);

t.test('views written as bytes are the views stringified, in memory and read cold from stored records', async (t) => {
  const first = await startTestServer(t, { rateLimit: null });
  const { api } = first;
  const ann = await api.createUser('ann@example.com', 'Zoë "Z" \\ 李 😀');
  const bob = await api.createUser('bob@example.com', 'Bob <b>&amp;');
  t.equal((await api.as(ann).patch('/settings', { email_address_visibility: 4 })).status, 200, "ann's address hidden: a stand-in");
  t.equal((await api.post('/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://example.com/ticket/{id}' })).status, 200);
  const general = await channel(api, 'général "quoted"', [1, ann.userId, bob.userId]);
  const ids: number[] = [];
  const send = async (topic: string, content: string, extra = {}) => ids.push(await sendToChannel(api, general, topic, content, extra));
  await send('plain', 'the quick brown fox');
  await send('quotes "and" \\backslashes\\', 'a "quoted" \\ word, <b>html</b> & an ampersand');
  await send('ünïcödé 李 😀', 'emoji 😀🎉 and 李白 and é, zero-width\u200b, line\u2028separator');
  await send('controls', 'tab\there, newline\nthere, bell\u0007 and escape\u001b; del\u007f');
  await send('links #42 and example.com/x', 'see #42 and https://example.com/a?b=c&d="e"');
  await send('', 'the empty topic');
  await send('long', LONG_MARKUP);
  await send('long', 'x'.repeat(300));
  await send('me', '/me waves "hi"');
  await send('code', '```\nconst s = "\\u0000";\n```\n> quote\n\n* item');
  await send('client', 'sent by a named client', { client: 'Zoë\'s "client" \\ 1.0' });
  await send('mention', '@**all** and @**Bob <b>&amp;**');
  const poll = await sendToChannel(api, general, 'lunch', '/poll Where to?\n- Pizza "large"\n* Sushi');
  ids.push(poll);
  t.equal((await api.as(ann).post('/submessage', { message_id: poll, msg_type: 'widget', content: JSON.stringify({ type: 'new_option', idx: 1, option: '"é" \\ 😀' }) })).status, 200);
  ids.push(await sendDirect(api, [ann.userId], 'a direct "message" to Zoë'));
  ids.push(await sendDirect(api, [ann.userId, bob.userId], 'a group 😀 conversation'));
  const realm = () => first.server.runtime.realmState(1);
  const sender = { kind: 'user' as const, userId: 1 };
  // A lone surrogate cannot come through a form; the store keeps it (msgpackr writes it as three bytes).
  await first.server.runtime.execute(1, { type: 'message.send', caller: sender, kind: 'channel', to: general, topic: 'surrogates', content: 'lone \ud800 high, lone \udc00 low, pair \ud83d\ude00', client: 'API' });
  ids.push(realm().messages.nextId - 1);
  const edited = ids[0]!;
  t.equal((await api.patch(`/messages/${edited}`, { content: 'the quick "brown" fox, edited' })).status, 200);
  t.equal((await api.patch(`/messages/${ids[1]}`, { topic: 'moved "here"' })).status, 200);
  t.equal((await api.as(ann).post(`/messages/${ids[2]}/reactions`, { emoji_name: 'octopus' })).status, 200);
  t.equal((await api.as(bob).post(`/messages/${ids[2]}/reactions`, { emoji_name: 'tada' })).status, 200);
  t.equal((await api.as(bob).post(`/messages/${ids[3]}/reactions`, { emoji_name: 'heart' })).status, 200);

  compareAll(t, realm(), ids, 'in memory');
  t.equal((await api.patch('/realm', { message_edit_history_visibility_policy: 'moves' })).status, 200);
  compareAll(t, realm(), ids, "the realm showing moves only");
  t.equal((await api.patch('/realm', { message_edit_history_visibility_policy: 'none' })).status, 200);
  compareAll(t, realm(), ids, 'the realm showing no edit history');
  t.equal((await api.patch('/realm', { message_edit_history_visibility_policy: 'all' })).status, 200);
  await first.stop();

  // Cold, each message's view written first, from its stored record (no body kept), then the views
  // stringified: for the rendering, then after another restart for the Markdown.
  for (const applyMarkdown of [true, false]) {
    const server: TestServer = await startTestServer(t, { dataDir: first.dataDir, rateLimit: null });
    const cold = server.server.runtime.realmState(1);
    const options = { applyMarkdown, clientExtavatar: true, allowEmptyTopicName: false };
    const got = ids.map((id) => written(cold, id, options));
    t.equal(cold.messages.bodies.cached, 0, 'the bodies were read for one view each, not kept');
    t.same(got, ids.map((id) => expected(cold, id, options)), `read cold (apply_markdown ${applyMarkdown}): the same bytes`);
    compareAll(t, cold, ids, `after the restart (apply_markdown ${applyMarkdown})`);

    // The whole answer over HTTP: JSON.stringify's form (keys, escapes and numbers as it writes them), with
    // each message's view and the reader's flags as the route wrote them before it wrote bytes.
    const response = await fetch(`${server.url}/api/v1/messages?anchor=newest&num_before=100&num_after=0&apply_markdown=${applyMarkdown}&unknown_parameter=1`, {
      headers: { Authorization: `Basic ${Buffer.from(`${server.owner.email}:${server.owner.key}`).toString('base64')}` },
    });
    const text = await response.text();
    const answer = JSON.parse(text) as { messages: { id: number }[]; ignored_parameters_unsupported: string[] };
    t.equal(text, JSON.stringify(answer), 'the answer is JSON.stringify of what it holds');
    t.same(answer.ignored_parameters_unsupported, ['unknown_parameter'], 'with the ignored parameter appended');
    const shown = (id: number, clientExtavatar = true) =>
      `${expected(cold, id, { applyMarkdown, clientExtavatar, allowEmptyTopicName: false })},"flags":${JSON.stringify(flagsFor(cold, 1, cold.messages.byId.get(id)!))}}`;
    t.equal(text.slice(0, text.indexOf('],"anchor"') + 1), `{"result":"success","msg":"","messages":[${answer.messages.map((message) => shown(message.id)).join(',')}]`, 'each message as the view stringified with its flags');
    const single = await fetch(`${server.url}/api/v1/messages/${ids[6]}?apply_markdown=${applyMarkdown}`, {
      headers: { Authorization: `Basic ${Buffer.from(`${server.owner.email}:${server.owner.key}`).toString('base64')}` },
    });
    t.equal(await single.text(), `{"result":"success","msg":"","message":${shown(ids[6]!, false)},"raw_content":${JSON.stringify(LONG_MARKUP)}}`, 'GET /messages/{id} likewise');
    await server.stop();
  }
});

t.test('a JSON writer writes what JSON.stringify writes', async (t) => {
  const strings = ['', 'a', 'x'.repeat(40), 'y'.repeat(300), 'é'.repeat(40000), '"', '\\', '\u0000\u001f\u007f', 'é李😀', '\ud800', 'x\udc00', '\ud83d\ude00', '\u2028\u2029', '</script>'];
  for (const [index, text] of strings.entries()) {
    const out = new JsonBytes(1);
    out.string(text);
    t.equal(textOf(out), JSON.stringify(text), `string ${index}`);
    // As a body record stores it (msgpackr writes a lone surrogate as three bytes).
    const record = encode([text, text]);
    const start = recordTextStart(record, RENDERED_CONTENT);
    const copy = new JsonBytes(1);
    if (copy.utf8String(record, start, recordTextEnd(record, RENDERED_CONTENT))) t.equal(textOf(copy), JSON.stringify(text), `string ${index} from its record`);
    else t.match(text, /["\\\u0000-\u001f]|[\ud800-\udfff]/, `string ${index} from its record is left to the caller only for an escape`);
  }
  for (const value of [0, 7, 10, 99, 100, 1234567890, Number.MAX_SAFE_INTEGER, -1, 1.5, 1e21, NaN]) {
    const out = new JsonBytes(1);
    out.number(value);
    t.equal(textOf(out), JSON.stringify(value), `the number ${value}`);
  }
});
