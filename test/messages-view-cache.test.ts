import t from 'tap';
import { channel, sendToChannel } from './helpers/messages.ts';
import { startTestServer } from './helpers/server.ts';

/**
 * A fetch serializes each message's view once and keeps the text (actors/realm/messages/view-cache.ts): every
 * change to what a view shows, made after the message was read, must show in the next read.
 */
t.test('a message read, changed, then read again shows the change', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const general = await channel(api, 'general', [1, ann.userId]);
  const id = await sendToChannel(api, general, 'plans', 'first **draft**');
  const read = async (params: Record<string, unknown> = {}) => {
    const body = (await api.as(ann).get('/messages', { anchor: 'newest', num_before: 5, num_after: 0, ...params })).body;
    return body.messages.find((message: { id: number }) => message.id === id);
  };

  t.match(await read(), { content: '<p>first <strong>draft</strong></p>', subject: 'plans', display_recipient: 'general', reactions: [], flags: [] });
  t.match(await read({ apply_markdown: false }), { content: 'first **draft**', content_type: 'text/x-markdown' }, 'each set of options has its own text');
  t.match(await read(), { content: '<p>first <strong>draft</strong></p>' });

  t.equal((await api.patch(`/messages/${id}`, { content: 'second draft' })).status, 200);
  t.match(await read(), { content: '<p>second draft</p>', edit_history: [{ prev_content: 'first **draft**' }] }, 'an edit');
  t.equal((await api.patch(`/messages/${id}`, { topic: 'schedule' })).status, 200);
  t.match(await read(), { subject: 'schedule' }, 'a move');

  t.equal((await api.as(ann).post(`/messages/${id}/reactions`, { emoji_name: 'octopus' })).status, 200);
  t.match(await read(), { reactions: [{ emoji_name: 'octopus', user_id: ann.userId }] }, 'a reaction');
  t.equal((await api.as(ann).delete(`/messages/${id}/reactions`, { emoji_name: 'octopus' })).status, 200);
  t.same((await read()).reactions, [], 'a reaction removed');

  t.equal((await api.as(ann).post('/messages/flags', { messages: [id], op: 'add', flag: 'starred' })).status, 200);
  t.same((await read()).flags, ['starred'], "the reader's flags are its own, per request");
  const owner = (await api.get('/messages', { anchor: 'newest', num_before: 5, num_after: 0 })).body.messages.find((message: { id: number }) => message.id === id);
  t.same(owner.flags, ['read'], "another reader's flags");

  t.equal((await api.patch(`/streams/${general}`, { new_name: 'everyone' })).status, 200);
  t.match(await read(), { display_recipient: 'everyone' }, 'the channel renamed');
  t.equal((await api.patch('/settings', { full_name: 'Iago Owner' })).status, 200);
  t.match(await read(), { sender_full_name: 'Iago Owner' }, 'the sender renamed');

  t.equal((await api.delete(`/messages/${id}`)).status, 200);
  t.equal(await read(), undefined, 'a deleted message is gone');
});
