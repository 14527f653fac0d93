import { canRead, newestReadableId } from '../../realm/messages/access.ts';
import type { StoredMessage } from '../../realm/messages/state.ts';
import { listNewest, prepareNewest } from '../../realm/messages/newest-ids.ts';
import type { RealmState } from '../../realm/state.ts';
import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';

/** The original reports at most this many unread messages, the newest. */
const MAX_UNREAD_MESSAGES = 50_000;

/** fetch type `message`: the newest message the user can see in their own history, or -1. */
export const maxMessageIdState: Builder = ({ realm, user }) => ({ max_message_id: newestReadableId(realm, user.userId) }) satisfies WireRegisterKeys<'max_message_id'>;

/** fetch type `starred_messages` (an IdSet iterates in id order) */
export const starredMessagesState: Builder = ({ realm, user }) => ({
  starred_messages: [...(realm.messages.flags.starred.get(user.userId) ?? [])],
}) satisfies WireRegisterKeys<'starred_messages'>;

/**
 * fetch type `update_message_flags` (with `message`): `unread_msgs`, the user's unread messages by
 * conversation. Channel messages count only in subscribed channels, and not in muted ones.
 */
export const unreadMessagesState: Builder = ({ realm, user }, { fetchTypes }) => {
  if (fetchTypes !== null && !fetchTypes.includes('message')) return {};
  // Read from the newest down: a user may have a million unread messages, and only the newest count.
  const unread = realm.messages.flags.unread.get(user.userId);
  const kept: number[] = [];
  // One more than kept: whether older ones are left out, without counting the set (its older segments stay on disk).
  for (const id of unread?.idsFrom(Infinity, true) ?? []) {
    kept.push(id);
    if (kept.length > MAX_UNREAD_MESSAGES) break;
  }
  const missing = kept.length > MAX_UNREAD_MESSAGES;
  if (missing) kept.pop();
  kept.reverse();
  const streams = new Map<string, { stream_id: number; topic: string; unread_message_ids: number[] }>();
  const pms = new Map<number, number[]>();
  const huddles = new Map<string, number[]>();
  const mentions: number[] = [];
  let count = 0;
  for (const id of kept) {
    const message = realm.messages.byId.get(id);
    if (!message || !canRead(realm, user.userId, message)) continue;
    const { recipient } = message;
    if (recipient.kind === 'channel') {
      const subscription = realm.subscriptions.get(recipient.channelId)?.get(user.userId);
      if (!subscription) continue;
      const key = `${recipient.channelId}\u0000${recipient.topic}`;
      const entry = streams.get(key) ?? { stream_id: recipient.channelId, topic: recipient.topic, unread_message_ids: [] };
      entry.unread_message_ids.push(id);
      streams.set(key, entry);
      if (!subscription.isMuted) count++;
    } else {
      const others = recipient.userIds.filter((other) => other !== user.userId);
      if (others.length <= 1) push(pms, others[0] ?? user.userId, id);
      else push(huddles, recipient.userIds.join(','), id);
      count++;
    }
    if (mentionsUser(realm, message, user.userId)) mentions.push(id);
  }
  return {
    unread_msgs: {
      count,
      pms: [...pms].map(([other, list]) => ({ other_user_id: other, sender_id: other, unread_message_ids: list })),
      streams: [...streams.values()],
      huddles: [...huddles].map(([key, list]) => ({ user_ids_string: key, unread_message_ids: list })),
      mentions,
      old_unreads_missing: missing,
    },
  } satisfies WireRegisterKeys<'unread_msgs'>;
};

/**
 * The most direct conversations a registration's `recent_private_conversations` lists: "recent" is the
 * server's to say (the original's are those of the user's 1,000 newest direct messages).
 */
export const RECENT_CONVERSATIONS_LIMIT = 1000;

/** Resolves once recentConversationsState reads no conversation's id list; null: it may read them at once. */
export const prepareRecentConversations = (realm: RealmState, userId: number): Promise<void> | null =>
  prepareNewest(realm.messages.byConversation, realm.messages.conversationsOf.get(userId) ?? []);

/** fetch type `recent_private_conversations`: the user's newest direct conversations, newest first. */
export const recentConversationsState: Builder = ({ realm, user }) => {
  const newest = listNewest(realm.messages.byConversation);
  const found: { key: string; last: number }[] = [];
  for (const key of realm.messages.conversationsOf.get(user.userId) ?? []) {
    const last = newest.of(key);
    if (last !== undefined) found.push({ key, last });
  }
  found.sort((a, b) => b.last - a.last);
  const recent = found.slice(0, RECENT_CONVERSATIONS_LIMIT).map(({ key, last }) => ({ max_message_id: last, user_ids: key.split(',').map(Number).filter((id) => id !== user.userId) }));
  return { recent_private_conversations: recent } satisfies WireRegisterKeys<'recent_private_conversations'>;
};

function mentionsUser(realm: RealmState, message: StoredMessage, userId: number): boolean {
  return realm.messages.mentionedOf.get(userId)?.has(message.id) ?? false;
}

function push<K>(map: Map<K, number[]>, key: K, id: number): void {
  const list = map.get(key);
  if (list) list.push(id);
  else map.set(key, [id]);
}
