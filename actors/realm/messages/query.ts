import type { RealmState } from '../state.ts';
import { IdList } from './id-list.ts';
import type { LazyMap } from './lazy-map.ts';
import { IdSet } from './id-set.ts';
import { idMatcher, type Clause } from './narrow.ts';
import { allPending, listNewest, prepareNewest } from './newest-ids.ts';
import { hasSorted, lowerBound, topicKey } from './state.ts';
import { inTurns, type Step } from './turns.ts';

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

/**
 * Where a narrow's matches may be: a sorted id list (a channel, a topic, a conversation: IdList, which reads
 * the segments a walk reaches; or an array of one message), a flag set (IdSet: in id order already), or a
 * plain Set (in no order). None is copied or sorted in one turn of the event loop (a user may have a million
 * unread messages): a walk reads lists and IdSets from the anchor (walkLists here, search.ts's walk), and
 * copies a plain Set into an IdSet first, a slice at a time.
 */
export type Candidates = readonly number[] | IdList | IdSet | ReadonlySet<number> | LazyIds;

/** A candidate list a walk reads in id order, from any id. */
type Ordered = readonly number[] | IdList | IdSet;
const isOrdered = (list: Candidates): list is Ordered => Array.isArray(list) || list instanceof IdList || list instanceof IdSet;

const EMPTY: readonly number[] = [];

/**
 * A list's ids read only when a walk reaches them: a direct conversation's, or a channel's for a member of
 * many. `newest` (the index's summary's, newest-ids.ts) bounds what they can add: a walk down from the
 * anchor that already holds enough newer matches reads no list whose newest message is older than all of them.
 */
export class LazyIds {
  private read: IdList | readonly number[] | undefined;
  constructor(readonly newest: number, private readonly load: () => IdList | readonly number[]) {}
  get ids(): IdList | readonly number[] {
    return (this.read ??= this.load());
  }
}

/** The list itself: a lazy list's ids are read here if they were not yet. */
export const resolved = (list: Candidates): Exclude<Candidates, LazyIds> => (list instanceof LazyIds ? list.ids : list);

/**
 * A user in more direct conversations (or channels) than this has their lists read for a narrow without
 * keeping them in memory, newest first by the index's summary. In 10,000 conversations, a fetch of the newest
 * 50 took 285-390 ms reading them into the cache (4,096 keys), 165-305 ms without; a member of 5,000 channels
 * with messages waited 433-831 ms for the newest 50 of `[]`, each list read letting another leave the cache.
 */
const CACHED_LISTS = 512;

/** Where a narrow's matches may be: lists, and the keys of the user's direct conversations and channels to walk too. */
interface Sources {
  lists: Candidates[];
  conversations: readonly string[];
  channels: readonly number[];
}

/**
 * The candidate lists that hold every message the narrow can match, chosen from its most selective
 * positive clause: one message, a topic, a channel, a conversation, a flag set; without one, the user's
 * own history (subscribed channels and direct conversations). Never a scan of the whole realm, and never a
 * copy of a flag set: a user may have a million unread or starred messages.
 */
function candidateSources(state: RealmState, userId: number, clauses: readonly Clause[]): Sources {
  const store = state.messages;
  const only = (list: Candidates): Sources => ({ lists: [list], conversations: [], channels: [] });
  const positive = <K extends Clause['kind']>(kind: K) =>
    clauses.find((clause): clause is Extract<Clause, { kind: K }> => clause.kind === kind && !clause.negated);
  const id = positive('id');
  if (id) return only(store.byId.has(id.id) ? [id.id] : []);
  const channel = positive('channel');
  const topic = positive('topic');
  if (channel && topic) return only(store.byTopic.get(topicKey(channel.channelId, topic.topic)) ?? EMPTY);
  if (channel) return only(store.byChannel.get(channel.channelId) ?? EMPTY);
  const dm = positive('dm');
  if (dm) return only(store.byConversation.get(dm.key) ?? EMPTY);
  const is = clauses.filter((clause): clause is Extract<Clause, { kind: 'is' }> => clause.kind === 'is' && !clause.negated);
  if (is.some((clause) => clause.what === 'starred')) return only(store.flags.starred.get(userId) ?? EMPTY);
  if (is.some((clause) => clause.what === 'mentioned')) return only(store.mentionedOf.get(userId) ?? EMPTY);
  if (is.some((clause) => clause.what === 'unread')) return only(store.flags.unread.get(userId) ?? EMPTY);
  const conversations = [...(store.conversationsOf.get(userId) ?? [])];
  const including = positive('dm-including');
  if (including) return { lists: [], conversations: conversations.filter((key) => key.split(',').includes(String(including.userId))), channels: [] };
  if (is.some((clause) => clause.what === 'dm')) return { lists: [], conversations, channels: [] };
  if (positive('public-channels')) return { lists: [], conversations: [], channels: [...state.channels.values()].filter((c) => !c.inviteOnly).map((c) => c.id) };
  return { lists: [], conversations, channels: [...(state.subscribedBy.get(userId) ?? [])] };
}

