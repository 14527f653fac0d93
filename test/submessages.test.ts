import { rmSync } from 'node:fs';
import t from 'tap';
import { MAX_SUBMESSAGE_CHARS_PER_MESSAGE } from '../actors/realm/submessages/decide.ts';
import { LIMITS } from '../actors/register/realm-limits.ts';
import { channel, drain, ofType, sendDirect, sendToChannel } from './helpers/messages.ts';
import { OpenApi, type Schema } from './helpers/openapi.ts';
import { startTestServer, tempDir } from './helpers/server.ts';

/** Widgets (polls, todo lists): the submessage a `/poll` makes, POST /submessage, its event and its checks. */
const api = new OpenApi();
const submessageEvent = (api.resolve((api.doc.paths['/events']!.get as any).responses['200'].content['application/json'].schema) as Schema);
const eventSchema = api.resolve(api.properties(submessageEvent).events!.items!).oneOf!.find((schema) => api.properties(schema).type?.allOf?.some((part) => part.enum?.[0] === 'submessage'))!;

t.test('a poll: its widget comes with the message, votes reach every holder, and stay after a restart', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir });
  const owner = first.api;
  const ann = await owner.createUser('ann@example.com', 'Ann');
  const general = await channel(owner, 'general', [1, ann.userId]);
  const { queueId: annQueue } = await owner.as(ann).register({ event_types: ['message', 'submessage'] });

  const poll = await sendToChannel(owner, general, 'lunch', '/poll Where to?\n- Pizza\n* Sushi\n\n');
  const fetched = (await owner.as(ann).get(`/messages/${poll}`)).body.message;
  t.same(fetched.submessages, [{
    msg_type: 'widget', message_id: poll, sender_id: 1, id: fetched.submessages[0].id,
    content: JSON.stringify({ widget_type: 'poll', extra_data: { question: 'Where to?', options: ['Pizza', 'Sushi'] } }),
  }], 'the widget, with the question and options');

  // Anyone who can read it votes; the author alone changes the question.
  const vote = JSON.stringify({ type: 'vote', key: 'canned,0', vote: 1 });
  t.equal((await owner.as(ann).post('/submessage', { message_id: poll, msg_type: 'widget', content: vote })).status, 200);
  const question = await owner.as(ann).post('/submessage', { message_id: poll, msg_type: 'widget', content: JSON.stringify({ type: 'question', question: 'Why?' }) });
  t.same([question.status, question.body.msg], [400, "You can't edit a question unless you are the author."]);
  const extra = await owner.as(ann).post('/submessage', { message_id: poll, msg_type: 'widget', content: JSON.stringify({ type: 'vote', key: 'k', vote: 1, x: 2 }) });
  t.same([extra.status, extra.body.msg], [400, 'Unexpected arguments: x']);
  const wrongType = await owner.as(ann).post('/submessage', { message_id: poll, msg_type: 'widget', content: JSON.stringify({ type: 'vote', key: 'k', vote: 'yes' }) });
  t.same([wrongType.status, wrongType.body.msg], [400, 'poll data["vote"] is not an integer']);
  const invalid = await owner.post('/submessage', { message_id: poll, msg_type: 'widget', content: '{' });
  t.same([invalid.status, invalid.body.msg], [400, 'Invalid json for submessage']);

  const events = ofType(await drain(owner.as(ann), annQueue), 'submessage');
  t.equal(events.length, 1, 'one event, for the vote');
  t.match(events[0], { type: 'submessage', msg_type: 'widget', message_id: poll, sender_id: ann.userId, content: vote });
  t.same(api.mismatches(events[0], eventSchema, 'submessage'), [], 'in the documented shape');

  const edit = await owner.patch(`/messages/${poll}`, { content: 'no poll' });
  t.same([edit.status, edit.body.msg], [400, 'Widgets cannot be edited.']);

  await first.stop();
  const second = await startTestServer(t, { dataDir });
  const after = (await second.api.get(`/messages/${poll}`)).body.message.submessages;
  t.same(after.map((submessage: { content: string }) => submessage.content), [fetched.submessages[0].content, vote], 'kept, in order');
});

