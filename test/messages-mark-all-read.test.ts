import t from 'tap';
import { channel } from './helpers/messages.ts';
import { startTestServer, type ApiClient, type ApiResult } from './helpers/server.ts';

/**
 * POST /mark_all_as_read (and mark_stream_as_read) for a user with a great many unread messages marks them in
 * batches, each committed and told to the user's queues on its own, with other requests answered between
 * them, rather than all of them in one turn of the event loop.
 */

/** A user back from a long absence in a busy organization: half of it in one channel, half in another. */
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

/**
 * Makes the request marking `expected` read and follows the user's events until all of them are told. Each
 * poll for events is a request made after the previous one was answered; so is a GET /users/me made once
 * the first batch is told.
 */
async function watchMarking(api: ApiClient, queueId: string, expected: readonly number[], request: () => Promise<ApiResult>) {
  let answered = false;
  const marking = request().then((result) => {
    answered = true;
    return result;
  });
  const events: FlagsEvent[] = [];
  const marked = new Set<number>();
  let pollsMeanwhile = 0;
  let otherMeanwhile: boolean | null = null;
  let lastEventId = watchMarking.lastEventId.get(queueId) ?? -1;
  while (marked.size < expected.length) {
    const poll = await api.get('/events', { queue_id: queueId, last_event_id: lastEventId });
    if (poll.status !== 200) throw new Error(`events failed: ${JSON.stringify(poll.body)}`);
    if (!answered) pollsMeanwhile++;
    for (const event of poll.body.events as FlagsEvent[]) {
      lastEventId = event.id;
      if (event.type !== 'update_message_flags') continue;
      events.push(event);
      for (const id of event.messages) marked.add(id);
    }
    if (otherMeanwhile === null && events.length > 0) {
      const me = await api.get('/users/me');
      if (me.status !== 200) throw new Error('GET /users/me failed');
      otherMeanwhile = !answered;
    }
  }
  watchMarking.lastEventId.set(queueId, lastEventId);
  return { result: await marking, events, marked: [...marked].sort((a, b) => a - b), pollsMeanwhile, otherMeanwhile };
}
watchMarking.lastEventId = new Map<string, number>();

t.test('marking 100,000 messages read answers other requests meanwhile, and marks every one', async (t) => {
  const first = await startTestServer(t, { rateLimit: null });
  const { api, server } = first;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const general = await channel(api, 'general', [1, ann.userId]);
  const news = await channel(api, 'news', [1, ann.userId]);
  const history: number[] = [];
  const inNews: number[] = [];
  for (let n = 0; n < UNREAD; n += 1000) {
    const sent = await Promise.all(Array.from({ length: 1000 }, (_, i) => server.runtime.execute(1, {
      type: 'message.send', caller: { kind: 'user', userId: 1 }, kind: 'channel', to: (n + i) % 2 ? news : general, topic: `topic ${(n + i) % 50}`, content: `news ${n + i}`, client: 'API',
    })));
    for (const [change] of sent) {
      if (change?.type !== 'message.sent') continue;
      history.push(change.message.id);
      if (change.message.recipient.kind === 'channel' && change.message.recipient.channelId === news) inNews.push(change.message.id);
    }
  }
  const annApi = api.as(ann);
  const unreadOf = () => server.runtime.realmState(1).messages.flags.unread.get(ann.userId)?.size ?? 0;
  t.equal(unreadOf(), UNREAD, "Ann's unread messages");
  t.equal(inNews.length, UNREAD / 2, 'half of them in #news');

  // A flags update over a wide range is bounded as one fetch is (5,000 messages), made smaller rather than refused.
  const wide = await annApi.post('/messages/flags/narrow', { anchor: 'newest', num_before: UNREAD, num_after: 0, narrow: [], op: 'add', flag: 'starred' });
  t.equal(wide.status, 200, 'a range wider than the bound is taken');
  t.same([wide.body.processed_count, wide.body.updated_count, wide.body.first_processed_id, wide.body.last_processed_id, wide.body.found_oldest, wide.body.found_newest],
    [5000, 5000, history[UNREAD - 5000], history[UNREAD - 1], false, true], 'and made the newest 5,000 before the anchor');

  const { queueId } = await annApi.register({ event_types: ['update_message_flags'] });
  const checkMarking = (what: string, watched: Awaited<ReturnType<typeof watchMarking>>, expected: readonly number[]) => {
    const { result, events, marked, pollsMeanwhile, otherMeanwhile } = watched;
    t.equal(result.status, 200, `${what}: answered`);
    t.ok(otherMeanwhile, `${what}: a request made after marking began was answered before marking ended`);
    t.ok(pollsMeanwhile >= 2, `${what}: ${pollsMeanwhile} polls for events were answered while marking went on`);
    t.ok(events.length > 1, `${what}: told in ${events.length} batches`);
    t.ok(events.every((event) => event.op === 'add' && event.operation === 'add' && event.flag === 'read' && event.all === false), `${what}: each an update_message_flags event adding read`);
    t.equal(events.reduce((sum, event) => sum + event.messages.length, 0), expected.length, `${what}: no message told twice`);
    t.same(marked, expected, `${what}: every unread message of it, and only those`);
  };

  const channelMarked = await watchMarking(annApi, queueId, inNews, () => annApi.post('/mark_stream_as_read', { stream_id: news }));
  checkMarking('mark_stream_as_read', channelMarked, inNews);
  t.equal(unreadOf(), UNREAD / 2, 'the other channel still unread');

  const newsIds = new Set(inNews);
  const inGeneral = history.filter((id) => !newsIds.has(id));
  const allMarked = await watchMarking(annApi, queueId, inGeneral, () => annApi.post('/mark_all_as_read'));
  checkMarking('mark_all_as_read', allMarked, inGeneral);
  t.equal(allMarked.result.body.complete, true, 'all marked in one request');
  t.equal(unreadOf(), 0, 'none left unread');
  const unreadAfter = await annApi.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'is', operand: 'unread' }] });
  t.same(unreadAfter.body.messages, [], 'GET /messages finds none unread');

  // Each batch was committed: a restart finds them all read.
  await first.stop();
  const second = await startTestServer(t, { dataDir: first.dataDir, rateLimit: null });
  t.equal(second.server.runtime.realmState(1).messages.flags.unread.get(ann.userId)?.size ?? 0, 0, 'none unread after a restart');
  const again = await second.api.as(ann).post('/mark_all_as_read');
  t.same(again.body.complete, true, 'marking again finds nothing to do');
});
