/**
 * Requests one member may make that once held the event loop for seconds in a large organization, without
 * HTTP: the server's own Store and Runtime in this process (as bench/lib/organization.ts opens them), with an
 * event queue for every user (everyone online, as the web app registers). Times the longest turn of the event
 * loop while each command runs (decided, applied, committed, its events delivered to the queues) and its CPU:
 *
 * - a member marking `--unread` messages read 2,000 at a time (as mark_all_as_read does) with
 *   `--member-queues` queues of its own that are not polled meanwhile (each merges the flag events);
 * - the same member joining `--channels` public channels in one request, then leaving them (the peer events
 *   that tell every other user);
 * - the owner editing a message of the channel everyone is in, its content then its topic (the update_message
 *   event to every user, grouped by the flags each has of it).
 *
 * To compare trees, copy this file into the other one.
 *
 *   npx tsx bench/member-requests.ts [--users 10000] [--channels 2500] [--unread 100000] [--member-queues 7]
 */
import { parseArgs } from 'node:util';
import { writeOrganization } from './lib/organization.ts';
import { makeTempDir, removeTempDir } from './lib/proc.ts';
import { watchTurns } from './lib/turns.ts';

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '10000' }, channels: { type: 'string', default: '2500' }, unread: { type: 'string', default: '100000' },
    'member-queues': { type: 'string', default: '7' },
  },
});
const users = Number(values.users);
const channels = Number(values.channels);
const unread = Number(values.unread);
const memberQueues = Number(values['member-queues']);
/** The batch mark_all_as_read commits at a time (src/routes/message-flags.ts). */
const MARK_READ_BATCH = 2000;

/** The longest turn of the event loop while the command ran to its end (events delivered), and its CPU, in ms. */
async function timed(run: () => Promise<unknown>): Promise<{ turnMs: number; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const watch = watchTurns();
  await run();
  // Deliveries the commit scheduled run in the turns after it.
  await new Promise((resolve) => setImmediate(resolve));
  const turnMs = watch();
  const used = process.cpuUsage(cpu);
  return { turnMs, cpuMs: (used.user + used.system) / 1000 };
}
const f = (n: number) => n.toFixed(0);

const dir = makeTempDir('member-requests-');
try {
  const written = performance.now();
  const { runtime, store, realm, userIds } = await writeOrganization(dir, { users, name: 'large', channel: 'everyone' });
  const owner = { kind: 'user', userId: userIds[0]! } as const;
  const memberId = userIds[1]!;
  const member = { kind: 'user', userId: memberId } as const;
  const options = { inviteOnly: false, isWebPublic: false, messageRetentionDays: null, isDefault: false, permissions: {} };
  const names = Array.from({ length: channels }, (_, i) => `channel ${i}`);
  for (let start = 0; start < channels; start += 250) {
    await runtime.execute(realm.realmId, { type: 'channel.subscribe', caller: owner, channels: names.slice(start, start + 250).map((name) => ({ name, description: '' })), principals: [owner.userId], options, authorizationErrorsFatal: true });
  }
  await runtime.execute(realm.realmId, { type: 'channel.subscribe', caller: owner, channels: [{ name: 'firehose', description: '' }], principals: [owner.userId, memberId], options, authorizationErrorsFatal: true });
  const firehose = runtime.realmState(realm.realmId).channelIdByName.get('firehose')!;
  for (let start = 0; start < unread; start += 1000) {
    await Promise.all(Array.from({ length: Math.min(1000, unread - start) }, (_, i) =>
      runtime.execute(realm.realmId, { type: 'message.send', caller: owner, kind: 'channel', to: firehose, topic: `topic ${(start + i) % 100}`, content: `message ${start + i}`, client: 'bench' })));
  }
  await runtime.snapshot();
  // As a client registers for everything (no event types named), with the capabilities the web app sends.
  const spec = { eventTypes: null, allPublicStreams: false, narrow: [], capabilities: { notification_settings_null: true, bulk_message_deletion: true, user_avatar_url_field_optional: true }, applyMarkdown: true, clientExtavatar: true, slimPresence: true, idleTimeoutMs: 600_000 };
  for (const userId of userIds) await runtime.createQueue(realm.realmId, userId, spec);
  for (let i = 1; i < memberQueues; i++) await runtime.createQueue(realm.realmId, memberId, spec);
  console.log(`${users} users with a queue each (the member ${memberQueues}), ${channels} channels, ${unread} messages unread for the member; written in ${((performance.now() - written) / 1000).toFixed(1)} s`);

  const turns: number[] = [];
  let cpuMs = 0;
  for (let batch = 0; ; batch++) {
    let marked = 0;
    const run = await timed(async () => {
      const [change] = await runtime.execute(realm.realmId, { type: 'message.mark_read', caller: member, scope: { kind: 'all' }, limit: MARK_READ_BATCH });
      marked = change?.type === 'message.flags_changed' ? change.messageIds.length : 0;
    });
    turns.push(run.turnMs);
    cpuMs += run.cpuMs;
    if (marked < MARK_READ_BATCH) break;
  }
  const longest = Math.max(...turns);
  console.log(`the member marks everything read, ${MARK_READ_BATCH} a batch (${turns.length} batches): longest turn ${f(longest)} ms, last ${f(turns.at(-1)!)} ms; CPU ${f(cpuMs)} ms in all`);
  const join = await timed(() => runtime.execute(realm.realmId, { type: 'channel.subscribe', caller: member, channels: names.map((name) => ({ name, description: '' })), principals: [memberId], options, authorizationErrorsFatal: true }));
  console.log(`the member joins ${channels} channels: turn ${f(join.turnMs)} ms, CPU ${f(join.cpuMs)} ms`);
  const leave = await timed(() => runtime.execute(realm.realmId, { type: 'channel.unsubscribe', caller: member, channels: names, principals: [memberId] }));
  console.log(`the member leaves them: turn ${f(leave.turnMs)} ms, CPU ${f(leave.cpuMs)} ms`);
  const everyone = runtime.realmState(realm.realmId).channelIdByName.get('everyone')!;
  const [sent] = await runtime.execute(realm.realmId, { type: 'message.send', caller: owner, kind: 'channel', to: everyone, topic: 'news', content: 'to everyone', client: 'bench' });
  if (sent?.type !== 'message.sent') throw new Error('no message sent');
  for (const [label, edit] of [['content', { content: 'edited' }], ['topic', { topic: 'moved news' }]] as const) {
    const edited = await timed(() => runtime.execute(realm.realmId, { type: 'message.edit', caller: owner, messageId: sent.message.id, propagateMode: 'change_one', notifyOldThread: false, notifyNewThread: false, ...edit }));
    console.log(`the owner edits a message to everyone, its ${label}: turn ${f(edited.turnMs)} ms, CPU ${f(edited.cpuMs)} ms`);
  }

  await store.close();
} finally {
  removeTempDir(dir);
}
