import t from 'tap';
import { rmSync } from 'node:fs';
import { MAX_EDIT_HISTORY } from '../actors/realm/messages/limits.ts';
import { advanceClock, channel, drain, fetchIds, ofType, sendDirect, sendToChannel } from './helpers/messages.ts';
import { startTestServer, tempDir, type ApiClient } from './helpers/server.ts';

const caps = { client_capabilities: { empty_topic_name: true, bulk_message_deletion: true } };

t.test('content edits: by the sender, within the time limit, with history and events', async (t) => {
  const server = await startTestServer(t);
  const { api } = server;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const general = await channel(api, 'general', [1, ann.userId]);
  const id = await sendToChannel(api.as(ann), general, 't', 'frist');
  const annQueue = await api.as(ann).register({ event_types: ['update_message'], ...caps });
  const bobQueue = await api.as(bob).register({ event_types: ['update_message'], ...caps });
  const ownerQueue = await api.register({ event_types: ['update_message'], ...caps });

  const edited = await api.as(ann).patch(`/messages/${id}`, { content: 'first @**Owner**' });
  t.same(edited.body, { result: 'success', msg: '', detached_uploads: [] });
  const message = (await api.as(ann).get(`/messages/${id}`)).body.message;
  t.match(message, { content: /^<p>first <span class="user-mention"/, last_edit_timestamp: Number });
  t.notOk('last_moved_timestamp' in message, 'a content edit is no move (level 365)');
  t.match(message.edit_history, [{ user_id: ann.userId, timestamp: Number, prev_content: 'frist', prev_rendered_content: '<p>frist</p>' }]);
  t.same((await api.get(`/messages/${id}`)).body.message.flags, ['mentioned'], 'the edit mentions the owner now');
  const [event] = await drain(api.as(ann), annQueue.queueId);
  t.match(event, {
    type: 'update_message', user_id: ann.userId, message_id: id, message_ids: [id], rendering_only: false, flags: ['read'],
    orig_content: 'frist', orig_rendered_content: '<p>frist</p>', content: 'first @**Owner**', stream_id: general, stream_name: 'general', is_me_message: false,
  });
  t.notOk('propagate_mode' in event!, 'no move, no propagate_mode');
  t.same((await drain(api, ownerQueue.queueId))[0]!.flags, ['mentioned'], 'flags are per recipient');
  t.same(await drain(api.as(bob), bobQueue.queueId), [], 'not to someone who never had the message');

  t.equal((await api.patch(`/messages/${id}`, { content: 'mine now' })).body.msg, "You don't have permission to edit this message", 'only the sender edits content');
  const dm = await sendDirect(api.as(ann), [1], 'dm');
  t.equal((await api.as(ann).patch(`/messages/${dm}`, { topic: 'x', send_notification_to_new_thread: false })).body.msg, 'Direct messages cannot have topics.');
  t.equal((await api.as(ann).patch(`/messages/${dm}`, { stream_id: general, send_notification_to_new_thread: false })).body.msg, 'Direct messages cannot be moved to channels.');
  t.equal((await api.as(ann).patch(`/messages/${id}`, { content: 'x', stream_id: general, send_notification_to_new_thread: false })).body.msg, 'Cannot change message content while changing channel');
  t.equal((await api.as(ann).patch(`/messages/${id}`, {})).body.msg, 'Nothing to change');
  t.equal((await api.as(ann).patch(`/messages/${id}`, { content: 'x', propagate_mode: 'change_all' })).body.msg, 'Invalid propagate_mode without topic edit');
  t.equal((await api.as(ann).patch(`/messages/${id}`, { content: '' })).body.msg, 'Message must not be empty');
  t.equal((await api.as(ann).patch(`/messages/${id}`, { content: 'x', prev_content_sha256: 'abc' })).body.msg, "'prev_content_sha256' value does not match the expected value.");

  const own = await sendToChannel(api, general, 't', 'by the owner');
  advanceClock(server, 700);
  t.equal((await api.as(ann).patch(`/messages/${id}`, { content: 'late' })).body.msg, 'The time limit for editing this message has passed');
  // The content window binds administrators too (the original's validate_user_can_edit_message); only moves exempt them.
  t.equal((await api.patch(`/messages/${own}`, { content: 'late' })).body.msg, 'The time limit for editing this message has passed', 'administrators too');
});

