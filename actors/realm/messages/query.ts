import type { RealmState } from '../state.ts';
import { idMatcher, type Clause } from './narrow.ts';
import { lowerBound, topicKey } from './state.ts';

/** The original's stand-in for "newer than any message" (anchor `newest`). */
export const LARGER_THAN_MAX_MESSAGE_ID = 10_000_000_000_000_000;

export interface Window {
  anchor: number;
  numBefore: number;
  numAfter: number;
  includeAnchor: boolean;
}

export interface WindowResult {
  ids: number[];
  foundAnchor: boolean;
  foundOldest: boolean;
  foundNewest: boolean;
}

/** A copy of the ids, in ascending order. */
export const sorted = (set: Iterable<number> | undefined) => [...(set ?? [])].sort((a, b) => a - b);

/**
 * The sorted id lists that hold every message the narrow can match, chosen from its most selective
 * positive clause: one message, a topic, a channel, a conversation, a flag set; without one, the user's
 * own history (subscribed channels and direct conversations). Never a scan of the whole realm.
 */
export function candidateLists(state: RealmState, userId: number, clauses: readonly Clause[]): number[][] {
  const store = state.messages;
  const positive = <K extends Clause['kind']>(kind: K) =>
    clauses.find((clause): clause is Extract<Clause, { kind: K }> => clause.kind === kind && !clause.negated);
  const id = positive('id');
  if (id) return [store.byId.has(id.id) ? [id.id] : []];
  const channel = positive('channel');
  const topic = positive('topic');
  if (channel && topic) return [store.byTopic.get(topicKey(channel.channelId, topic.topic)) ?? []];
  if (channel) return [store.byChannel.get(channel.channelId) ?? []];
  const dm = positive('dm');
  if (dm) return [store.byConversation.get(dm.key) ?? []];
  const is = clauses.filter((clause): clause is Extract<Clause, { kind: 'is' }> => clause.kind === 'is' && !clause.negated);
  if (is.some((clause) => clause.what === 'starred')) return [sorted(store.flags.starred.get(userId))];
  if (is.some((clause) => clause.what === 'mentioned')) return [sorted(store.mentionedOf.get(userId))];
  if (is.some((clause) => clause.what === 'unread')) return [sorted(store.flags.unread.get(userId))];
  const conversations = [...(store.conversationsOf.get(userId) ?? [])];
  const including = positive('dm-including');
  if (including) return conversations.filter((key) => key.split(',').includes(String(including.userId))).map((key) => store.byConversation.get(key) ?? []);
  if (is.some((clause) => clause.what === 'dm')) return conversations.map((key) => store.byConversation.get(key) ?? []);
  if (positive('public-channels')) {
    return [...state.channels.values()].filter((c) => !c.inviteOnly).map((c) => store.byChannel.get(c.id) ?? []);
  }
  const channels = [...(state.subscribedBy.get(userId) ?? [])].map((channelId) => store.byChannel.get(channelId) ?? []);
  return [...channels, ...conversations.map((key) => store.byConversation.get(key) ?? [])];
}

/** The oldest unread message matching the narrow, or null. */
export function firstUnread(state: RealmState, userId: number, clauses: readonly Clause[]): number | null {
  return sorted(state.messages.flags.unread.get(userId)).find(idMatcher(state, userId, clauses)) ?? null;
}

/**
 * The matching messages around an anchor. Each list is walked from the anchor outwards for one more match
 * than asked, so `found_oldest`/`found_newest` tell whether anything lies beyond.
 */
export function fetchWindow(state: RealmState, userId: number, clauses: readonly Clause[], window: Window): WindowResult {
  const lists = candidateLists(state, userId, clauses);
  const ok = idMatcher(state, userId, clauses);
  const before = new Set<number>();
  const after = new Set<number>();
  let foundAnchor = false;
  for (const list of lists) {
    const start = lowerBound(list, window.anchor);
    let taken = 0;
    for (let i = start - 1; i >= 0 && taken <= window.numBefore; i--) if (ok(list[i]!)) before.add(list[i]!), taken++;
    const atAnchor = list[start] === window.anchor;
    if (atAnchor && window.includeAnchor && ok(window.anchor)) foundAnchor = true;
    taken = 0;
    for (let i = atAnchor ? start + 1 : start; i < list.length && taken <= window.numAfter; i++) if (ok(list[i]!)) after.add(list[i]!), taken++;
  }
  const older = [...before].sort((a, b) => b - a);
  const newer = [...after].sort((a, b) => a - b);
  const ids = [...older.slice(0, window.numBefore).reverse(), ...(foundAnchor ? [window.anchor] : []), ...newer.slice(0, window.numAfter)];
  return { ids, foundAnchor, foundOldest: older.length <= window.numBefore, foundNewest: newer.length <= window.numAfter };
}
