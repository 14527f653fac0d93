/**
 * The channel lists of a member subscribed to thousands of channels (GET /users/me/subscriptions, GET
 * /streams, and the same lists in a registration), without HTTP: the server's own Store and Runtime in this
 * process (as bench/lib/organization.ts opens them). For each list, the median of `--runs` answers written as
 * bytes, their CPU and the garbage collection they caused (perf_hooks):
 *
 * - the baseline: the views built as objects, the answer serialized whole and encoded, as the routes did
 *   before channels/view-json.ts;
 * - now: ChannelViewList's parts (each channel's settled fields kept as text until a change touches it) written
 *   into the answer's bytes as it is sent (PartsFields), as the routes and the registration do; then after a
 *   change to one channel (its text made again) and after one to no channel (a user's name), against every
 *   channel's text made again after the change, as every realm change did before channels/touched.ts.
 *
 * Then every channel gets a message and the organization is reopened from the data directory: `max_message_id`
 * (GET /users/me, registration) as it was read before, every list of the member's read for its newest id (the
 * index's cache keeps 4,096 keys), against the lists' summary (newest-ids.ts ListNewest) as it is now; and
 * GET /messages of the newest 50 of `[]`, every channel list read and walked as before, against the walk
 * that reads the lists newest first by the summary (query.ts LazyIds), checking both say the same. Last, a
 * week on, when each channel's traffic counts its messages: GET /users/me/subscriptions with every list
 * counted as before, against the counts kept (channels/activity.ts).
 *
 *   npx tsx bench/channel-lists.ts [--users 2000] [--channels 5000] [--runs 7]
 */
import { parseArgs } from 'node:util';
import { PerformanceObserver } from 'node:perf_hooks';
import { writeOrganization } from './lib/organization.ts';
import { makeTempDir, removeTempDir } from './lib/proc.ts';
import { median } from './lib/stats.ts';
import { ChannelViewList, forgetChangedChannelTexts } from '../actors/realm/channels/view-json.ts';
import { channelView, ownFields, subscriberIds, subscriptionOf } from '../actors/realm/channels/views.ts';
import { PartsFields } from '../src/http/envelope.ts';
import type { RealmState } from '../actors/realm/state.ts';
import type { IdList } from '../actors/realm/messages/id-list.ts';
import { canRead, newestReadableId, prepareNewestReadable } from '../actors/realm/messages/access.ts';
import { Runtime } from '../actors/runtime.ts';
import { Store } from '../snapshots/store.ts';
import { watchTurns } from './lib/turns.ts';
import { fetchWindow, idsBeyond, LARGER_THAN_MAX_MESSAGE_ID, prepareLists } from '../actors/realm/messages/query.ts';
import { idMatcher, resolveNarrow, type Clause } from '../actors/realm/messages/narrow.ts';

const { values } = parseArgs({ options: { users: { type: 'string', default: '2000' }, channels: { type: 'string', default: '5000' }, runs: { type: 'string', default: '7' } } });
const users = Number(values.users);
const channels = Number(values.channels);
const runs = Number(values.runs);

let gcMs = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMs += entry.duration;
}).observe({ entryTypes: ['gc'] });

interface Timing {
  wallMs: number;
  cpuMs: number;
  gcMs: number;
  bytes: number;
}

/** Wall, CPU and garbage collection in ms of one answer, and its bytes. */
async function timed(answer: () => number): Promise<Timing> {
  // The collections an answer causes are reported after it: let those of the one before be counted first.
  await new Promise((resolve) => setTimeout(resolve, 20));
  const gcBefore = gcMs;
  const cpu = process.cpuUsage();
  const start = performance.now();
  const bytes = answer();
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  await new Promise((resolve) => setTimeout(resolve, 20));
  return { wallMs, cpuMs: (used.user + used.system) / 1000, gcMs: gcMs - gcBefore, bytes };
}

/** The medians of `--runs` answers, each after `before` if given. */
async function row(label: string, answer: () => number, before?: () => Promise<unknown>): Promise<void> {
  const results: Timing[] = [];
  for (let run = 0; run < runs; run++) {
    await before?.();
    results.push(await timed(answer));
  }
  const m = (key: 'wallMs' | 'cpuMs' | 'gcMs') => median(results.map((result) => result[key])).toFixed(1);
  console.log(`${label.padEnd(64)} ${m('wallMs').padStart(7)} ms wall ${m('cpuMs').padStart(7)} ms CPU ${m('gcMs').padStart(6)} ms GC${results[0]!.bytes ? `  ${(results[0]!.bytes / 1e6).toFixed(1)} MB` : ''}`);
}

/** The medians of `--runs` answers that take more than one turn (wall and CPU across them; no GC split). */
async function asyncRow(label: string, answer: () => Promise<number>): Promise<void> {
  const walls: number[] = [];
  const cpus: number[] = [];
  for (let run = 0; run < runs; run++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const cpu = process.cpuUsage();
    const start = performance.now();
    await answer();
    walls.push(performance.now() - start);
    const used = process.cpuUsage(cpu);
    cpus.push((used.user + used.system) / 1000);
  }
  console.log(`${label.padEnd(64)} ${median(walls).toFixed(1).padStart(7)} ms wall ${median(cpus).toFixed(1).padStart(7)} ms CPU`);
}