t.test('topic moves: propagate modes, resolving, history and events', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const general = await channel(api, 'general', [1, ann.userId]);
  const ids: number[] = [];
  for (let i = 0; i < 5; i++) ids.push(await sendToChannel(api, general, 'old', `m${i}`));
  const other = await sendToChannel(api, general, 'elsewhere', 'x');
  const { queueId } = await api.as(ann).register({ event_types: ['update_message'], ...caps });
  const topicIds = async (topic: string) => fetchIds(api.as(ann), [['channel', 'general'], ['topic', topic]]);

  await api.as(ann).patch(`/messages/${ids[3]}`, { topic: 'later', propagate_mode: 'change_later', send_notification_to_new_thread: false });
  t.same(await topicIds('later'), ids.slice(3));
  await api.as(ann).patch(`/messages/${ids[0]}`, { topic: 'one', send_notification_to_new_thread: false });
  t.same(await topicIds('one'), [ids[0]], 'change_one is the default');
  await api.as(ann).patch(`/messages/${ids[2]}`, { topic: 'LATER', propagate_mode: 'change_all', send_notification_to_new_thread: false });
  t.same(await topicIds('later'), ids.slice(1), 'change_all moves the whole topic, into one that matches case-insensitively');
  t.same(await topicIds('old'), []);
  t.same(await fetchIds(api.as(ann), [['topic', 'elsewhere']]), [other], 'other topics stay');

  const events = ofType(await drain(api.as(ann), queueId), 'update_message');
  t.match(events[0], { message_id: ids[3], message_ids: [ids[3], ids[4]], propagate_mode: 'change_later', orig_subject: 'old', subject: 'later', topic_links: [], stream_id: general, user_id: ann.userId });
  t.notOk('orig_content' in events[0]!);
  t.match(events[2], { message_ids: [ids[1], ids[2]], propagate_mode: 'change_all', orig_subject: 'old', subject: 'LATER' });
  const moved = (await api.get(`/messages/${ids[1]}`)).body.message;
  t.match(moved, { subject: 'LATER', last_moved_timestamp: Number, edit_history: [{ user_id: ann.userId, prev_topic: 'old', topic: 'LATER' }] });
  t.notOk('last_edit_timestamp' in moved, 'a move is no content edit (level 365)');
  await api.patch(`/messages/${ids[1]}`, { content: 'm1 edited' });
  t.match((await api.get(`/messages/${ids[1]}/history`)).body.message_history, [
    { topic: 'old', content: 'm1', rendered_content: '<p>m1</p>', user_id: 1, timestamp: Number },
    { topic: 'LATER', prev_topic: 'old', content: 'm1', user_id: ann.userId },
    { topic: 'LATER', content: 'm1 edited', prev_content: 'm1', prev_rendered_content: '<p>m1</p>', rendered_content: '<p>m1 edited</p>', user_id: 1 },
  ], 'the history, oldest first, as the message was after each edit');
  t.equal((await api.get('/messages/999/history')).body.msg, 'Invalid message(s)');

  await api.patch(`/messages/${ids[1]}`, { topic: '✔ LATER', propagate_mode: 'change_all', send_notification_to_new_thread: false });
  const resolved = (await api.get(`/messages/${ids[2]}`)).body.message;
  t.equal(resolved.subject, '✔ LATER');
  t.equal(resolved.last_moved_timestamp, moved.last_moved_timestamp, 'resolving does not count as a move');
  t.same(await fetchIds(api, [['is', 'resolved']]), ids.slice(1));
  t.equal((await api.patch(`/messages/${ids[1]}`, { topic: 'general chat', propagate_mode: 'change_all', send_notification_to_new_thread: false })).status, 200, 'moving into the empty topic');
  t.same(await fetchIds(api, [['topic', '']]), ids.slice(1));
});

