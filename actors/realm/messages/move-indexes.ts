import type { IdList } from './id-list.ts';
import type { LazyMap } from './lazy-map.ts';
import { listOf, setOf, topicKey, type MessageStore } from './state.ts';

/** Where a moved channel message was. */
export interface MovedFrom {
  id: number;
  channelId: number;
  topic: string;
}

/**
 * Moves channel messages in the channel and topic indexes at once: each list loses all of its moved ids in
 * one pass and the destination merges them in one pass. Removing and inserting one id at a time shifted the
 * rest of the list each time: a move of a topic of n messages cost n times the topic's (and channel's) length.
 * The lists are changed in place, by segment: only the segments the moved ids fall in are read.
 */
export function reindexMoved(store: MessageStore, moved: readonly MovedFrom[], toChannelId: number, toTopic: string): void {
  const toKey = topicKey(toChannelId, toTopic);
  const leavingTopics = new Map<string, Set<number>>();
  const leavingChannels = new Map<number, Set<number>>();
  const intoTopic: number[] = [];
  const intoChannel: number[] = [];
  for (const { id, channelId, topic } of moved) {
    // A topic renamed only in case keeps its key: its list keeps the id.
    const key = topicKey(channelId, topic);
    if (key !== toKey) {
      setOf(leavingTopics, key).add(id);
      intoTopic.push(id);
    }
    if (channelId !== toChannelId) {
      setOf(leavingChannels, channelId).add(id);
      intoChannel.push(id);
    }
  }
  for (const [key, ids] of leavingTopics) removeAll(store.byTopic, key, ids);
  for (const [channelId, ids] of leavingChannels) removeAll(store.byChannel, channelId, ids);
  if (intoTopic.length) mergeInto(store.byTopic, toKey, intoTopic);
  if (intoChannel.length) mergeInto(store.byChannel, toChannelId, intoChannel);
}

/** Each change is told by the list itself (IdList.onChange), so that the next snapshot writes its segments. */
function removeAll<K extends string | number>(map: LazyMap<K, IdList>, key: K, ids: ReadonlySet<number>): void {
  const list = map.get(key);
  if (!list) return;
  list.deleteAll(ids);
  if (list.isEmpty) map.delete(key);
}

/** Merges `ids` into the list, keeping it ascending and without an id twice: only the segments they fall in are read. */
function mergeInto<K extends string | number>(map: LazyMap<K, IdList>, key: K, ids: number[]): void {
  listOf(map, key).mergeSorted(ids.sort((a, b) => a - b));
}
