import t from 'tap';
import { channel, drain, fetchIds, sendDirect, sendToChannel } from './helpers/messages.ts';
import { startTestServer } from './helpers/server.ts';

t.test('reactions: add and remove, by name or code, with their events', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const general = await channel(api, 'general', [1, ann.userId]);
  const id = await sendToChannel(api, general, 't', 'react to me');
  const annQueue = await api.as(ann).register({ event_types: ['reaction'] });
  const bobQueue = await api.as(bob).register({ event_types: ['reaction'] });

  t.equal((await api.as(ann).post(`/messages/${id}/reactions`, { emoji_name: 'tada' })).status, 200);
  t.equal((await api.post(`/messages/${id}/reactions`, { emoji_name: 'octopus', emoji_code: '1f419', reaction_type: 'unicode_emoji' })).status, 200);
  t.same((await api.get(`/messages/${id}`)).body.message.reactions, [
    { emoji_name: 'tada', emoji_code: '1f389', reaction_type: 'unicode_emoji', user_id: ann.userId },
    { emoji_name: 'octopus', emoji_code: '1f419', reaction_type: 'unicode_emoji', user_id: 1 },
  ]);
  const twice = await api.as(ann).post(`/messages/${id}/reactions`, { emoji_name: 'tada' });
  t.same(twice.body, { result: 'error', msg: 'Reaction already exists.', code: 'REACTION_ALREADY_EXISTS' });
  t.equal((await api.as(ann).post(`/messages/${id}/reactions`, { emoji_name: 'no_such_emoji' })).body.msg, "Emoji 'no_such_emoji' does not exist");
  t.equal((await api.as(ann).post(`/messages/${id}/reactions`, { emoji_name: 'x', emoji_code: 'zz-top' })).body.msg, 'Invalid emoji code');
  t.equal((await api.as(ann).post(`/messages/${id}/reactions`, { emoji_name: 'x', reaction_type: 'hearts' })).body.code, 'BAD_REQUEST');
  t.equal((await api.as(ann).post(`/messages/${id}/reactions`, {})).body.code, 'REQUEST_VARIABLE_MISSING');

  const gone = await api.as(ann).delete(`/messages/${id}/reactions`, { emoji_code: '1f389' });
  t.equal(gone.status, 200, 'removed by code');
  const missing = await api.as(ann).delete(`/messages/${id}/reactions`, { emoji_name: 'tada' });
  t.same(missing.body, { result: 'error', msg: "Reaction doesn't exist.", code: 'REACTION_DOES_NOT_EXIST' });
  t.equal((await api.as(ann).delete(`/messages/${id}/reactions`, { emoji_name: 'octopus' })).body.code, 'REACTION_DOES_NOT_EXIST', "another user's reaction is not yours to remove");
  t.equal((await api.as(ann).delete(`/messages/${id}/reactions`)).body.msg, 'At least one of the following arguments must be present: emoji_name, emoji_code');
  t.same((await api.get(`/messages/${id}`)).body.message.reactions.map((r: { user_id: number }) => r.user_id), [1]);
  t.same(await fetchIds(api, [['has', 'reaction']]), [id]);

  t.match(await drain(api.as(ann), annQueue.queueId), [
    { type: 'reaction', op: 'add', message_id: id, emoji_name: 'tada', emoji_code: '1f389', reaction_type: 'unicode_emoji', user_id: ann.userId, user: { user_id: ann.userId, email: 'ann@example.com', full_name: 'Ann' } },
    { type: 'reaction', op: 'add', emoji_name: 'octopus', user_id: 1 },
    { type: 'reaction', op: 'remove', emoji_name: 'tada', user_id: ann.userId },
  ]);
  t.same(await drain(api.as(bob), bobQueue.queueId), [], 'Bob is not subscribed: nothing');

  // Reacting to a public channel message one never received puts it in one's history (historical).
  t.equal((await api.as(bob).post(`/messages/${id}/reactions`, { emoji_name: 'eyes' })).status, 200);
  t.same((await api.as(bob).get(`/messages/${id}`)).body.message.flags, ['read', 'historical']);
  t.equal((await api.as(bob).post(`/messages/${id}/reactions`, { emoji_name: 'check' })).status, 200);
  t.match(await drain(api.as(bob), bobQueue.queueId), [{ type: 'reaction', emoji_name: 'eyes' }, { type: 'reaction', emoji_name: 'check' }], 'and its events from then on');
});