/**
 * candidateSources' lists, then its channels' and conversations': a conversation's list is read when a walk
 * reaches it (LazyIds), and so is each channel's when there are more than CACHED_LISTS.
 */
export function candidateLists(state: RealmState, userId: number, clauses: readonly Clause[]): Candidates[] {
  const { lists, conversations, channels } = candidateSources(state, userId, clauses);
  const { byChannel, byConversation } = state.messages;
  const all = [...lists];
  if (channels.length > CACHED_LISTS) all.push(...lazyLists(byChannel, channels, true));
  else for (const channelId of channels) all.push(byChannel.get(channelId) ?? EMPTY);
  if (conversations.length) all.push(...lazyLists(byConversation, conversations, (state.messages.conversationsOf.get(userId)?.size ?? 0) > CACHED_LISTS));
  return all;
}

/**
 * The lists of `keys` with a newest id, each read when a walk reaches it; with `many`, without entering the
 * index's cache: keeping them all would turn it over at each fetch (a walk holds lists that leave the cache
 * meanwhile as it reads these).
 */
function lazyLists<K extends string | number>(index: LazyMap<K, IdList>, keys: readonly K[], many: boolean): LazyIds[] {
  const summary = listNewest(index);
  const out: LazyIds[] = [];
  for (const key of keys) {
    const newest = summary.of(key);
    if (newest !== undefined) out.push(new LazyIds(newest, () => (many ? index.readOnce(key) : index.get(key)) ?? EMPTY));
  }
  return out;
}

/**
 * Resolves once the newest id of each conversation and channel the narrow walks is kept (candidateLists reads
 * them at each fetch), read a slice a turn; null when there are few enough to read at once.
 */
export function prepareLists(state: RealmState, userId: number, clauses: readonly Clause[]): Promise<unknown> | null {
  const { conversations, channels } = candidateSources(state, userId, clauses);
  return allPending(prepareNewest(state.messages.byConversation, conversations), prepareNewest(state.messages.byChannel, channels));
}

/** Is `id` among the candidates? */
export function contains(list: Candidates, id: number): boolean {
  if (list instanceof LazyIds) return id <= list.newest && contains(list.ids, id);
  return Array.isArray(list) ? hasSorted(list as readonly number[], id) : (list as ReadonlySet<number> | IdSet | IdList).has(id);
}

/**
 * The ids of an array or IdSet beyond `last` (an id, which need not be among them), the nearest first:
 * below it when `down`, else above it. Found again by id, not position, so that a walk resumed after the
 * history changed (messages sent, moved, deleted, flags set) starts where it stopped.
 */
export function* idsBeyond(list: Ordered, last: number, down: boolean): Generator<number, void, undefined> {
  if (list instanceof IdSet || list instanceof IdList) {
    yield* list.idsFrom(last, down);
    return;
  }
  let i = lowerBound(list, last);
  if (down) i--;
  else if (list[i] === last) i++;
  for (const step = down ? -1 : 1; i >= 0 && i < list.length; i += step) yield list[i]!;
}

/**
 * The ids one slice of a walk may examine before it yields the event loop: about 3 ms at the 60-70 ns per
 * id measured with the history in memory (bench/README.md, search). CHAT_NARROW_SLICE_IDS sets it.
 */
export const DEFAULT_NARROW_SLICE_IDS = 50_000;
/** The time one slice may take, checked every TIME_CHECK ids: a message read from disk costs more. */
const SLICE_MS = 4;
const TIME_CHECK = 1024;