t.test('the first submessage of a message is its sender\'s; a todo list checks its own data', async (t) => {
  const { api: owner } = await startTestServer(t);
  const ann = await owner.createUser('ann@example.com', 'Ann');
  const plain = await sendDirect(owner, [ann.userId], 'hello');
  const refused = await owner.as(ann).post('/submessage', { message_id: plain, msg_type: 'widget', content: '{}' });
  t.same([refused.status, refused.body.msg], [400, 'You cannot attach a submessage to this message.']);
  t.equal((await owner.post('/submessage', { message_id: plain, msg_type: 'widget', content: '{"any": 1}' })).status, 200, 'no widget: any JSON');
  t.equal((await owner.as(ann).post('/submessage', { message_id: plain, msg_type: 'widget', content: '{}' })).status, 200, 'after the sender\'s, anyone who reads it');

  const todo = await sendDirect(owner, [ann.userId], '/todo Chores\nDishes: tonight\nLaundry');
  const widget = JSON.parse((await owner.get(`/messages/${todo}`)).body.message.submessages[0].content);
  t.same(widget, { widget_type: 'todo', extra_data: { task_list_title: 'Chores', tasks: [{ task: 'Dishes', desc: 'tonight' }, { task: 'Laundry', desc: '' }] } });
  const strike = await owner.as(ann).post('/submessage', { message_id: todo, msg_type: 'widget', content: JSON.stringify({ type: 'strike', key: '0,canned' }) });
  t.equal(strike.status, 200);
  const unknown = await owner.as(ann).post('/submessage', { message_id: todo, msg_type: 'widget', content: JSON.stringify({ type: 'vote' }) });
  t.same([unknown.status, unknown.body.msg], [400, 'Unknown type for todo data: vote']);
  const missing = await owner.as(ann).post('/submessage', { message_id: 999999, msg_type: 'widget', content: '{}' });
  t.same([missing.status, missing.body.msg], [400, 'Invalid message(s)']);
});

t.test('one message holds at most CHAT_MAX_SUBMESSAGES_PER_MESSAGE submessages, its widget included', async (t) => {
  const { api: owner } = await startTestServer(t, { maxSubmessagesPerMessage: 3 });
  const general = await channel(owner, 'general', [1]);
  const poll = await sendToChannel(owner, general, 'lunch', '/poll Where to?\n- Pizza\n- Sushi');
  const vote = (value: number) => owner.post('/submessage', { message_id: poll, msg_type: 'widget', content: JSON.stringify({ type: 'vote', key: 'canned,0', vote: value }) });
  t.equal((await vote(1)).status, 200);
  t.equal((await vote(-1)).status, 200);
  const refused = await vote(1);
  t.same([refused.status, refused.body.code, refused.body.msg], [400, 'BAD_REQUEST', 'This message already has 3 submessages, the most it may have']);
  t.equal((await owner.get(`/messages/${poll}`)).body.message.submessages.length, 3, 'the widget and two votes');
});

t.test(`one message's submessages hold at most MAX_SUBMESSAGE_CHARS_PER_MESSAGE characters together`, async (t) => {
  const { api: owner } = await startTestServer(t, { rateLimit: null });
  const general = await channel(owner, 'general', [1]);
  const plain = await sendToChannel(owner, general, 'data', 'No widget: any JSON goes');
  // Each the longest one allowed: a JSON string of 10,000 characters.
  const content = JSON.stringify('x'.repeat(LIMITS.max_message_length - 2));
  const add = () => owner.post('/submessage', { message_id: plain, msg_type: 'widget', content });
  const fit = MAX_SUBMESSAGE_CHARS_PER_MESSAGE / content.length;
  for (let i = 0; i < fit; i++) {
    const { status, body } = await add();
    if (status !== 200) t.fail(`submessage ${i}: ${JSON.stringify(body)}`);
  }
  const refused = await add();
  t.same([refused.status, refused.body.code, refused.body.msg], [400, 'BAD_REQUEST', `This message's submessages already hold ${MAX_SUBMESSAGE_CHARS_PER_MESSAGE} characters; at most ${MAX_SUBMESSAGE_CHARS_PER_MESSAGE} fit`]);
  t.equal((await owner.get(`/messages/${plain}`)).body.message.submessages.length, fit, `${fit} submessages of 10,000 characters`);
});
