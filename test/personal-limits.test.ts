import t from 'tap';
import { rmSync } from 'node:fs';
import { DEFAULT_PERSONAL_LIMITS } from '../actors/user/limits.ts';
import { configFrom } from '../src/config.ts';
import { channel } from './helpers/messages.ts';
import { startTestServer, tempDir } from './helpers/server.ts';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

// Saved snippets, drafts and alert words at their default bounds; the kinds made one request each at a time
// (scheduled messages, topic policies, push tokens) at small configured ones, each checked the same way.
const limits = { ...DEFAULT_PERSONAL_LIMITS, scheduledMessages: 3, topicPolicies: 5, pushTokens: 4 };

const refusal = (what: string, count: number, limit: number) => `You have ${count} ${what} and may keep at most ${limit}`;

async function expectRefused(t: Test, answer: Promise<{ status: number; body: Record<string, unknown> }>, msg: string, label: string): Promise<void> {
  const { status, body } = await answer;
  t.equal(status, 400, `${label}: 400`);
  t.same({ code: body.code, msg: body.msg }, { code: 'BAD_REQUEST', msg }, label);
}

async function ok(t: Test, answer: Promise<{ status: number; body: Record<string, unknown> }>, label: string): Promise<Record<string, unknown>> {
  const { status, body } = await answer;
  t.equal(status, 200, `${label}: ${status === 200 ? 'ok' : JSON.stringify(body)}`);
  return body;
}

