/**
 * GET /users/me/{stream_id}/topics in a channel of many topics, without HTTP: the server's own Store and
 * Runtime in this process (as bench/lib/organization.ts opens them), `--topics` topics of one message each
 * in one channel and ten in another, written a thousand sends per turn and snapshotted (most topic lists
 * then not in memory). Times, in order:
 *
 * - the baseline: every topic's id list read and its newest message looked up at each ask, as the route did
 *   before the topic summary (actors/realm/messages/newest-ids.ts), for the large channel and the small one;
 * - the summary's first making for the large channel (`prepare`, a slice of topics a turn: the longest turn
 *   is what the event loop is held for), then an ask, one after a send, one after a snapshot, and the small
 *   channel's.
 *
 *   npx tsx bench/channel-topics.ts [--topics 100000]
 */
import { parseArgs } from 'node:util';
import { writeOrganization } from './lib/organization.ts';
import { makeTempDir, removeTempDir } from './lib/proc.ts';
import { watchTurns } from './lib/turns.ts';

const { values } = parseArgs({ options: { topics: { type: 'string', default: '100000' } } });
const topics = Number(values.topics);

const { channelTopics, prepareChannelTopics } = await import('../actors/realm/channels/activity.ts');
const { canRead } = await import('../actors/realm/messages/access.ts');
type RealmState = import('../actors/realm/state.ts').RealmState;

/** The route's way before the summary: every key of the realm's topic index walked, each of the channel's lists read. */
function everyListRead(state: RealmState, channelId: number, userId: number): number {
  const prefix = `${channelId}\u0000`;
  let found = 0;
  for (const key of [...state.messages.byTopic.keys()]) {
    if (!key.startsWith(prefix)) continue;
    for (const id of state.messages.byTopic.get(key)?.idsFrom(Infinity, true) ?? []) {
      const message = state.messages.byId.get(id);
      if (!message || !canRead(state, userId, message)) continue;
      found++;
      break;
    }
  }
  return found;
}

const ms = (start: number) => `${(performance.now() - start).toFixed(1)} ms`;

const dir = makeTempDir('channel-topics-');
try {
  const { runtime, store, realm, userIds, channelId } = await writeOrganization(dir, { users: 10, name: 'topics', channel: 'large' });
  const owner = { kind: 'user', userId: userIds[0]! } as const;
  const send = (to: number, topic: string) => runtime.execute(realm.realmId, { type: 'message.send', caller: owner, kind: 'channel', to, topic, content: `in ${topic}`, client: 'bench' });
  await runtime.execute(realm.realmId, {
    type: 'channel.subscribe', caller: owner, channels: [{ name: 'small', description: '' }], principals: userIds,
    options: { inviteOnly: false, isWebPublic: false, messageRetentionDays: null, isDefault: false, permissions: {} }, authorizationErrorsFatal: true,
  });
  const small = runtime.realmState(realm.realmId).channelIdByName.get('small')!;
  for (let i = 0; i < 10; i++) await send(small, `small ${i}`);
  const written = performance.now();
  for (let start = 0; start < topics; start += 1000) {
    await Promise.all(Array.from({ length: Math.min(1000, topics - start) }, (_, i) => send(channelId, `topic ${start + i}`)));
    if (start % 50_000 === 0) await runtime.snapshot();
  }
  await runtime.snapshot();
  console.log(`${topics} topics in one channel and 10 in another, written in ${ms(written)}`);
  const state = () => runtime.realmState(realm.realmId);
  const reader = userIds[1]!;

  let start = performance.now();
  let found = everyListRead(state(), channelId, reader);
  console.log(`baseline, every list read: the large channel (${found} topics) ${ms(start)}`);
  start = performance.now();
  found = everyListRead(state(), small, reader);
  console.log(`baseline, every list read: the small channel (${found} topics) ${ms(start)}`);

  const watch = watchTurns();
  start = performance.now();
  await prepareChannelTopics(state(), channelId);
  const longest = watch();
  console.log(`summary made for the large channel in ${ms(start)}, the longest turn ${longest.toFixed(1)} ms`);
  const ask = (label: string, channel: number) => {
    const at = performance.now();
    const answer = channelTopics(state(), channel, reader);
    console.log(`${label}: ${answer.length} topics in ${ms(at)}`);
  };
  ask('an ask, the large channel', channelId);
  ask('again', channelId);
  await send(channelId, 'topic 5');
  await send(channelId, 'a new topic');
  ask('after two sends', channelId);
  await runtime.snapshot();
  ask('after a snapshot', channelId);
  await prepareChannelTopics(state(), small);
  ask('the small channel', small);
  await store.close();
} finally {
  removeTempDir(dir);
}
