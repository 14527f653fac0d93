import t from 'tap';
import { configFrom, defaultConfig } from '../src/config.ts';
import { startTestServer } from './helpers/server.ts';

t.test('a new default organization has channels to write in, which new members join', async (t) => {
  const { api: owner } = await startTestServer(t, { starterChannels: defaultConfig().starterChannels });
  const streams = await owner.get('/streams');
  t.equal(streams.status, 200);
  const names = streams.body.streams.map((stream: { name: string }) => stream.name).sort();
  t.same(names, ['general', 'sandbox']);
  const defaults = (await owner.get('/streams', { include_default: true, include_public: false })).body.streams;
  t.same(defaults.map((stream: { name: string }) => stream.name).sort(), ['general', 'sandbox'], 'both are default channels');
  const own = (await owner.get('/users/me/subscriptions')).body.subscriptions;
  t.same(own.map((sub: { name: string }) => sub.name).sort(), ['general', 'sandbox'], 'the owner is in both');
  t.ok(own.every((sub: { description: string }) => sub.description.length > 0), 'each says what it is for');

  const member = await owner.createUser('newcomer@example.com', 'Newcomer');
  const memberApi = owner.as(member);
  const joined = (await memberApi.get('/users/me/subscriptions')).body.subscriptions;
  t.same(joined.map((sub: { name: string }) => sub.name).sort(), ['general', 'sandbox'], 'a new member joins them');

  const sent = await memberApi.post('/messages', { type: 'stream', to: 'general', topic: 'hello', content: 'First!' });
  t.equal(sent.status, 200, 'the first message of a new member goes to general');
  const read = await owner.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: JSON.stringify([{ operator: 'channel', operand: 'general' }]) });
  t.equal(read.body.messages[0]?.content, '<p>First!</p>');
});

t.test('CHAT_STARTER_CHANNELS names them; empty means none', async (t) => {
  t.same(configFrom({}, {}).starterChannels, ['general', 'sandbox']);
  t.same(configFrom({}, { CHAT_STARTER_CHANNELS: 'lobby, random ,' }).starterChannels, ['lobby', 'random']);
  t.same(configFrom({}, { CHAT_STARTER_CHANNELS: '' }).starterChannels, []);
  const { api: owner } = await startTestServer(t, { starterChannels: [] });
  t.same((await owner.get('/streams')).body.streams, [], 'none made');
});
