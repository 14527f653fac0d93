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
 * The lists are changed in place, as one id at a time did.
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

/** Each change is marked on the index, so that its key stays in memory and the next snapshot writes it. */
function removeAll<K extends string | number>(map: LazyMap<K, number[]>, key: K, ids: ReadonlySet<number>): void {
  const list = map.get(key);
  if (!list) return;
  let kept = 0;
  for (const id of list) if (!ids.has(id)) list[kept++] = id;
  list.length = kept;
  for (const id of ids) map.mark(key, id);
  if (kept === 0) map.delete(key);
}

/** Merges `ids` into the ascending `list`, in place, keeping it ascending and without an id twice. */
function mergeInto<K extends string | number>(map: LazyMap<K, number[]>, key: K, ids: number[]): void {
  const list = listOf(map, key);
  ids.sort((a, b) => a - b);
  for (const id of ids) map.mark(key, id);
  if (list.length === 0 || list[list.length - 1]! < ids[0]!) {
    for (let i = 0; i < ids.length; i++) if (i === 0 || ids[i] !== ids[i - 1]) list.push(ids[i]!);
    return;
  }
  const merged: number[] = [];
  let i = 0;
  let j = 0;
  while (i < list.length || j < ids.length) {
    const next = j >= ids.length || (i < list.length && list[i]! <= ids[j]!) ? list[i++]! : ids[j++]!;
    if (merged.length === 0 || merged[merged.length - 1] !== next) merged.push(next);
  }
  for (let k = 0; k < merged.length; k++) list[k] = merged[k]!;
  list.length = merged.length;
}