/** A direction of one candidate list, walked from the anchor outwards; `last`: the id examined last. */
interface Cursor {
  list: Ordered | LazyIds;
  /** how far up the list may reach: a lazy list's newest id, else without bound */
  reach: number;
  down: boolean;
  last: number;
  found: number[];
  /** past what its matches could add (the nearest ones found), or at the end of its list */
  done: boolean;
}

interface Walked {
  /** matches below the anchor, newest first, and above it, oldest first (per list, merged by the caller) */
  before: number[];
  after: number[];
}

/** A plain Set being put in id order, a slice at a time, into an IdSet the walk then reads. */
interface Ordering {
  from: Iterator<number>;
  into: IdSet;
}

/** Adds `key` to `keys` (ascending, distinct), which keeps only the `limit` largest. */
function keepLargest(keys: number[], key: number, limit: number): void {
  if (keys.length >= limit && key <= keys[0]!) return;
  const at = lowerBound(keys, key);
  if (keys[at] === key) return;
  keys.splice(at, 0, key);
  if (keys.length > limit) keys.shift();
}

/** A match's nearness to the anchor, larger the nearer: its id below the anchor, minus its id above. */
const nearness = (id: number, down: boolean) => (down ? id : -id);

/**
 * Walks `lists` from `anchor` outwards for up to `wantBefore` matches below it and `wantAfter` above, in
 * slices of at most `sliceIds` ids (and SLICE_MS). Between slices messages may be sent, moved or deleted:
 * each slice finds its place again by the last id examined, never by a position in the list. A plain
 * Set among the lists is first copied into an IdSet (which keeps ids in order) within the same budget; its
 * iterator sees the ids added and removed meanwhile, and the caller checks the matches again at the end.
 * With many lists, a list is walked only as far as its matches could be among the nearest ones the lists
 * walked before found: a user's thousand conversations across the history, each walked for its own 51
 * matches around an anchor in the middle, held the event loop 2-4.7 s checking them. Lazy lists (LazyIds:
 * conversations, a member's many channels) are walked last, newest first: one with nothing above the anchor
 * is not walked up, and once `wantBefore` matches below it are found, one whose newest message is older than
 * all of them is not read at all.
 */
