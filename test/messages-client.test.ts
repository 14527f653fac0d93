import t from 'tap';
import { channel, drain, ofType, sendToChannel } from './helpers/messages.ts';
import { startTestServer } from './helpers/server.ts';

/**
 * A message records the client it was sent from, as the original does: the `client` parameter where the
 * request has one, else the name its User-Agent starts with; it shows in GET /messages and in the event.
 */
t.test("a message's client is the request's client parameter or its User-Agent's product", async (t) => {
  const { api } = await startTestServer(t);
  const general = await channel(api, 'general', [1]);
  const queue = await api.register({ event_types: ['message'] });
  const cases: [Record<string, string>, Record<string, string>, string][] = [
    [{ 'User-Agent': 'ZulipTerminal/0.7.0 Linux (x86_64)' }, {}, 'ZulipTerminal'],
    [{ 'User-Agent': 'ZulipMobile/27.232 (Android 14)' }, {}, 'ZulipMobile'],
    [{ 'User-Agent': 'ZulipElectron/5.11.1 Mozilla/5.0 (X11; Linux x86_64)' }, {}, 'ZulipElectron'],
    [{ 'User-Agent': 'ZulipTerminal/0.7.0' }, { client: 'ZulipPython' }, 'ZulipPython'],
    [{ 'User-Agent': `${'VeryLong'.repeat(10)}/1.0` }, {}, 'VeryLong'.repeat(10).slice(0, 30)],
    [{ 'User-Agent': '' }, {}, 'Unspecified'],
  ];
  const sent: number[] = [];
  for (const [headers, extra] of cases) sent.push(await sendToChannel(api.as(api.credentials, headers), general, 'clients', 'hello', extra));

  const { body } = await api.get('/messages', { anchor: sent[0]!, num_before: 0, num_after: sent.length - 1 });
  t.same(body.messages.map((message: { id: number; client: string }) => [message.id, message.client]), sent.map((id, i) => [id, cases[i]![2]]), 'as GET /messages shows them');
  const events = ofType(await drain(api, queue.queueId), 'message') as unknown as { message: { id: number; client: string } }[];
  t.same(events.map((event) => [event.message.id, event.message.client]), sent.map((id, i) => [id, cases[i]![2]]), 'and as the message events tell them');
});
