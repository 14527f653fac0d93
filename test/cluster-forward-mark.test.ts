import t from 'tap';
import { FORWARD_MARK, takeForwardMark } from '../src/cluster/forward.ts';

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
