import t from 'tap';
import { startTestServer } from './helpers/server.ts';
import { drain, fetchIds } from './helpers/messages.ts';

t.test('alert words give recipients the has_alert_word flag, in events, fetches and the is:alerted narrow', async (t) => {
  const { api, stop, dataDir } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'ops' }], principals: [1, ann.userId] });
  t.equal((await api.as(ann).post('/users/me/alert_words', { alert_words: ['Deploy', 'on call'] })).status, 200);
  const { queueId } = await api.as(ann).register({ event_types: ['message'] });

  const hit = (await api.post('/messages', { type: 'stream', to: 'ops', topic: 't', content: 'Who is ON CALL tonight?' })).body.id;
  const miss = (await api.post('/messages', { type: 'stream', to: 'ops', topic: 't', content: 'redeployment is not a whole word' })).body.id;
  const word = (await api.post('/messages', { type: 'stream', to: 'ops', topic: 't', content: 'deploy!' })).body.id;
  // The sender's own alert words never flag the sender's messages.
  await api.post('/users/me/alert_words', { alert_words: ['deploy'] });
  const own = (await api.post('/messages', { type: 'stream', to: 'ops', topic: 't', content: 'deploy now' })).body.id;

  const events = await drain(api.as(ann), queueId);
  const flags = new Map(events.map((event) => [(event.message as { id: number }).id, event.flags as string[]]));
  t.ok(flags.get(hit)!.includes('has_alert_word'), 'a phrase matches whatever its case');
  t.notOk(flags.get(miss)!.includes('has_alert_word'), 'only whole words match');
  t.ok(flags.get(word)!.includes('has_alert_word'));
  t.ok(flags.get(own)!.includes('has_alert_word'), 'ann has the word, so the owner’s message flags her');
  const mine = (await api.get(`/messages/${own}`)).body.message.flags;
  t.notOk(mine.includes('has_alert_word'), 'but not the sender');

  t.same(await fetchIds(api.as(ann), [{ operator: 'is', operand: 'alerted' }]), [hit, word, own]);
  await stop();
  const again = await startTestServer(t, { dataDir });
  const fetched = (await again.api.as(ann).get(`/messages/${hit}`)).body.message.flags;
  t.ok(fetched.includes('has_alert_word'), 'the flag is stored with the message and survives a restart');
});
