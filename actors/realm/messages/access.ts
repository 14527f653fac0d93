import type { Channel } from '../channels/state.ts';
import { Role, type RealmState } from '../state.ts';
import { hasSorted, pendingUnread, type StoredMessage } from './state.ts';
import type { IdList } from './id-list.ts';
import { allPending, listNewest, prepareNewest } from './newest-ids.ts';

/** Does the message sit in the user's history (received when sent, or later starred/reacted to)? */
export const holds = (message: StoredMessage, userId: number) => hasSorted(message.userIds, userId);

/**
 * May the user read the channel's history? Public channels: anyone but guests (guests when subscribed);
 * private channels: subscribers, when the history is public to subscribers. Messages a user received stay
 * readable either way (`holds`).
 */
export function readsChannelHistory(state: RealmState, channel: Channel, userId: number): boolean {
  const user = state.users.get(userId);
  if (!user) return false;
  const subscribed = state.subscriptions.get(channel.id)?.has(userId) ?? false;
  if (!channel.inviteOnly) return subscribed || user.role !== Role.guest;
  return subscribed && channel.historyPublicToSubscribers;
}

/** The one visibility rule of every read path: fetches, narrows, single messages, events. */
export function canRead(state: RealmState, userId: number, message: StoredMessage): boolean {
  if (message.recipient.kind === 'direct') return message.recipient.userIds.includes(userId);
  if (holds(message, userId)) return true;
  const channel = state.channels.get(message.recipient.channelId);
  return !!channel && readsChannelHistory(state, channel, userId);
}

/**
 * Who hears about changes to a message (edits, reactions, deletion): everyone holding it, and for a channel
 * message every subscriber who may read it.
 */
export function messageAudience(state: RealmState, message: StoredMessage): number[] {
  const out = new Set(message.userIds);
  if (message.recipient.kind === 'channel') {
    const channel = state.channels.get(message.recipient.channelId);
    for (const userId of state.subscriptions.get(message.recipient.channelId)?.keys() ?? []) {
      if (channel && readsChannelHistory(state, channel, userId)) out.add(userId);
    }
  }
  return [...out].sort((a, b) => a - b);
}

/** The user's flags for a message, in the original's order. (Hot: called per recipient; no closures.) */
export function flagsFor(state: RealmState, userId: number, message: StoredMessage): string[] {
  const id = message.id;
  const out: string[] = [];
  // A message just sent is unread for its recipients without their sets holding it yet (addUnread).
  const pending = pendingUnread(state.messages, id, userId);
  if (pending !== undefined) {
    if (!pending) out.push('read');
  } else {
    const { unread, starred, collapsed } = state.messages.flags;
    if (!unread.get(userId)?.has(id)) out.push('read');
    if (starred.get(userId)?.has(id)) out.push('starred');
    if (collapsed.get(userId)?.has(id)) out.push('collapsed');
  }
  if (!holds(message, userId) || message.historicalUserIds.includes(userId)) {
    out.push('historical');
    return out;
  }
  const { mentions } = message;
  if (mentions.userIds.includes(userId)) out.push('mentioned');
  const topicWildcard = mentions.topicWildcardUserIds.includes(userId);
  if (mentions.streamWildcard) out.push('stream_wildcard_mentioned');
  if (topicWildcard) out.push('topic_wildcard_mentioned');
  // Deprecated at feature level 224, kept for older clients: either wildcard.
  if (mentions.streamWildcard || topicWildcard) out.push('wildcard_mentioned');
  if (message.alertedUserIds?.includes(userId)) out.push('has_alert_word');
  return out;
}

/**
 * The newest message the user can read in their own history (subscribed channels, their conversations), or -1:
 * registration's and GET /users/me's `max_message_id`.
 */
export function newestReadableId(realm: RealmState, userId: number): number {
  const store = realm.messages;
  const channels = listNewest(store.byChannel);
  const conversations = listNewest(store.byConversation);
  let max = -1;
  // Each list's newest id from its index's summary (newest-ids.ts): no list read unless it changed, and no
  // message read when the user reads the channel's whole history. No arrays built: GET /users/me asks this on every call.
  for (const channelId of realm.subscribedBy.get(userId) ?? []) {
    const newest = channels.of(channelId);
    if (newest === undefined || newest <= max) continue;
    const channel = realm.channels.get(channelId);
    if (channel && readsChannelHistory(realm, channel, userId)) max = newest;
    else max = readableFrom(realm, userId, newest, () => store.byChannel.get(channelId), max);
  }
  for (const key of store.conversationsOf.get(userId) ?? []) {
    const newest = conversations.of(key);
    if (newest !== undefined && newest > max) max = readableFrom(realm, userId, newest, () => store.byConversation.get(key), max);
  }
  return max;
}

/** `newest`, a list's newest id (above `max`), if the user can read it; else the newest it can read of the list. */
function readableFrom(realm: RealmState, userId: number, newest: number, list: () => IdList | undefined, max: number): number {
  const message = realm.messages.byId.get(newest);
  if (message && canRead(realm, userId, message)) return newest;
  return newestReadableIn(realm, userId, list(), max);
}

/** Resolves once newestReadableId reads no list of the user's (a slice a turn); null when they are few enough to read at once. */
export function prepareNewestReadable(realm: RealmState, userId: number): Promise<unknown> | null {
  return allPending(
    prepareNewest(realm.messages.byChannel, realm.subscribedBy.get(userId) ?? []),
    prepareNewest(realm.messages.byConversation, realm.messages.conversationsOf.get(userId) ?? []),
  );
}

/** The newest id of the list newer than `max` that the user can read, else `max`. */
function newestReadableIn(realm: RealmState, userId: number, list: IdList | undefined, max: number): number {
  if (!list) return max;
  // Most often the newest is readable: the last id, without a generator.
  const last = list.last();
  if (last === undefined || last <= max) return max;
  if (canRead(realm, userId, realm.messages.byId.get(last)!)) return last;
  for (const id of list.idsFrom(last, true)) {
    if (id <= max) break;
    if (canRead(realm, userId, realm.messages.byId.get(id)!)) return id;
  }
  return max;
}
