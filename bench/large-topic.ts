/**
 * A topic of `--messages` moved whole from one channel of `--users` subscribers to another and back, then
 * deleted as delete_topic does (batches of 1,000), without HTTP: the server's own Store and Runtime in this
 * process (as bench/lib/organization.ts writes them). Each moved message's holders lose who may not read it
 * there and gain the channel's subscribers; each deleted message's holders lose their flags of it.
 *
 * - the baseline: the holders walked per message as the decision did before (every holder of every message
 *   into a set, to find who loses access: twice, as the read-ahead decides too), and made per message as
 *   apply.ts did (each message's list copied, each subscriber inserted by a binary search), over the same
 *   messages, alone: the parts the change replaced;
 * - now: the whole move, decided and applied (runtime.execute), its longest turn of the event loop and its
 *   CPU, the holders made once per list the messages share; the first move reads the bodies ahead (read-ahead.ts).
 *
 * Then a rename of the topic in place: the decision alone (decideRealm, as the apply's turn made it again
 * before the read-ahead's decision was kept, read-ahead.ts), then the whole rename, its longest turn and CPU.
 *
 * Then the deletion: the baseline, each deleted message's audience gathered and each holder's flag sets looked
 * up per message, as decide-misc.ts and apply.ts did before (alone, without deleting); now, every batch of the
 * deletion, its longest turn and CPU.
 *
 *   npx tsx bench/large-topic.ts [--users 2000] [--messages 10000]
 */
import { parseArgs } from 'node:util';
import { writeOrganization } from './lib/organization.ts';
import { makeTempDir, removeTempDir } from './lib/proc.ts';
import { cpuMs, watchTurns } from './lib/turns.ts';
import { insertSorted, lowerBound, PERSONAL_FLAGS, topicKey } from '../actors/realm/messages/state.ts';
import { messageAudience } from '../actors/realm/messages/access.ts';
import { decideRealm } from '../actors/realm/decide.ts';

const { values } = parseArgs({ options: { users: { type: 'string', default: '2000' }, messages: { type: 'string', default: '10000' } } });
const users = Number(values.users);
const messages = Number(values.messages);

/** The holders of one message after a move, as apply.ts made them for every message before. */
function holdersPerMessage(before: readonly number[], lostAccess: readonly number[], gained: readonly number[]): number[] {
  const holders = [...before];
  for (const userId of lostAccess) {
    const at = lowerBound(holders, userId);
    if (holders[at] === userId) holders.splice(at, 1);
  }
  for (const userId of gained) insertSorted(holders, userId);
  return holders;
}

const dir = makeTempDir('large-topic-');
try {
  const { runtime, store, realm, userIds, channelId } = await writeOrganization(dir, { users, name: 'large', channel: 'everyone' });
  const owner = { kind: 'user', userId: userIds[0]! } as const;
  const options = { inviteOnly: false, isWebPublic: false, messageRetentionDays: null, isDefault: false, permissions: {} };
  await runtime.execute(realm.realmId, { type: 'channel.subscribe', caller: owner, channels: [{ name: 'target', description: '' }], principals: userIds, options, authorizationErrorsFatal: true });
  const state = runtime.realmState(realm.realmId);
  const target = state.channelIdByName.get('target')!;
  for (let start = 0; start < messages; start += 500) {
    await Promise.all(Array.from({ length: Math.min(500, messages - start) }, (_, i) =>
      runtime.execute(realm.realmId, { type: 'message.send', caller: owner, kind: 'channel', to: channelId, topic: 'big', content: `message ${start + i}`, client: 'bench' })));
  }
  await runtime.snapshot();
  const ids = [...state.messages.byTopic.get(topicKey(channelId, 'big'))!];
  console.log(`${users} users in both channels; a topic of ${ids.length} messages`);

  const subscribers = [...state.subscriptions.get(target)!.keys()].sort((a, b) => a - b);
  const cpu = cpuMs();
  const started = performance.now();
  for (let decisions = 0; decisions < 2; decisions++) {
    const holders = new Set<number>();
    for (const id of ids) for (const userId of state.messages.byId.get(id)!.userIds) holders.add(userId);
  }
  for (const id of ids) holdersPerMessage(state.messages.byId.get(id)!.userIds, [], subscribers);
  console.log(`${'baseline: the holders walked and made per message, alone'.padEnd(56)} ${(performance.now() - started).toFixed(0).padStart(6)} ms wall ${(cpuMs() - cpu).toFixed(0).padStart(6)} ms CPU`);

  for (const [label, to] of [['now: the whole move to the other channel', target], ['now: the whole move back', channelId]] as const) {
    const watch = watchTurns();
    const cpuBefore = cpuMs();
    const start = performance.now();
    await runtime.execute(realm.realmId, { type: 'message.edit', caller: owner, messageId: ids[0]!, channelId: to, propagateMode: 'change_all', notifyOldThread: false, notifyNewThread: false });
    const wall = performance.now() - start;
    console.log(`${label.padEnd(56)} ${wall.toFixed(0).padStart(6)} ms wall ${(cpuMs() - cpuBefore).toFixed(0).padStart(6)} ms CPU, longest turn ${watch().toFixed(0)} ms`);
  }

  const rename = { type: 'message.edit', caller: owner, messageId: ids[0]!, topic: 'renamed', propagateMode: 'change_all', notifyOldThread: false, notifyNewThread: false } as const;
  const deciding = { cpu: cpuMs(), wall: performance.now() };
  decideRealm(state, rename, { now: Date.now });
  console.log(`${'the rename\'s decision alone (made again at the apply before)'.padEnd(56)} ${(performance.now() - deciding.wall).toFixed(0).padStart(6)} ms wall ${(cpuMs() - deciding.cpu).toFixed(0).padStart(6)} ms CPU`);
  const renaming = { watch: watchTurns(), cpu: cpuMs(), wall: performance.now() };
  await runtime.execute(realm.realmId, rename);
  console.log(`${'now: the whole rename in place'.padEnd(56)} ${(performance.now() - renaming.wall).toFixed(0).padStart(6)} ms wall ${(cpuMs() - renaming.cpu).toFixed(0).padStart(6)} ms CPU, longest turn ${renaming.watch().toFixed(0)} ms`);

  const perMessage = { cpu: cpuMs(), wall: performance.now(), lookups: 0 };
  for (const id of ids) {
    const message = state.messages.byId.get(id)!;
    messageAudience(state, message);
    for (const userId of message.userIds) for (const flag of PERSONAL_FLAGS) if (state.messages.flags[flag].get(userId)?.has(id)) perMessage.lookups++;
  }
  console.log(`${'baseline: audience and flag sets per message, alone'.padEnd(56)} ${(performance.now() - perMessage.wall).toFixed(0).padStart(6)} ms wall ${(cpuMs() - perMessage.cpu).toFixed(0).padStart(6)} ms CPU`);
  const watch = watchTurns();
  const deleting = { cpu: cpuMs(), wall: performance.now(), batches: 0 };
  while ((await runtime.execute(realm.realmId, { type: 'topic.delete', caller: owner, channelId, topic: 'renamed', limit: 1000 })).length > 0) deleting.batches++;
  const label = `now: delete_topic, ${deleting.batches} batches`;
  console.log(`${label.padEnd(56)} ${(performance.now() - deleting.wall).toFixed(0).padStart(6)} ms wall ${(cpuMs() - deleting.cpu).toFixed(0).padStart(6)} ms CPU, longest turn ${watch().toFixed(0)} ms`);
  await store.close();
} finally {
  removeTempDir(dir);
}