t.test('move permissions and time limits', async (t) => {
  const server = await startTestServer(t);
  const { api } = server;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const general = await channel(api, 'general', [1, ann.userId]);
  const old = [await sendToChannel(api, general, 'topic', 'a'), await sendToChannel(api, general, 'topic', 'b')];
  advanceClock(server, 8 * 24 * 3600);
  const recent = [await sendToChannel(api, general, 'topic', 'c'), await sendToChannel(api, general, 'topic', 'd')];
  const refused = await api.as(ann).patch(`/messages/${recent[0]}`, { topic: 'moved', propagate_mode: 'change_all', send_notification_to_new_thread: false });
  t.same(refused.body, {
    result: 'error', code: 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED', msg: 'You only have permission to move the 2/4 most recent messages in this topic.',
    first_message_id_allowed_to_move: recent[0], total_messages_in_topic: 4, total_messages_allowed_to_move: 2,
  });
  t.equal((await api.as(ann).patch(`/messages/${old[0]}`, { topic: 'moved', send_notification_to_new_thread: false })).body.msg, "The time limit for editing this message's topic has passed");
  t.equal((await api.as(ann).patch(`/messages/${recent[0]}`, { topic: 'moved', propagate_mode: 'change_later', send_notification_to_new_thread: false })).status, 200, 'the recent ones may move');
  t.same(await fetchIds(api, [['topic', 'moved']]), recent);
  t.equal((await api.patch(`/messages/${old[0]}`, { topic: 'moved', propagate_mode: 'change_all', send_notification_to_new_thread: false })).status, 200, 'administrators have no time limit');
  t.same(await fetchIds(api, [['topic', 'moved']]), [...old, ...recent]);
  t.equal((await api.as(ann).patch(`/messages/${recent[1]}`, { topic: '✔ moved', propagate_mode: 'change_all', send_notification_to_new_thread: false })).status, 200, 'resolving has no time limit');

  // Realm permissions: members may move between channels by default; guests may not.
  const gus = await api.createUser('gus@example.com', 'Gus');
  await api.patch(`/users/${gus.userId}`, { role: 600 });
  const target = await channel(api, 'target', [1, ann.userId, gus.userId]);
  await channel(api, 'general', [gus.userId]);
  const mine = await sendToChannel(api.as(gus), general, 'g', 'guest post');
  t.equal((await api.as(gus).patch(`/messages/${mine}`, { stream_id: target, send_notification_to_new_thread: false })).body.msg, "You don't have permission to move this message");
  t.equal((await api.as(ann).patch(`/messages/${mine}`, { stream_id: 999, send_notification_to_new_thread: false })).body.msg, 'Invalid channel ID');
});

t.test('moving to another channel: indexes, first_message_id, and who loses sight', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const general = await channel(api, 'general', [1, ann.userId, bob.userId]);
  const secret = await channel(api, 'secret', [1, ann.userId], { invite_only: true });
  const ids = [await sendToChannel(api, general, 'plans', 'one'), await sendToChannel(api, general, 'plans', 'two')];
  const stays = await sendToChannel(api, general, 'other', 'three');
  const annQueue = await api.as(ann).register({ event_types: ['update_message', 'delete_message', 'stream'], ...caps });
  const bobQueue = await api.as(bob).register({ event_types: ['update_message', 'delete_message', 'stream'], ...caps });

  t.equal((await api.patch(`/messages/${ids[0]}`, { stream_id: secret, topic: 'hidden', propagate_mode: 'change_all', send_notification_to_new_thread: false })).status, 200);
  t.same(await fetchIds(api.as(ann), [['channel', 'secret'], ['topic', 'hidden']]), ids);
  t.same(await fetchIds(api.as(ann), [['channel', 'general']]), [stays]);
  const moved = (await api.as(ann).get(`/messages/${ids[1]}`)).body.message;
  t.match(moved, { stream_id: secret, display_recipient: 'secret', subject: 'hidden', edit_history: [{ prev_stream: general, stream: secret, prev_topic: 'plans', topic: 'hidden' }] });
  t.not(moved.recipient_id, (await api.get(`/messages/${stays}`)).body.message.recipient_id, 'recipient_id follows the channel');

  const annEvents = await drain(api.as(ann), annQueue.queueId);
  t.match(ofType(annEvents, 'update_message'), [{ message_ids: ids, stream_id: general, new_stream_id: secret, orig_subject: 'plans', subject: 'hidden' }]);
  t.match(ofType(annEvents, 'stream'), [
    { property: 'first_message_id', stream_id: general, value: stays },
    { property: 'first_message_id', stream_id: secret, value: ids[0] },
  ]);
  const bobEvents = await drain(api.as(bob), bobQueue.queueId);
  t.same(ofType(bobEvents, 'update_message'), [], 'Bob cannot follow them into the private channel');
  t.match(ofType(bobEvents, 'delete_message'), [{ message_ids: ids, message_type: 'stream', stream_id: general, topic: 'plans' }], 'so they vanish for him');
  t.equal((await api.as(bob).get(`/messages/${ids[0]}`)).body.msg, 'Invalid message(s)');
  t.match(ofType(bobEvents, 'stream'), [{ property: 'first_message_id', stream_id: general, value: stays }], 'he still sees general change');
});