/** The answer as the routes wrote it before: objects, one JSON text, then its UTF-8 bytes. */
function asObjects(key: string, views: unknown[]): number {
  return Buffer.from(JSON.stringify({ result: 'success', msg: '', [key]: views })).length;
}

/** The answer as the routes write it now: the list's parts into the answer's bytes as it is sent (PartsFields). */
const asParts = (key: string, list: ChannelViewList): number => new PartsFields([`"${key}":`, ...list.close()]).write().length;

function subscriptionObjects(state: RealmState, userId: number, withSubscribers: boolean, now: number): unknown[] {
  return [...state.subscribedBy.get(userId)!].map((id) =>
    subscriptionOf(channelView(state, state.channels.get(id)!, now), state.subscriptions.get(id)!.get(userId)!, withSubscribers ? subscriberIds(state, id) : null));
}

function subscriptionList(state: RealmState, userId: number, withSubscribers: boolean, now: number): ChannelViewList {
  const list = new ChannelViewList(state, now, withSubscribers);
  for (const id of state.subscribedBy.get(userId)!) list.subscription(state.channels.get(id)!, ownFields(state.subscriptions.get(id)!.get(userId)!));
  return list;
}

function channelList(state: RealmState, now: number): ChannelViewList {
  const list = new ChannelViewList(state, now, false);
  for (const channel of state.channels.values()) list.channel(channel);
  return list;
}

/** max_message_id as it was read before the lists' summary: each list of the member's read for its newest id. */
function listsWalked(state: RealmState, userId: number): number {
  const store = state.messages;
  let max = -1;
  const newestIn = (list: IdList | undefined) => {
    const last = list?.last();
    if (last !== undefined && last > max && canRead(state, userId, store.byId.get(last)!)) max = last;
  };
  for (const channelId of state.subscribedBy.get(userId) ?? []) newestIn(store.byChannel.get(channelId));
  for (const key of store.conversationsOf.get(userId) ?? []) newestIn(store.byConversation.get(key));
  return max;
}

/**
 * GET /messages of the newest `want` as it read a member's channels before the channel summary: each list
 * read into the index's cache, walked down from its newest for matches of its own.
 */
function listsWalkedFor(state: RealmState, userId: number, clauses: readonly Clause[], want: number): number[] {
  const ok = idMatcher(state, userId, clauses);
  const found: number[] = [];
  for (const channelId of state.subscribedBy.get(userId) ?? []) {
    const list = state.messages.byChannel.get(channelId);
    if (!list) continue;
    let taken = 0;
    for (const id of idsBeyond(list, LARGER_THAN_MAX_MESSAGE_ID, true)) {
      if (!ok(id)) continue;
      found.push(id);
      if (++taken >= want) break;
    }
  }
  return found.sort((a, b) => b - a).slice(0, want).reverse();
}

/**
 * The member's channels' traffic counted as before the counts were kept (channels/activity.ts): each list
 * read through the index's cache and counted back from its newest, for the week and for the window.
 */
function countedFromEveryList(state: RealmState, userId: number, now: number): number {
  const seconds = Math.floor(now / 1000);
  let total = 0;
  for (const channelId of state.subscribedBy.get(userId) ?? []) {
    const age = seconds - state.channels.get(channelId)!.dateCreated;
    for (const since of [seconds - 7 * 24 * 3600, seconds - Math.min(age, 28 * 24 * 3600)]) {
      total += state.messages.byChannel.get(channelId)?.newestRun((id) => (state.messages.byId.timestampOf(id) ?? -Infinity) >= since).count ?? 0;
    }
  }
  return total;
}

