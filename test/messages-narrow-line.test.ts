import t from 'tap';
import { queuedOf } from '../actors/realm/messages/turns.ts';
import { channel, sendToChannel } from './helpers/messages.ts';
import { startTestServer, type ApiResult } from './helpers/server.ts';

/** Filler messages, walked a few ids a turn: each slow narrow below takes thousands of turns of the event loop. */
const HISTORY = 20_000;
const SLICE_IDS = 8;
/** CHAT_NARROWS_QUEUED_PER_USER here. */
const LINE = 3;
/** The narrows one member fires at once. */
const FLOOD = 40;

t.test("a user's slow narrows wait in a bounded line; the rest are refused as the rate limiter refuses", async (t) => {
  const { api, server } = await startTestServer(t, { rateLimit: null, narrowSliceIds: SLICE_IDS, narrowsQueuedPerUser: LINE });
  const runtime = server.runtime;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const quiet = await api.createUser('quiet@example.com', 'Quiet');
  const general = await channel(api, 'general', [1, ann.userId, bob.userId, quiet.userId]);
  const hers = await sendToChannel(api.as(ann), general, 'early', 'the only message of hers');
  for (let n = 0; n < HISTORY; n += 1000) {
    await Promise.all(Array.from({ length: 1000 }, (_, i) => runtime.execute(1, {
      type: 'message.send', caller: { kind: 'user', userId: 1 }, kind: 'channel', to: general, topic: `topic ${(n + i) % 50}`, content: `filler ${n + i}`, client: 'API',
    })));
  }
  // Quiet sent nothing: the narrow walks the whole history. Ann's own: found at its bottom.
  const slow = (as: typeof api, sender: number) =>
    as.get('/messages', { anchor: 'newest', num_before: 50, num_after: 0, narrow: [{ operator: 'sender', operand: sender }], apply_markdown: false });
  const annLine = `1:${ann.userId}`;
  const bobLine = `1:${bob.userId}`;

  // The longest lines seen, sampled every turn of the event loop while the flood is answered.
  let longest = { ann: 0, bob: 0 };
  let flooding = true;
  const sample = () => {
    longest = { ann: Math.max(longest.ann, queuedOf(annLine)), bob: Math.max(longest.bob, queuedOf(bobLine)) };
    if (flooding) setImmediate(sample);
  };
  setImmediate(sample);
  const annsFlood = Array.from({ length: FLOOD }, () => slow(api.as(ann), quiet.userId));
  const bobs = Array.from({ length: LINE }, () => slow(api.as(bob), ann.userId));
  let walking = true;
  void Promise.all([...annsFlood, ...bobs]).finally(() => (walking = false));
  let meAnswered = 0;
  const meStatuses = new Set<number>();
  const others = (async () => {
    // Another user's quick requests are answered while the lines are walked.
    while (walking) {
      meStatuses.add((await api.as(bob).get('/users/me')).status);
      if (walking) meAnswered++;
    }
  })();
  const answers: ApiResult[] = await Promise.all(annsFlood);
  const bobsAnswers = await Promise.all(bobs);
  await others;
  flooding = false;

  const served = answers.filter((answer) => answer.status === 200);
  const refused = answers.filter((answer) => answer.status === 429);
  t.equal(served.length + refused.length, FLOOD, 'each narrow served or refused');
  t.ok(longest.ann <= LINE, `at most ${LINE} of Ann's narrows in line at once (${longest.ann})`);
  t.equal(longest.ann, LINE, 'her line filled');
  t.ok(served.length >= LINE, `her first ${LINE} served (${served.length})`);
  t.ok(refused.length >= FLOOD - 2 * LINE, `the rest refused while her line was full (${refused.length} of ${FLOOD})`);
  for (const answer of served) t.same(answer.body.messages, [], 'a served narrow answers in full');
  for (const answer of refused.slice(0, 3)) {
    t.equal(answer.body.result, 'error');
    t.equal(answer.body.code, 'RATE_LIMIT_HIT');
    t.match(answer.body.msg, /Too many slow narrows/);
    t.ok(typeof answer.body['retry-after'] === 'number' && answer.body['retry-after'] > 0, `retry-after ${answer.body['retry-after']}`);
    t.match(answer.headers.get('Retry-After'), /^\d+$/, 'Retry-After header');
  }
  // Bob's line is his own: Ann's flood refused none of his.
  t.same(bobsAnswers.map((answer) => [answer.status, answer.body.messages?.map((m: { id: number }) => m.id)]), Array.from({ length: LINE }, () => [200, [hers]]), "Bob's narrows all served");
  t.equal(longest.bob, LINE, 'his line held all of his');
  t.ok(meAnswered >= 1, `GET /users/me answered ${meAnswered} times meanwhile`);
  t.same([...meStatuses], [200]);

  t.equal(queuedOf(annLine), 0, 'her line empty again');
  t.equal((await slow(api.as(ann), quiet.userId)).status, 200, 'and her next slow narrow served');
  // A narrow that fits in one slice never waits in line, however full it is.
  const full = Array.from({ length: LINE }, () => slow(api.as(ann), quiet.userId));
  while (queuedOf(annLine) < LINE) await new Promise((resolve) => setImmediate(resolve));
  const quick = await api.as(ann).get('/messages', { anchor: hers, num_before: 0, num_after: 0, narrow: [] });
  t.same([quick.status, quick.body.messages.map((m: { id: number }) => m.id)], [200, [hers]], 'a quick narrow served beside a full line');
  t.same((await Promise.all(full)).map((answer) => answer.status), Array(LINE).fill(200));
});
