/**
 * The channel lists of a member subscribed to thousands of channels (GET /users/me/subscriptions, GET
 * /streams, and the same lists in a registration), without HTTP: the server's own Store and Runtime in this
 * process (as bench/lib/organization.ts opens them). For each list, the median of `--runs` answers written as
 * bytes, their CPU and the garbage collection they caused (perf_hooks):
 *
 * - the baseline: the views built as objects, the answer serialized whole and encoded, as the routes did
 *   before channels/view-json.ts;
 * - now: ChannelViewList's parts (each channel's settled fields kept as text until the realm changes) written
 *   into the answer's bytes (JsonBytes), as the routes and the registration do; once after a change to the
 *   realm, which serializes every channel's fields again.
 *
 *   npx tsx bench/channel-lists.ts [--users 2000] [--channels 5000] [--runs 7]
 */
import { parseArgs } from 'node:util';
import { PerformanceObserver } from 'node:perf_hooks';
import { writeOrganization } from './lib/organization.ts';
import { makeTempDir, removeTempDir } from './lib/proc.ts';
import { median } from './lib/stats.ts';
import { ChannelViewList } from '../actors/realm/channels/view-json.ts';
import { channelView, ownFields, subscriberIds, subscriptionOf } from '../actors/realm/channels/views.ts';
import { JsonBytes } from '../actors/wire/json-bytes.ts';
import type { RealmState } from '../actors/realm/state.ts';

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
  console.log(`${label.padEnd(64)} ${m('wallMs').padStart(7)} ms wall ${m('cpuMs').padStart(7)} ms CPU ${m('gcMs').padStart(6)} ms GC  ${(results[0]!.bytes / 1e6).toFixed(1)} MB`);
}

/** The answer as the routes wrote it before: objects, one JSON text, then its UTF-8 bytes. */
function asObjects(key: string, views: unknown[]): number {
  return Buffer.from(JSON.stringify({ result: 'success', msg: '', [key]: views })).length;
}

/** The answer as the routes write it now: the list's parts into the answer's bytes. */
const writer = new JsonBytes();
function asParts(key: string, list: ChannelViewList): number {
  writer.clear();
  writer.raw(`{"result":"success","msg":"","${key}":`);
  writer.rawParts(list.close());
  writer.char(0x7d);
  return writer.length;
}

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
  // A change to the realm (any user's, here a channel's description) makes every channel's text again.
  let description = 0;
  const change = () => runtime.execute(realm.realmId, { type: 'channel.update', caller: owner, id: state.channelIdByName.get('channel 0')!, description: `changed ${++description}` });
  await row('GET /users/me/subscriptions: now, just after a change', () => asParts('subscriptions', subscriptionList(state, memberId, false, now)), change);
  await store.close();
} finally {
  removeTempDir(dir);
}