t.test('each kind of personal thing a user keeps is bounded; removing one makes room; the bounds hold after a restart', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  let server = await startTestServer(t, { dataDir, rateLimit: null, personalLimits: limits });
  let { api } = server;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const general = await channel(api, 'general', [1, ann.userId]);

  // Saved snippets: the title and content lengths, then the count.
  await expectRefused(t, api.post('/saved_snippets', { title: 'x'.repeat(61), content: 'c' }), 'Title is too long (limit: 60 characters)', 'a 61-character title');
  await expectRefused(t, api.post('/saved_snippets', { title: 't', content: 'c'.repeat(10_001) }), 'Content is too long (limit: 10000 characters)', 'a 10,001-character content');
  await ok(t, api.post('/saved_snippets', { title: 'x'.repeat(60), content: 'c'.repeat(10_000) }), 'the longest title and content');
  let lastSnippet = 0;
  for (let i = 1; i < limits.savedSnippets; i++) {
    const { status, body } = await api.post('/saved_snippets', { title: `snippet ${i}`, content: 'Hello' });
    if (status !== 200) t.fail(`snippet ${i}: ${JSON.stringify(body)}`);
    lastSnippet = body.saved_snippet_id;
  }
  await expectRefused(t, api.post('/saved_snippets', { title: 'one more', content: 'Hello' }), refusal('saved snippets', 100, 100), 'the 101st saved snippet');
  await ok(t, api.patch(`/saved_snippets/${lastSnippet}`, { content: 'edited' }), 'at the bound, a snippet is still edited');
  await expectRefused(t, api.patch(`/saved_snippets/${lastSnippet}`, { title: 'y'.repeat(61) }), 'Title is too long (limit: 60 characters)', 'an edit to a 61-character title');
  await ok(t, api.delete(`/saved_snippets/${lastSnippet}`), 'a snippet deleted');
  await ok(t, api.post('/saved_snippets', { title: 'in its place', content: 'Hello' }), 'makes room for another');
  t.equal((await api.get('/saved_snippets')).body.saved_snippets.length, 100);

  // Drafts: one request of the whole bound, then one more; a request that would pass the bound is refused whole.
  const draft = (i: number) => ({ type: 'stream', to: [general], topic: `draft ${i}`, content: `draft ${i}` });
  const annDrafts = Array.from({ length: limits.drafts + 1 }, (_, i) => draft(i));
  await expectRefused(t, api.as(ann).post('/drafts', { drafts: annDrafts }), `${refusal('drafts', 0, 1000)}; these 1001 would make 1001`, '1,001 drafts at once');
  t.equal((await api.as(ann).get('/drafts')).body.count, 0, 'none of them was kept');
  const made = await ok(t, api.post('/drafts', { drafts: annDrafts.slice(0, limits.drafts) }), '1,000 drafts at once');
  await expectRefused(t, api.post('/drafts', { drafts: [draft(1000)] }), refusal('drafts', 1000, 1000), 'the 1,001st draft');
  await ok(t, api.patch(`/drafts/${(made.ids as number[])[0]}`, { draft: draft(0) }), 'at the bound, a draft is still edited');
  await ok(t, api.delete(`/drafts/${(made.ids as number[])[0]}`), 'a draft deleted');
  await ok(t, api.post('/drafts', { drafts: [draft(1000)] }), 'makes room for another');

  // Alert words: new words count, words already there (in any case) do not.
  const words = Array.from({ length: limits.alertWords }, (_, i) => `word${i}`);
  await expectRefused(t, api.as(ann).post('/users/me/alert_words', { alert_words: [...words, 'one more'] }), `${refusal('alert words', 0, 1000)}; these 1001 would make 1001`, '1,001 alert words at once');
  t.same((await api.as(ann).get('/users/me/alert_words')).body.alert_words, [], 'none of them was kept');
  await ok(t, api.post('/users/me/alert_words', { alert_words: words }), '1,000 alert words at once');
  await ok(t, api.post('/users/me/alert_words', { alert_words: ['WORD0', 'word999'] }), 'words already there, in another case');
  await expectRefused(t, api.post('/users/me/alert_words', { alert_words: ['word0', 'one more'] }), refusal('alert words', 1000, 1000), 'the 1,001st alert word (the one already there is not counted)');
  await ok(t, api.delete('/users/me/alert_words', { alert_words: ['word5'] }), 'an alert word removed');
  await ok(t, api.post('/users/me/alert_words', { alert_words: ['one more'] }), 'makes room for another');

  // Scheduled messages (configured: 3); reminders do not count among them.
  const later = Math.floor(Date.now() / 1000) + 3600;
  const schedule = (i: number) => api.post('/scheduled_messages', { type: 'stream', to: general, topic: 'later', content: `later ${i}`, scheduled_delivery_timestamp: later + i });
  const scheduled: number[] = [];
  for (let i = 0; i < limits.scheduledMessages; i++) scheduled.push((await ok(t, schedule(i), `scheduled message ${i + 1}`)).scheduled_message_id as number);
  const sent = await ok(t, api.post('/messages', { type: 'stream', to: String(general), topic: 'remind me', content: 'about this' }), 'a message to be reminded of');
  await ok(t, api.post('/reminders', { message_id: sent.id, scheduled_delivery_timestamp: later }), 'a reminder does not count among scheduled messages');
  await expectRefused(t, schedule(3), refusal('scheduled messages', 3, 3), 'the 4th scheduled message');
  await ok(t, api.patch(`/scheduled_messages/${scheduled[0]}`, { content: 'edited' }), 'at the bound, a scheduled message is still edited');
  await ok(t, api.delete(`/scheduled_messages/${scheduled[0]}`), 'a scheduled message deleted');
  await ok(t, schedule(4), 'makes room for another');

  // Topic policies (configured: 5): a new topic counts, a change of an existing policy does not.
  const policy = (topic: string, visibility_policy: number) => api.post('/user_topics', { stream_id: general, topic, visibility_policy });
  for (let i = 0; i < limits.topicPolicies; i++) await ok(t, policy(`topic ${i}`, 1), `topic policy ${i + 1}`);
  await expectRefused(t, policy('topic 5', 1), refusal('topics with a visibility policy', 5, 5), 'a 6th topic with a policy');
  await ok(t, policy('topic 0', 3), 'at the bound, a policy is still changed');
  await ok(t, policy('topic 1', 0), 'a policy removed');
  await ok(t, policy('topic 5', 1), 'makes room for another');

  // Push device tokens (configured: 4): a token registered again is not one more.
  const token = (i: number) => api.post('/users/me/push_device_token', { token: `fcm-token-${i}` });
  for (let i = 0; i < limits.pushTokens; i++) await ok(t, token(i), `push token ${i + 1}`);
  await ok(t, token(0), 'a known token registered again');
  await expectRefused(t, token(4), refusal('push device tokens', 4, 4), 'a 5th push token');
  await ok(t, api.delete('/users/me/push_device_token', { token: 'fcm-token-1' }), 'a token removed');
  await ok(t, token(4), 'makes room for another');

  // The counts are the user's state, restored from the data directory.
  await server.stop();
  server = await startTestServer(t, { dataDir, rateLimit: null, personalLimits: limits });
  api = server.api;
  await expectRefused(t, api.post('/saved_snippets', { title: 'after', content: 'restart' }), refusal('saved snippets', 100, 100), 'after a restart: saved snippets');
  await expectRefused(t, api.post('/drafts', { drafts: [draft(0)] }), refusal('drafts', 1000, 1000), 'after a restart: drafts');
  await expectRefused(t, api.post('/users/me/alert_words', { alert_words: ['after'] }), refusal('alert words', 1000, 1000), 'after a restart: alert words');
  await expectRefused(t, schedule(9), refusal('scheduled messages', 3, 3), 'after a restart: scheduled messages');
  await expectRefused(t, policy('after', 1), refusal('topics with a visibility policy', 5, 5), 'after a restart: topic policies');
  await expectRefused(t, token(9), refusal('push device tokens', 4, 4), 'after a restart: push tokens');
});

t.test('the bounds are read from the environment', async (t) => {
  const config = configFrom({}, {
    CHAT_MAX_SAVED_SNIPPETS_PER_USER: '7',
    CHAT_MAX_DRAFTS_PER_USER: '8',
    CHAT_MAX_SCHEDULED_MESSAGES_PER_USER: '9',
    CHAT_MAX_ALERT_WORDS_PER_USER: '10',
    CHAT_MAX_TOPIC_POLICIES_PER_USER: '11',
    CHAT_MAX_PUSH_TOKENS_PER_USER: '12',
  });
  t.same(config.personalLimits, { savedSnippets: 7, drafts: 8, scheduledMessages: 9, alertWords: 10, topicPolicies: 11, pushTokens: 12 });
  t.throws(() => configFrom({}, { CHAT_MAX_DRAFTS_PER_USER: '0' }), /CHAT_MAX_DRAFTS_PER_USER/, 'a bound of 0 is refused');
});
