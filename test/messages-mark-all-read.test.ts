import t from 'tap';
import { channel } from './helpers/messages.ts';
import { startTestServer } from './helpers/server.ts';

/**
 * POST /mark_all_as_read for a user with a great many unread messages marks them in batches, each committed
 * and told to the user's queues on its own, with other requests answered between them, rather than all of
 * them in one turn of the event loop.
 */

/** A user back from a long absence in a busy organization. */
const UNREAD = 100_000;

interface FlagsEvent {
  id: number;
  type: string;
  op: string;
  operation: string;
  flag: string;
  messages: number[];
  all: boolean;
}

t.test('marking 100,000 messages read answers other requests meanwhile, and marks every one', async (t) => {
  const first = await startTestServer(t, { rateLimit: null });
  const { api, server } = first;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const general = await channel(api, 'general', [1, ann.userId]);
  const history: number[] = [];
  for (let n = 0; n < UNREAD; n += 1000) {
    const sent = await Promise.all(Array.from({ length: 1000 }, (_, i) => server.runtime.execute(1, {
      type: 'message.send', caller: { kind: 'user', userId: 1 }, kind: 'channel', to: general, topic: `topic ${(n + i) % 50}`, content: `news ${n + i}`, client: 'API',
    })));
    for (const [change] of sent) if (change?.type === 'message.sent') history.push(change.message.id);
  }
  const annApi = api.as(ann);
  t.equal((await annApi.get('/messages', { anchor: 'newest', num_before: 0, num_after: 0, narrow: [{ operator: 'is', operand: 'unread' }] })).status, 200);
  t.equal(server.runtime.realmState(1).messages.flags.unread.get(ann.userId)?.size, UNREAD, "Ann's unread messages");

  // A flags update over a wide range is bounded as one fetch is (5,000 messages), made smaller rather than refused.
  const wide = await annApi.post('/messages/flags/narrow', { anchor: 'newest', num_before: UNREAD, num_after: 0, narrow: [], op: 'add', flag: 'starred' });
  t.equal(wide.status, 200, 'a range wider than the bound is taken');
  t.same([wide.body.processed_count, wide.body.updated_count, wide.body.first_processed_id, wide.body.last_processed_id, wide.body.found_oldest, wide.body.found_newest],
    [5000, 5000, history[UNREAD - 5000], history[UNREAD - 1], false, true], 'and made the newest 5,000 before the anchor');

  const { queueId } = await annApi.register({ event_types: ['update_message_flags'] });
  let answered = false;
  const marking = annApi.post('/mark_all_as_read').then((result) => {
    answered = true;
    return result;
  });

  // Ann's events as they come: each poll is a request made after the previous one was answered.
  const events: FlagsEvent[] = [];
  const marked = new Set<number>();
  let lastEventId = -1;
  let pollsAnsweredMeanwhile = 0;
  let otherAnsweredMeanwhile: boolean | null = null;
  while (marked.size < UNREAD) {
    const poll = await annApi.get('/events', { queue_id: queueId, last_event_id: lastEventId });
    if (poll.status !== 200) throw new Error(`events failed: ${JSON.stringify(poll.body)}`);
    if (!answered) pollsAnsweredMeanwhile++;
    for (const event of poll.body.events as FlagsEvent[]) {
      lastEventId = event.id;
      if (event.type !== 'update_message_flags') continue;
      events.push(event);
      for (const id of event.messages) marked.add(id);
    }
    // Once marking has begun: another request, of another kind, made now.
    if (otherAnsweredMeanwhile === null && events.length > 0) {
      const me = await annApi.get('/users/me');
      t.equal(me.status, 200);
      otherAnsweredMeanwhile = !answered;
    }
  }
  const result = await marking;
  t.equal(result.status, 200);
  t.equal(result.body.complete, true, 'all marked in one request');
  t.ok(otherAnsweredMeanwhile, 'a request made after marking began was answered before marking ended');
  t.ok(pollsAnsweredMeanwhile >= 2, `${pollsAnsweredMeanwhile} polls for events were answered while marking went on`);

  t.ok(events.length > 1, `told in ${events.length} batches`);
  t.ok(events.every((event) => event.op === 'add' && event.operation === 'add' && event.flag === 'read' && event.all === false), 'each an update_message_flags event adding read');
  t.equal(events.reduce((sum, event) => sum + event.messages.length, 0), UNREAD, 'no message told twice');
  t.same([...marked].sort((a, b) => a - b), history, 'every unread message, and only those');
  t.equal(server.runtime.realmState(1).messages.flags.unread.get(ann.userId)?.size ?? 0, 0, 'none left unread');
  const unreadAfter = await annApi.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'is', operand: 'unread' }] });
  t.same(unreadAfter.body.messages, [], 'GET /messages finds none unread');

  // Each batch was committed: a restart finds them all read.
  await first.stop();
  const second = await startTestServer(t, { dataDir: first.dataDir, rateLimit: null });
  t.equal(second.server.runtime.realmState(1).messages.flags.unread.get(ann.userId)?.size ?? 0, 0, 'none unread after a restart');
  const again = await second.api.as(ann).post('/mark_all_as_read');
  t.same(again.body.complete, true, 'marking again finds nothing to do');
});