t.test('flags: read, starred, collapsed; fixed flags; events', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const general = await channel(api, 'general', [1, ann.userId]);
  const ids = [await sendToChannel(api, general, 't', 'a'), await sendToChannel(api, general, 't', 'b @**Ann**'), await sendDirect(api, [ann.userId], 'c')];
  const { queueId } = await api.as(ann).register({ event_types: ['update_message_flags'] });
  const flags = async (id: number) => (await api.as(ann).get(`/messages/${id}`)).body.message.flags;

  const read = await api.as(ann).post('/messages/flags', { messages: ids, op: 'add', flag: 'read' });
  t.same(read.body, { result: 'success', msg: '', messages: ids });
  t.same((await api.as(ann).post('/messages/flags', { messages: ids, op: 'add', flag: 'read' })).body.messages, [], 'nothing changed the second time');
  t.same(await flags(ids[1]!), ['read', 'mentioned']);
  await api.as(ann).post('/messages/flags', { messages: [ids[0], ids[2]], op: 'remove', flag: 'read' });
  t.same(await flags(ids[0]!), []);
  await api.as(ann).post('/messages/flags', { messages: [ids[0]], op: 'add', flag: 'starred' });
  await api.as(ann).post('/messages/flags', { messages: [ids[0]], op: 'add', flag: 'collapsed' });
  t.same(await flags(ids[0]!), ['starred', 'collapsed']);
  t.same(await fetchIds(api.as(ann), [['is', 'starred']]), [ids[0]]);
  t.same(await fetchIds(api.as(ann), [['is', 'unread']]), [ids[0], ids[2]]);
  t.same(await fetchIds(api.as(ann), [['is', 'mentioned']]), [ids[1]]);

  t.equal((await api.as(ann).post('/messages/flags', { messages: [ids[0]], op: 'add', flag: 'mentioned' })).body.msg, "Flag not editable: 'mentioned'");
  t.equal((await api.as(ann).post('/messages/flags', { messages: [ids[0]], op: 'add', flag: 'shiny' })).body.msg, "Invalid flag: 'shiny'");
  t.equal((await api.as(ann).post('/messages/flags', { messages: [ids[0]], op: 'toggle', flag: 'read' })).body.code, 'BAD_REQUEST');
  t.equal((await api.as(ann).post('/messages/flags', { messages: [999], op: 'add', flag: 'read' })).body.msg, 'Invalid message(s)');

  t.match(await drain(api.as(ann), queueId), [
    { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: ids, all: false },
    {
      type: 'update_message_flags', op: 'remove', flag: 'read', messages: [ids[0], ids[2]],
      message_details: { [ids[0]!]: { type: 'stream', stream_id: general, topic: 't' }, [ids[2]!]: { type: 'private', user_ids: [1] } },
    },
    { op: 'add', flag: 'starred', messages: [ids[0]] },
    { op: 'add', flag: 'collapsed', messages: [ids[0]] },
  ]);

  const narrowed = await api.as(ann).post('/messages/flags/narrow', { anchor: 'oldest', num_before: 0, num_after: 10, narrow: [['channel', 'general']], op: 'add', flag: 'read' });
  t.match(narrowed.body, { processed_count: 2, updated_count: 1, first_processed_id: ids[0], last_processed_id: ids[1], found_oldest: true, found_newest: true });
  await api.as(ann).post('/messages/flags', { messages: ids, op: 'remove', flag: 'read' });
  t.equal((await api.as(ann).post('/mark_topic_as_read', { stream_id: general, topic_name: 't' })).status, 200);
  t.same(await fetchIds(api.as(ann), [['is', 'unread']]), [ids[2]]);
  t.same((await api.as(ann).post('/mark_all_as_read')).body.complete, true);
  t.same(await fetchIds(api.as(ann), [['is', 'unread']]), []);
  t.equal((await api.as(ann).post('/mark_stream_as_read', { stream_id: 999 })).body.msg, 'Invalid channel ID');
});

t.test('registration: max_message_id, unread_msgs, starred_messages, recent conversations', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const general = await channel(api, 'general', [1, ann.userId]);
  const muted = await channel(api, 'muted', [1, ann.userId]);
  await api.as(ann).post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: muted, property: 'is_muted', value: true }] });
  const s1 = await sendToChannel(api, general, 'lunch', 'hi @**Ann**');
  const s2 = await sendToChannel(api, general, 'lunch', 'again');
  const s3 = await sendToChannel(api, muted, 'quiet', 'shh');
  const d1 = await sendDirect(api, [ann.userId], 'one');
  const d2 = await sendDirect(api.as(bob), [ann.userId, 1], 'group');
  const own = await sendDirect(api.as(ann), [1], 'mine');
  await api.as(ann).post('/messages/flags', { messages: [s2], op: 'add', flag: 'starred' });

  const registered = (await api.as(ann).register({ fetch_event_types: ['message', 'update_message_flags', 'starred_messages', 'recent_private_conversations'] })).body;
  t.equal(registered.max_message_id, own);
  t.same(registered.unread_msgs, {
    count: 4,
    pms: [{ other_user_id: 1, sender_id: 1, unread_message_ids: [d1] }],
    streams: [{ stream_id: general, topic: 'lunch', unread_message_ids: [s1, s2] }, { stream_id: muted, topic: 'quiet', unread_message_ids: [s3] }],
    huddles: [{ user_ids_string: `1,${ann.userId},${bob.userId}`, unread_message_ids: [d2] }],
    mentions: [s1],
    old_unreads_missing: false,
  }, 'muted channels are listed but not counted; own messages are read');
  t.same(registered.starred_messages, [s2]);
  t.same(registered.recent_private_conversations, [{ max_message_id: own, user_ids: [1] }, { max_message_id: d2, user_ids: [1, bob.userId] }]);
  const onlyFlags = (await api.as(ann).register({ fetch_event_types: ['update_message_flags'] })).body;
  t.notOk('unread_msgs' in onlyFlags, 'unread_msgs needs the message type too');
  t.equal((await api.as(bob).register({ fetch_event_types: ['message'] })).body.max_message_id, d2, 'Bob sees only his conversation');
  const nobody = await api.createUser('new@example.com', 'New');
  t.equal((await api.as(nobody).register({ fetch_event_types: ['message'] })).body.max_message_id, -1);
});