t.test('deleting messages and topics', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const general = await channel(api, 'general', [1, ann.userId, bob.userId]);
  const annFirst = await sendToChannel(api.as(ann), general, 'chat', 'first');
  const bobs = await sendToChannel(api.as(bob), general, 'chat', 'bob says');
  const { queueId } = await api.as(bob).register({ event_types: ['delete_message', 'stream'], ...caps });
  const legacy = await api.as(bob).register({ event_types: ['delete_message'] });

  t.equal((await api.as(ann).delete(`/messages/${bobs}`)).body.msg, "You don't have permission to delete this message");
  t.equal((await api.as(ann).delete(`/messages/${annFirst}`)).status, 200, 'senders delete their own');
  t.equal((await api.as(ann).get(`/messages/${annFirst}`)).body.msg, 'Invalid message(s)');
  t.equal((await api.as(ann).delete(`/messages/${annFirst}`)).body.msg, 'Invalid message(s)', 'gone');
  const events = await drain(api.as(bob), queueId);
  t.match(ofType(events, 'delete_message'), [{ message_ids: [annFirst], message_type: 'stream', stream_id: general, topic: 'chat' }]);
  t.match(ofType(events, 'stream'), [{ property: 'first_message_id', value: bobs }]);
  t.match(await drain(api.as(bob), legacy.queueId), [{ type: 'delete_message', message_id: annFirst }], 'one id per event without bulk_message_deletion');
  t.equal((await api.delete(`/messages/${bobs}`)).status, 200, 'administrators delete anyone\'s');
  t.same(await fetchIds(api, [['channel', 'general']]), []);
  t.match(ofType(await drain(api.as(bob), queueId), 'stream'), [{ property: 'first_message_id', value: null }]);

  const topic = [await sendToChannel(api, general, 'doomed', 'a'), await sendToChannel(api.as(ann), general, 'Doomed', 'b')];
  const kept = await sendToChannel(api, general, 'kept', 'c');
  t.equal((await api.as(ann).post(`/streams/${general}/delete_topic`, { topic_name: 'doomed' })).body.code, 'UNAUTHORIZED_PRINCIPAL');
  t.same((await api.post(`/streams/${general}/delete_topic`, { topic_name: 'DOOMED' })).body, { result: 'success', msg: '', complete: true });
  t.same(await fetchIds(api, [['channel', 'general']]), [kept]);
  t.match(ofType(await drain(api.as(bob), queueId), 'delete_message'), [{ message_ids: topic, topic: 'doomed' }]);
  t.same((await api.post(`/streams/${general}/delete_topic`, { topic_name: 'doomed' })).body.complete, true, 'an empty topic is complete at once');
  t.equal((await api.post('/streams/999/delete_topic', { topic_name: 'x' })).body.msg, 'Invalid channel ID');
});

t.test('a message keeps its newest MAX_EDIT_HISTORY edits, content and moves alike, also after a restart', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir, rateLimit: null });
  const general = await channel(first.api, 'general', [1]);
  const id = await sendToChannel(first.api, general, 'live', 'status 0');
  // A bot's live status message: edited far more often than the history keeps.
  const edits = MAX_EDIT_HISTORY + 20;
  for (let i = 1; i <= edits; i++) {
    const topic = i % 10 === 0 ? { topic: `live ${i}` } : {};
    const { status, body } = await first.api.patch(`/messages/${id}`, { content: `status ${i}`, ...topic });
    if (status !== 200) t.fail(`edit ${i}: ${JSON.stringify(body)}`);
  }
  const check = async (api: ApiClient, when: string) => {
    const message = (await api.get(`/messages/${id}`, { apply_markdown: false })).body.message;
    t.equal(message.content, `status ${edits}`, `${when}: the newest content`);
    t.equal(message.edit_history.length, MAX_EDIT_HISTORY, `${when}: the newest ${MAX_EDIT_HISTORY} edits are kept`);
    t.match(message.edit_history[0], { prev_content: `status ${edits - 1}`, prev_topic: `live ${edits - 10}`, topic: `live ${edits}` }, `${when}: the newest first`);
    t.equal(message.edit_history.at(-1).prev_content, `status ${edits - MAX_EDIT_HISTORY}`, `${when}: the oldest kept`);
    const history = (await api.get(`/messages/${id}/history`)).body.message_history as { content: string; topic: string }[];
    t.equal(history.length, MAX_EDIT_HISTORY + 1, `${when}: the history is the oldest kept state and each edit since`);
    t.same([history[0]!.content, history.at(-1)!.content], [`status ${edits - MAX_EDIT_HISTORY}`, `status ${edits}`], `${when}: from the oldest kept to the newest`);
  };
  await check(first.api, 'live');
  await first.stop();
  const second = await startTestServer(t, { dataDir, rateLimit: null });
  await check(second.api, 'after a restart');
});
