import { channelKey } from './realm/channels/state.ts';
import { SYSTEM_GROUPS } from './realm/groups/state.ts';
import type { IdList } from './realm/messages/id-list.ts';
import { conversationKey, topicKey, type StoredMessage } from './realm/messages/state.ts';
import type { RealmState } from './realm/state.ts';

/**
 * Checks that a realm's indexes agree with its records: what a snapshot restore or a replay must keep
 * true. Returns the problems found, empty when the realm is sound.
 */
export function verifyRealm(state: RealmState): string[] {
  const problems: string[] = [];
  const where = `realm ${state.realmId}`;
  for (const user of state.users.values()) {
    if (state.userIdByEmail.get(user.email.toLowerCase()) !== user.userId) problems.push(`${where}: email index misses user ${user.userId}`);
    if (user.userId >= state.nextUserId) problems.push(`${where}: user ${user.userId} is not below nextUserId`);
  }
  if (state.userIdByEmail.size !== state.users.size) problems.push(`${where}: email index has ${state.userIdByEmail.size} entries for ${state.users.size} users`);
  for (const { name } of SYSTEM_GROUPS) if (!state.systemGroupIds.has(name)) problems.push(`${where}: system group ${name} missing`);
  for (const group of state.groups.values()) {
    for (const id of group.subgroups) if (!state.groups.has(id)) problems.push(`${where}: group ${group.id} names missing subgroup ${id}`);
    for (const id of group.members) if (!state.users.has(id)) problems.push(`${where}: group ${group.id} names missing user ${id}`);
  }
  for (const channel of state.channels.values()) {
    if (state.channelIdByName.get(channelKey(channel.name)) !== channel.id) problems.push(`${where}: name index misses channel ${channel.id}`);
  }
  for (const [channelId, subscribers] of state.subscriptions) {
    if (!state.channels.has(channelId)) problems.push(`${where}: subscriptions of missing channel ${channelId}`);
    for (const userId of subscribers.keys()) {
      if (!state.subscribedBy.get(userId)?.has(channelId)) problems.push(`${where}: user ${userId} in channel ${channelId} but not indexed`);
    }
  }
  for (const [userId, channels] of state.subscribedBy) {
    for (const channelId of channels) {
      if (!state.subscriptions.get(channelId)?.has(userId)) problems.push(`${where}: index says user ${userId} is in channel ${channelId}`);
    }
  }
  verifyMessages(state, where, problems);
  return problems;
}

/** At most this many problems are listed per message index: a broken index would otherwise list every message. */
const PROBLEMS_PER_INDEX = 10;

/** Every message sits in the index lists of its place, sorted, and nothing else does (what a chunked load rebuilds). */
function verifyMessages(state: RealmState, where: string, problems: string[]): void {
  const store = state.messages;
  let channelMessages = 0;
  let lastId = 0;
  for (const message of store.byId.values()) {
    if (message.recipient.kind === 'channel') channelMessages++;
    lastId = Math.max(lastId, message.id);
  }
  // A body is in memory until a snapshot stored it, then in the data directory (bodies.ts).
  let bodiesMissing = 0;
  for (const id of store.bodies.missing(store.byId)) if (bodiesMissing++ < PROBLEMS_PER_INDEX) problems.push(`${where}: message ${id} has no stored body`);
  if (bodiesMissing > PROBLEMS_PER_INDEX) problems.push(`${where}: ${bodiesMissing} messages have no stored body`);
  if (lastId >= store.nextId) problems.push(`${where}: message ${lastId} is not below nextId ${store.nextId}`);
  // A walk of every list whole: each reads all its segments, the index letting the least recently used go.
  const check = <K>(name: string, index: Map<K, IdList>, expected: number, belongs: (message: StoredMessage, key: K) => boolean) => {
    let listed = 0;
    let reported = 0;
    for (const [key, ids] of index) {
      const report = (problem: string) => reported++ < PROBLEMS_PER_INDEX && problems.push(`${where}: ${name} ${String(key).replace('\u0000', '/')} ${problem}`);
      let previous = -1;
      for (const id of ids) {
        listed++;
        const message = store.byId.get(id);
        if (!message || !belongs(message, key)) report(`lists message ${id}, which is missing or elsewhere`);
        if (previous >= id) report(`is out of order at ${id}`);
        previous = id;
      }
    }
    if (listed !== expected) problems.push(`${where}: ${name} lists ${listed} messages, expected ${expected}`);
  };
  check('channel index', store.byChannel, channelMessages, (m, channelId) => m.recipient.kind === 'channel' && m.recipient.channelId === channelId);
  check('topic index', store.byTopic, channelMessages, (m, key) => m.recipient.kind === 'channel' && topicKey(m.recipient.channelId, m.recipient.topic) === key);
  check('conversation index', store.byConversation, store.byId.size - channelMessages, (m, key) => m.recipient.kind === 'direct' && conversationKey(m.recipient.userIds) === key);
}
