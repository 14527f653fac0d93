import { setImmediate as nextTurn } from 'node:timers/promises';
import type { IdList } from './id-list.ts';
import type { LazyMap } from './lazy-map.ts';
import { topicKey } from './state.ts';

/** Topics read per turn of the event loop while a channel's summary is first made (about 10-25 us each). */
const FILL_SLICE = 2000;

/**
 * The newest message id of each topic of a channel (GET /users/me/{stream_id}/topics), kept once the
 * channel's topics were first asked for. Each later ask reads again only the topics whose id lists changed
 * since: those the index holds as changed since the last snapshot, and those a snapshot took as saved since
 * the channel's last ask. Reading every topic's id list at each ask held the event loop 2-3.6 s for a
 * channel of 100,000 topics (most lists not in memory); a send costs nothing more. A topic with no message
 * left (deleted, moved away) leaves the summary when it is read again.
 */
export class TopicNewest {
  /** channel -> topic key -> newest id, for the channels asked for since the index was loaded */
  private readonly channels = new Map<number, Map<string, number>>();
  /** channel -> keys a snapshot took since the channel's last ask */
  private readonly taken = new Map<number, Set<string>>();
  /** channels whose summary is being made a slice at a time (`prepare`) */
  private readonly filling = new Map<number, Promise<void>>();

  constructor(private readonly byTopic: LazyMap<string, IdList>) {
    byTopic.onTaken((keys) => {
      for (const key of keys) {
        const channelId = channelOfKey(key);
        if (!this.channels.has(channelId)) continue;
        let mine = this.taken.get(channelId);
        if (!mine) this.taken.set(channelId, (mine = new Set()));
        mine.add(key);
      }
    });
  }

  /**
   * Makes the channel's summary if it is not made yet, FILL_SLICE topics a turn, so that a channel of many
   * topics does not hold the event loop; resolves at once when it is made. What changes meanwhile is read
   * again by the next `of`, as any change is.
   */
  prepare(channelId: number): Promise<void> {
    if (this.channels.has(channelId) && !this.filling.has(channelId)) return Promise.resolve();
    let pending = this.filling.get(channelId);
    if (!pending) {
      pending = this.fillInSlices(channelId).finally(() => this.filling.delete(channelId));
      this.filling.set(channelId, pending);
    }
    return pending;
  }

  /** The channel's topics, each key with its newest message id (made at once if `prepare` has not). */
  of(channelId: number): ReadonlyMap<string, number> {
    let newest = this.channels.get(channelId);
    let keys: string[];
    if (!newest || this.filling.has(channelId)) {
      // A fill under way goes on into a map no longer the channel's: this one is made whole now.
      this.channels.set(channelId, (newest = new Map()));
      keys = this.keysOf(channelId);
    } else {
      const prefix = topicKey(channelId, '');
      keys = [...this.byTopic.changedKeys()].filter((key) => key.startsWith(prefix));
      const taken = this.taken.get(channelId);
      if (taken) keys.push(...taken);
    }
    this.taken.delete(channelId);
    for (const key of keys) this.read(newest, key);
    return newest;
  }

  private async fillInSlices(channelId: number): Promise<void> {
    const newest = new Map<string, number>();
    this.channels.set(channelId, newest);
    const keys = this.keysOf(channelId);
    for (let start = 0; start < keys.length; start += FILL_SLICE) {
      if (start > 0) await nextTurn();
      for (const key of keys.slice(start, start + FILL_SLICE)) this.read(newest, key);
    }
  }

  /** The channel's topic keys, copied: reading a list may let others leave memory, which moves them among the keys. */
  private keysOf(channelId: number): string[] {
    const prefix = topicKey(channelId, '');
    return [...this.byTopic.keys()].filter((key) => key.startsWith(prefix));
  }

  private read(newest: Map<string, number>, key: string): void {
    const last = this.byTopic.readOnce(key)?.last();
    if (last === undefined) newest.delete(key);
    else newest.set(key, last);
  }
}

/**
 * How long lists are read in one turn of the event loop while their newest ids are first read: a
 * conversation of few messages reads in 14-19 us, a channel's list 20-80 us (2026-11-29, the machine loaded).
 */
const LIST_SLICE_MS = 8;

/**
 * The newest message id of the lists of an index (direct conversations, channels), kept once read: a
 * registration's `recent_private_conversations`, GET /messages over many conversations, `max_message_id`. A
 * list is read again when it changed since the last snapshot, or since its value was kept a snapshot took
 * its changes. Reading every list of a user's 10,000 conversations at each registration took 280-490 ms;
 * reading the channel lists of a member of 5,000 channels, at each GET /users/me, 106-374 ms, as the
 * index's cache keeps 4,096 keys and each reading let another go (2026-11-29).
 */
export class ListNewest<K extends string | number> {
  private readonly newest = new Map<K, number | undefined>();

  constructor(private readonly index: LazyMap<K, IdList>) {
    index.onTaken((keys) => {
      for (const key of keys) this.newest.delete(key);
    });
  }

  of(key: K): number | undefined {
    if (!this.newest.has(key) || this.index.hasChanged(key)) this.newest.set(key, this.index.readOnce(key)?.last());
    return this.newest.get(key);
  }

  /**
   * Reads the newest id of each of `keys` not yet kept, for LIST_SLICE_MS a turn: the first fetch or
   * registration after a boot of a user in 10,000 conversations held the event loop 135-220 ms reading them
   * all at once. What changes meanwhile is read again by `of`, as any change is.
   */
  async prepare(keys: readonly K[]): Promise<void> {
    let began = performance.now();
    for (const key of keys) {
      if (this.newest.has(key)) continue;
      if (performance.now() - began > LIST_SLICE_MS) {
        await nextTurn();
        began = performance.now();
      }
      this.of(key);
    }
  }
}

const channelOfKey = (key: string) => Number(key.slice(0, key.indexOf('\u0000')));

const summaries = new WeakMap<LazyMap<string, IdList>, TopicNewest>();

/** index -> its summary (a ListNewest of the index's key type) */
const listSummaries = new WeakMap<object, unknown>();

/** Past this many lists, their newest ids are read a slice a turn before a request asks for them. */
const PREPARED_LISTS = 512;

/**
 * Resolves once the index's summary holds each of `keys` (ListNewest.prepare); null when they are few enough
 * to read at once when asked for.
 */
export function prepareNewest<K extends string | number>(index: LazyMap<K, IdList>, keys: ReadonlySet<K> | readonly K[]): Promise<void> | null {
  if (('size' in keys ? keys.size : keys.length) <= PREPARED_LISTS) return null;
  return listNewest(index).prepare([...keys]);
}

/** The preparations still pending, together; null when none is (the caller answers in this turn). */
export function allPending(...pending: (Promise<unknown> | null)[]): Promise<unknown> | null {
  const waiting = pending.filter((ready) => ready !== null);
  return waiting.length ? Promise.all(waiting) : null;
}

/** The summary of a conversation or channel index (a realm's `messages.byConversation`, `.byChannel`), made when first asked for. */
export function listNewest<K extends string | number>(index: LazyMap<K, IdList>): ListNewest<K> {
  let summary = listSummaries.get(index) as ListNewest<K> | undefined;
  if (!summary) listSummaries.set(index, (summary = new ListNewest(index)));
  return summary;
}

/** The summary of a topic index (a realm's `messages.byTopic`), made when first asked for. */
export function topicNewest(byTopic: LazyMap<string, IdList>): TopicNewest {
  let summary = summaries.get(byTopic);
  if (!summary) summaries.set(byTopic, (summary = new TopicNewest(byTopic)));
  return summary;
}