const dir = makeTempDir('channel-lists-');
try {
  const { runtime, store, realm, userIds } = await writeOrganization(dir, { users, name: 'large', channel: 'everyone' });
  const owner = { kind: 'user', userId: userIds[0]! } as const;
  const memberId = userIds[1]!;
  const options = { inviteOnly: false, isWebPublic: false, messageRetentionDays: null, isDefault: false, permissions: {} };
  for (let start = 0; start < channels; start += 250) {
    const names = Array.from({ length: Math.min(250, channels - start) }, (_, i) => ({ name: `channel ${start + i}`, description: `Channel **${start + i}**, for the work of team ${start + i}` }));
    // A third user per batch, so that the subscriber lists differ.
    await runtime.execute(realm.realmId, { type: 'channel.subscribe', caller: owner, channels: names, principals: [owner.userId, memberId, userIds[2 + ((start / 250) % (users - 2))]!], options, authorizationErrorsFatal: true });
  }
  const state = runtime.realmState(realm.realmId);
  const now = Date.now();
  console.log(`${users} users; the member is subscribed to ${state.subscribedBy.get(memberId)!.size} of ${state.channels.size} channels`);
  for (const withSubscribers of [false, true]) {
    const label = `GET /users/me/subscriptions${withSubscribers ? ' include_subscribers' : ''}`;
    await row(`${label}: baseline, objects`, () => asObjects('subscriptions', subscriptionObjects(state, memberId, withSubscribers, now)));
    await row(`${label}: now`, () => asParts('subscriptions', subscriptionList(state, memberId, withSubscribers, now)));
  }
  await row('GET /streams: baseline, objects', () => asObjects('streams', [...state.channels.values()].map((channel) => channelView(state, channel, now))));
  await row('GET /streams: now', () => asParts('streams', channelList(state, now)));
  // After a realm change the next list makes again the texts of the channels it touched (channels/touched.ts):
  // one channel's for its description, none for a user's name. The baseline drops every text after the change,
  // as a change touching all (realm.created) does, which is what every realm change did before.
  let edits = 0;
  const channelChange = () => runtime.execute(realm.realmId, { type: 'channel.update', caller: owner, id: state.channelIdByName.get('channel 0')!, description: `changed ${++edits}` });
  const nameChange = () => runtime.execute(realm.realmId, { type: 'user.update', caller: owner, userId: userIds[2]!, fullName: `Renamed ${++edits}` });
  const everyText = async () => {
    await nameChange();
    forgetChangedChannelTexts(state, { type: 'realm.created', realmId: realm.realmId, stringId: state.stringId, name: state.name, at: 0 });
  };
  for (const withSubscribers of [false, true]) {
    const label = `subscriptions${withSubscribers ? ', subscribers,' : ''} after a change`;
    const answer = () => asParts('subscriptions', subscriptionList(state, memberId, withSubscribers, now));
    await row(`${label}: every text again (old)`, answer, everyText);
    await row(`${label} to one channel`, answer, channelChange);
    await row(`${label} to no channel`, answer, nameChange);
  }
  // max_message_id (GET /users/me, registration) once every channel has a message, reopened from the data directory.
  for (let start = 0; start < channels; start += 500) {
    await Promise.all([...state.channels.values()].slice(start, start + 500).map((channel) =>
      runtime.execute(realm.realmId, { type: 'message.send', caller: owner, kind: 'channel', to: channel.id, topic: 'news', content: 'hello', client: 'bench' })));
  }
  await runtime.snapshot();
  await store.close();
  const reopened = new Store(dir, { waitForFlush: false });
  const again = new Runtime(reopened, { clock: { now: Date.now }, queues: { heartbeatMs: 50_000, idleTimeoutMs: 600_000, sweepMs: 1000 } });
  again.recover();
  const after = () => again.realmState(realm.realmId);
  const watch = watchTurns();
  const started = performance.now();
  await prepareNewestReadable(after(), memberId);
  const first = newestReadableId(after(), memberId);
  console.log(`${'max_message_id: now, the first after the reopen (read a slice a turn)'.padEnd(64)} ${(performance.now() - started).toFixed(1).padStart(7)} ms wall, longest turn ${watch().toFixed(1)} ms`);
  const same = (found: number) => {
    if (found !== first) throw new Error(`max_message_id ${found}, not ${first}`);
    return 0;
  };
  await row('max_message_id: baseline, every list read', () => same(listsWalked(after(), memberId)));
  await row('max_message_id: now', () => same(newestReadableId(after(), memberId)));

  // GET /messages of the newest 50 of `[]` (the web app's combined feed) over the same lists.
  const clauses = resolveNarrow(after(), memberId, []);
  const newest50 = { anchor: LARGER_THAN_MAX_MESSAGE_ID, numBefore: 50, numAfter: 0, includeAnchor: true };
  await prepareLists(after(), memberId, clauses);
  const expected = JSON.stringify((await fetchWindow(after(), memberId, clauses, newest50)).ids);
  const fetched = async (ids: number[] | Promise<number[]>) => {
    if (JSON.stringify(await ids) !== expected) throw new Error('the fetch and the baseline differ');
    return 0;
  };
  await asyncRow('GET /messages [] newest 50: baseline, every list read', () => fetched(listsWalkedFor(after(), memberId, clauses, 50)));
  await asyncRow('GET /messages [] newest 50: now', async () => {
    await prepareLists(after(), memberId, clauses);
    return fetched((async () => (await fetchWindow(after(), memberId, clauses, newest50)).ids)());
  });

  // A week on, each channel's traffic counts its messages; before, every list was read into the index's cache to count.
  const weekOn = Date.now() + 8 * 24 * 3600 * 1000;
  await row('GET /users/me/subscriptions a week on: baseline, every list counted', () => {
    countedFromEveryList(after(), memberId, weekOn);
    return asParts('subscriptions', subscriptionList(after(), memberId, false, weekOn));
  });
  await row('GET /users/me/subscriptions a week on: now', () => asParts('subscriptions', subscriptionList(after(), memberId, false, weekOn)));
  await reopened.close();
} finally {
  removeTempDir(dir);
}
