import t from 'tap';
import { ChatError, ErrorCode } from '../actors/errors.ts';
import { FORWARD_MARK, takeForwardMark } from '../src/cluster/forward.ts';
import { ForwardedSocket } from '../src/cluster/forward-socket.ts';

t.test('the forward mark is taken only whole and last, and leaves the query as the client sent it', async (t) => {
  const alone = { query: FORWARD_MARK };
  t.equal(takeForwardMark(alone), true);
  t.equal(alone.query, '');
  const appended = { query: `queue_id=a%3A1&last_event_id=4&${FORWARD_MARK}` };
  t.equal(takeForwardMark(appended), true);
  t.equal(appended.query, 'queue_id=a%3A1&last_event_id=4');
  for (const query of [`x${FORWARD_MARK}`, `a=1&x${FORWARD_MARK}`, `${FORWARD_MARK}&a=1`, 'a=1', '']) {
    const request = { query };
    t.equal(takeForwardMark(request), false, `not in ${JSON.stringify(query)}`);
    t.equal(request.query, query, 'the query is untouched');
  }
});

t.test('a relayed event socket holds a bounded number of frames while the queue\'s node has not answered', async (t) => {
  const closes: { code: number; reason: string }[] = [];
  const connection = { send: () => undefined, close: (code: number, reason: string) => closes.push({ code, reason }) };
  // The queue's node is still being looked up: nothing can be relayed yet.
  const lookup = new Promise<string | null>(() => undefined);
  const request = { method: 'GET', path: '/api/v1/events/socket', query: 'queue_id=b%3A1', host: 'chat.test', authorization: '', contentType: '', body: Buffer.alloc(0) };
  const socket = new ForwardedSocket(lookup, request as never, '', () => new ChatError(ErrorCode.BAD_EVENT_QUEUE_ID, 'gone'), () => undefined);
  socket.open(connection);
  for (let i = 0; i < 64; i++) socket.message(`{"ack":${i}}`);
  t.same(closes, [], 'acknowledgements up to the bound wait');
  socket.message('{"ack":64}');
  t.same(closes, [{ code: 1008, reason: 'Too many frames before the event queue answered' }], 'one more closes the socket');
});