function walkLists(lists: readonly Candidates[], ok: (id: number) => boolean, anchor: number, wantBefore: number, wantAfter: number, sliceIds: number): Step<Walked> {
  const cursors: Cursor[] = [];
  const orderings: Ordering[] = [];
  for (const candidates of lists) {
    let list: Ordered | LazyIds;
    if (candidates instanceof LazyIds || isOrdered(candidates)) list = candidates;
    else {
      list = new IdSet();
      orderings.push({ from: (candidates as ReadonlySet<number>).values(), into: list });
    }
    const reach = list instanceof LazyIds ? list.newest : Infinity;
    if (wantBefore > 0) cursors.push({ list, reach, down: true, last: anchor, found: [], done: false });
    if (wantAfter > 0 && reach > anchor) cursors.push({ list, reach, down: false, last: anchor, found: [], done: false });
  }
  cursors.sort((a, b) => (a.reach === b.reach ? 0 : a.reach < b.reach ? 1 : -1));
  // The nearness of the nearest matches on each side among the cursors walked whole (before `next`).
  const nearest = { below: [] as number[], above: [] as number[] };
  let counted = 0;
  /** The nearness a match of a cursor going this way must pass to be among the nearest: -Infinity until enough. */
  const farthestUseful = (down: boolean) => {
    for (; counted < next; counted++) {
      const walked = cursors[counted]!;
      for (const id of walked.found) keepLargest(walked.down ? nearest.below : nearest.above, nearness(id, walked.down), walked.down ? wantBefore : wantAfter);
    }
    const kept = down ? nearest.below : nearest.above;
    return kept.length >= (down ? wantBefore : wantAfter) ? kept[0]! : -Infinity;
  };
  let next = 0;
  return () => {
    const began = performance.now();
    let examined = 0;
    const spent = () => ++examined >= sliceIds || ((examined & (TIME_CHECK - 1)) === 0 && performance.now() - began > SLICE_MS);
    while (orderings.length) {
      const { from, into } = orderings[0]!;
      for (let item = from.next(); !item.done; item = from.next()) {
        into.add(item.value);
        if (spent()) return undefined;
      }
      orderings.shift();
    }
    for (; next < cursors.length; next++) {
      const cursor = cursors[next]!;
      const useful = farthestUseful(cursor.down);
      if (cursor.list instanceof LazyIds) {
        if (cursor.down && cursor.list.newest < useful) continue;
        cursor.list = cursor.list.ids;
        // A list read from the data directory costs as much as hundreds of ids examined.
        if (performance.now() - began > SLICE_MS) return undefined;
      }
      const { list, found } = cursor;
      const want = cursor.down ? wantBefore : wantAfter;
      if (cursor.done || found.length >= want) continue;
      // A topic, a channel (the hot path), from the anchor: only the segments reached are read, their ids by index.
      // A segment as stored gives the ids the walk still needs (IdList.near), and more from the last one
      // examined, twice as many each time, if the narrow passes over some.
      if (list instanceof IdList) {
        const step = cursor.down ? -1 : 1;
        let count = want - found.length;
        for (let at = list.segmentFrom(cursor.last, cursor.down); at >= 0 && at < list.segmentCount; ) {
          const [ids, start, more] = list.near(at, cursor.last, cursor.down, count);
          for (let i = start; i >= 0 && i < ids.length && found.length < want; i += step) {
            const id = ids[i]!;
            if (nearness(id, cursor.down) < useful) {
              cursor.done = true;
              break;
            }
            cursor.last = id;
            if (ok(id)) found.push(id);
            if (spent()) return undefined;
          }
          if (cursor.done || found.length >= want) break;
          if (more) count *= 2;
          else at += step;
        }
        continue;
      }
      if (list instanceof IdSet) {
        for (const id of list.idsFrom(cursor.last, cursor.down)) {
          if (nearness(id, cursor.down) < useful) break;
          if (ok(id)) found.push(id);
          if (found.length >= want) break;
          if (spent()) {
            cursor.last = id;
            return undefined;
          }
        }
        continue;
      }
      // An array (one message): by index.
      let i = lowerBound(list, cursor.last);
      if (cursor.down) i--;
      else if (list[i] === cursor.last) i++;
      const step = cursor.down ? -1 : 1;
      for (; i >= 0 && i < list.length && found.length < want; i += step) {
        const id = list[i]!;
        if (nearness(id, cursor.down) < useful) break;
        if (ok(id)) found.push(id);
        if (++examined >= sliceIds || ((examined & (TIME_CHECK - 1)) === 0 && performance.now() - began > SLICE_MS)) {
          cursor.last = id;
          return undefined;
        }
      }
    }
    const before: number[] = [];
    const after: number[] = [];
    for (const cursor of cursors) (cursor.down ? before : after).push(...cursor.found);
    return { before, after };
  };
}

/** How many more times a walk of several turns is made again when changes meanwhile took matches it needed. */
const WALKS_AGAIN = 2;

/**
 * Runs a walk: at once when its first slice finishes it (a topic, a channel: the hot path, without a promise),
 * else a slice per turn of the event loop (turns.ts), each user's walks one after another. With the state
 * changed meanwhile, the matches are checked again at the end, nearest first and only as many as an answer
 * takes (each check may read a message's metadata from disk). A walk stops at the matches it needs: if
 * some no longer match, what lies past them was not walked, so a new walk (`walk` makes each) is made,
 * at most WALKS_AGAIN times; otherwise the answer would say there is nothing older (or newer) when there is.
 */
function runWalk<T>(
  owner: string, walk: () => Step<Walked>, ok: (id: number) => boolean, answer: (walked: Walked) => T, queuedPerUser: number, wantBefore: number, wantAfter: number,
): T | Promise<T> {
  const firstWalk = walk();
  const first = firstWalk();
  if (first !== undefined) return answer(first);
  const recheck = (ids: number[], down: boolean, want: number) => {
    const kept: number[] = [];
    for (const id of [...new Set(ids)].sort((a, b) => (down ? b - a : a - b))) {
      if (kept.length >= want) break;
      if (ok(id)) kept.push(id);
    }
    return kept;
  };
  const short = (kept: number[], found: number[], want: number) => kept.length < want && new Set(found).size >= want;
  const settle = async (step: Step<Walked>, again: number): Promise<T> => {
    const walked = await inTurns(owner, step, queuedPerUser);
    const before = recheck(walked.before, true, wantBefore);
    const after = recheck(walked.after, false, wantAfter);
    if (again > 0 && (short(before, walked.before, wantBefore) || short(after, walked.after, wantAfter))) return settle(walk(), again - 1);
    return answer({ before, after });
  };
  return settle(firstWalk, WALKS_AGAIN);
}

/** How many ids the list holds; at most, for an id list (a segment never read counts as full). */
function sizeOf(list: Exclude<Candidates, LazyIds>): number {
  return Array.isArray(list) ? list.length : list instanceof IdList || list instanceof IdSet ? list.sizeBound : (list as ReadonlySet<number>).size;
}

/**
 * What a lazy list not yet read counts for when a walk is chosen by the ids it would examine: reading a
 * list from the data directory (14-19 us) costs as much as examining a few hundred ids (60-70 ns each).
 */
const LIST_READ_IDS = 256;

/** Whether walking the lists costs at least as much as examining `count` ids; no lazy list is read to say. */
function costAtLeast(lists: readonly Candidates[], count: number): boolean {
  let total = 0;
  for (const list of lists) if ((total += list instanceof LazyIds ? LIST_READ_IDS : sizeOf(list)) >= count) return true;
  return false;
}

/**
 * The oldest unread message matching the narrow, or null; see fetchWindow for `sliceIds`. Whichever costs
 * less to walk is walked from its oldest: the user's unread messages, for the first that matches, or the
 * narrow's candidate lists, for the first unread match of each (costAtLeast).
 */
export function firstUnread(
  state: RealmState, userId: number, clauses: readonly Clause[], sliceIds = Infinity, queuedPerUser = Infinity,
): number | null | Promise<number | null> {
  const unread = state.messages.flags.unread.get(userId);
  if (!unread || unread.isEmpty) return null;
  const ok = idMatcher(state, userId, clauses);
  const owner = `${state.realmId}:${userId}`;
  const lists = candidateLists(state, userId, clauses);
  if (costAtLeast(lists, unread.sizeBound)) {
    return runWalk(owner, () => walkLists([unread], ok, 0, 0, 1, sliceIds), ok, ({ after }) => after[0] ?? null, queuedPerUser, 0, 1);
  }
  const unreadMatch = (id: number) => unread.has(id) && ok(id);
  const oldest = ({ after }: Walked) => after.reduce<number | null>((first, id) => (first === null || id < first ? id : first), null);
  let walks = 0;
  const walk = () => walkLists(walks++ > 0 ? candidateLists(state, userId, clauses) : lists, unreadMatch, 0, 0, 1, sliceIds);
  return runWalk(owner, walk, unreadMatch, oldest, queuedPerUser, 0, 1);
}

/**
 * The matching messages around an anchor. Each list is walked from the anchor outwards for one more match
 * than asked, so `found_oldest`/`found_newest` tell whether anything lies beyond. A narrow the candidate
 * lists answer poorly (a sender with no messages in a long history) examines up to `sliceIds` ids per
 * turn of the event loop; the answer is then a promise, refused (turns.ts's LineFull) when the user already
 * has `queuedPerUser` such walks in line.
 */
export function fetchWindow(
  state: RealmState, userId: number, clauses: readonly Clause[], window: Window, sliceIds = Infinity, queuedPerUser = Infinity,
): WindowResult | Promise<WindowResult> {
  const ok = idMatcher(state, userId, clauses);
  const lists = candidateLists(state, userId, clauses);
  // A walk made again reads the lists again: a lazy list read from disk is a copy of then.
  let walks = 0;
  const walk = () => walkLists(walks++ > 0 ? candidateLists(state, userId, clauses) : lists, ok, window.anchor, window.numBefore + 1, window.numAfter + 1, sliceIds);
  return runWalk(`${state.realmId}:${userId}`, walk, ok, ({ before, after }) => {
    const foundAnchor = window.includeAnchor && lists.some((list) => contains(list, window.anchor)) && ok(window.anchor);
    const older = [...new Set(before)].sort((a, b) => b - a);
    const newer = [...new Set(after)].sort((a, b) => a - b);
    const ids = [...older.slice(0, window.numBefore).reverse(), ...(foundAnchor ? [window.anchor] : []), ...newer.slice(0, window.numAfter)];
    return { ids, foundAnchor, foundOldest: older.length <= window.numBefore, foundNewest: newer.length <= window.numAfter };
  }, queuedPerUser, window.numBefore + 1, window.numAfter + 1);
}
