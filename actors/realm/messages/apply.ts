import { MAX_EDIT_HISTORY } from './limits.ts';
import type { RealmState } from '../state.ts';
import { contentHas } from './bodies.ts';
import type { FirstMessageIds, MessageChange } from './changes.ts';
import { reindexMoved, type MovedFrom } from './move-indexes.ts';
import {
  addToIndexes,
  addUnread,
  sameList,
  type MessageStore,
  flagSet,
  hasSorted,
  insertSorted,
  markUnsaved,
  mentionedUsers,
  mentionSet,
  NO_MENTIONS,
  none,
  PERSONAL_FLAGS,
  recipientKey,
  removeFromIndexes,
  type EditHistoryEntry,
  type SentMessage,
  type StoredMessage,
} from './state.ts';

export function applyMessageChange(state: RealmState, change: MessageChange): void {
  const store = state.messages;
  for (const id of touchedMessageIds(change)) markUnsaved(store, id);
  switch (change.type) {
    case 'message.sent': {
      const message = copyMessage(change.message, sharedHolders(store, change.message));
      store.byId.set(message.id, message);
      store.bodies.unsaved.add(message.id);
      addToIndexes(store, message);
      store.nextId = Math.max(store.nextId, message.id + 1);
      store.recipientIds.set(recipientKey(message.recipient), message.recipientId);
      store.nextRecipientId = Math.max(store.nextRecipientId, message.recipientId + 1);
      addUnread(store, message.id, message.userIds, change.readBySender ? message.senderId : -1);
      indexMentions(state, message, true);
      if (message.recipient.kind === 'channel') {
        const channel = state.channels.get(message.recipient.channelId);
        if (channel && channel.firstMessageId === null) channel.firstMessageId = message.id;
      }
      return;
    }
    case 'message.edited':
      applyEdit(state, change);
      return;
    case 'messages.deleted': {
      /** holder list -> the deleted messages that share it (sharedHolders) */
      const byHolders = new Map<readonly number[], number[]>();
      for (const group of change.groups) {
        for (const id of group.messageIds) {
          const message = store.byId.get(id);
          if (!message) continue;
          removeFromIndexes(store, message);
          indexMentions(state, message, false);
          const shared = byHolders.get(message.userIds);
          if (shared) shared.push(id);
          else byHolders.set(message.userIds, [id]);
          store.byId.delete(id);
          store.bodies.dropped(id);
        }
      }
      dropFlagsOfDeleted(state, byHolders);
      setFirstMessageIds(state, change.firstMessageIds);
      return;
    }
    case 'reaction.added': {
      const message = store.byId.get(change.messageId);
      if (!message) return;
      message.reactions = [...message.reactions, { ...change.reaction }];
      // Reacting puts a message into the reactor's history, as starring does.
      addHolder(message, change.reaction.userId);
      return;
    }
    case 'reaction.removed': {
      const message = store.byId.get(change.messageId);
      if (!message) return;
      const { userId, emojiCode, reactionType } = change.reaction;
      message.reactions = message.reactions.filter((r) => !(r.userId === userId && r.emojiCode === emojiCode && r.reactionType === reactionType));
      return;
    }
    case 'message.flags_changed': {
      const stored = change.flag === 'read' ? 'unread' : change.flag;
      // `read` is kept as unread: adding read removes from the set.
      const adding = (change.flag === 'read') !== (change.op === 'add');
      const set = flagSet(store, stored, change.userId);
      for (const id of change.messageIds) {
        if (adding) set.add(id);
        else set.delete(id);
        const message = store.byId.get(id);
        if (message && change.op === 'add' && change.flag === 'starred') addHolder(message, change.userId);
      }
      return;
    }
  }
}

function applyEdit(state: RealmState, change: Extract<MessageChange, { type: 'message.edited' }>): void {
  const store = state.messages;
  const { move, content } = change;
  const moved: MovedFrom[] = [];
  const movedHolders = new Map<readonly number[], MovedHolders>();
  for (const id of change.messageIds) {
    const message = store.byId.get(id);
    if (!message) continue;
    const entry: EditHistoryEntry = { userId: change.editorId, timestamp: change.at };
    const body = { ...store.bodies.peek(message) };
    if (content && id === change.targetId) {
      entry.prevContent = body.content;
      entry.prevRenderedContent = body.renderedContent;
      indexMentions(state, message, false);
      Object.assign(body, { content: content.content, renderedContent: content.renderedContent });
      Object.assign(message, { isMeMessage: content.isMeMessage, mentions: structuredClone(content.mentions), contentHas: contentHas(content.renderedContent) });
      message.lastEditTimestamp = change.at;
    }
    if (move && message.recipient.kind === 'channel') {
      if (move.toChannelId !== move.fromChannelId) Object.assign(entry, { prevStream: move.fromChannelId, stream: move.toChannelId });
      if (move.toTopic !== message.recipient.topic) Object.assign(entry, { prevTopic: message.recipient.topic, topic: move.toTopic });
      moved.push({ id, channelId: message.recipient.channelId, topic: message.recipient.topic });
      message.recipient = { kind: 'channel', channelId: move.toChannelId, topic: move.toTopic };
      if (!move.resolveOnly) message.lastMovedTimestamp = change.at;
      if (move.toChannelId !== move.fromChannelId) moveHolders(state, message, move, movedHolders);
    }
    body.editHistory = [entry, ...body.editHistory.slice(0, MAX_EDIT_HISTORY - 1)];
    store.bodies.set(message, body);
    if (content && id === change.targetId) indexMentions(state, message, true);
  }
  if (move) reindexMoved(store, moved, move.toChannelId, move.toTopic);
  if (move && move.toChannelId !== move.fromChannelId) {
    const key = `c${move.toChannelId}`;
    // A channel that never had a message has no recipient id yet: moved messages take the next one.
    if (!store.recipientIds.has(key)) store.recipientIds.set(key, store.nextRecipientId++);
    const recipientId = store.recipientIds.get(key)!;
    for (const id of change.messageIds) {
      const message = store.byId.get(id);
      if (message) message.recipientId = recipientId;
    }
  }
  setFirstMessageIds(state, change.firstMessageIds);
}

/** The holders of a channel's message after a move to another channel, and which of those who lost access held it. */
interface MovedHolders {
  holders: number[];
  lost: number[];
}

/**
 * After a channel move: users who lost access drop the message and its flags; new subscribers hold it. The
 * holders after the move are made once per holder list before it (`made`), and shared as those were (messages
 * of a channel share theirs: sharedHolders). Made per message, a topic of 10,000 moved between two channels of
 * 2,000 subscribers held the event loop 1.2-2.1 s (2026-11-30).
 */
function moveHolders(state: RealmState, message: StoredMessage, move: { lostAccess: number[]; gained: number[] }, made: Map<readonly number[], MovedHolders>): void {
  indexMentions(state, message, false);
  let after = made.get(message.userIds);
  if (!after) made.set(message.userIds, (after = holdersAfterMove(message.userIds, move.lostAccess, move.gained)));
  for (const userId of after.lost) {
    message.historicalUserIds = message.historicalUserIds.filter((id) => id !== userId);
    dropFlags(state, userId, message.id);
  }
  // Holder lists may be shared between messages: replaced, never changed in place.
  message.userIds = after.holders;
  indexMentions(state, message, true);
}

/** `before` without `lostAccess` and with `gained` (all three ascending), in one pass. */
function holdersAfterMove(before: readonly number[], lostAccess: readonly number[], gained: readonly number[]): MovedHolders {
  const losing = new Set(lostAccess);
  const lost = losing.size ? before.filter((userId) => losing.has(userId)) : [];
  const kept = lost.length ? before.filter((userId) => !losing.has(userId)) : before;
  const holders: number[] = [];
  let i = 0;
  let j = 0;
  while (i < kept.length || j < gained.length) {
    const next = j === gained.length || (i < kept.length && kept[i]! <= gained[j]!) ? kept[i++]! : gained[j++]!;
    if (holders[holders.length - 1] !== next) holders.push(next);
  }
  return { holders, lost };
}

/** The messages whose stored form (message or flags) the change alters. */
function touchedMessageIds(change: MessageChange): readonly number[] {
  switch (change.type) {
    case 'message.sent':
      return [change.message.id];
    case 'message.edited':
    case 'message.flags_changed':
      return change.messageIds;
    case 'messages.deleted':
      return change.groups.flatMap((group) => group.messageIds);
    case 'reaction.added':
    case 'reaction.removed':
      return [change.messageId];
  }
}

/**
 * A copy sharing nothing mutable with the change (which the log may still be encoding), its body on it;
 * its holders are `holders` when the channel's last message has the same (sharedHolders).
 */
function copyMessage(sent: SentMessage, holders: number[] | undefined): StoredMessage {
  const { mentions, recipient } = sent;
  // Field by field, in the order chunks.ts loads them: one object shape for every stored message (a rest
  // pattern over the sent message cost a tenth of a send's CPU).
  const message: StoredMessage = {
    id: sent.id,
    senderId: sent.senderId,
    recipient: recipient.kind === 'channel' ? { ...recipient } : { kind: 'direct', userIds: [...recipient.userIds] },
    recipientId: sent.recipientId,
    body: { content: sent.content, renderedContent: sent.renderedContent, editHistory: sent.editHistory.map((entry) => ({ ...entry })) },
    contentHas: contentHas(sent.renderedContent),
    isMeMessage: sent.isMeMessage,
    // The empty lists and mentions shared, as a loaded message's are (chunks.ts): fewer objects kept per message.
    mentions: mentions.userIds.length === 0 && !mentions.streamWildcard && mentions.topicWildcardUserIds.length === 0
      ? NO_MENTIONS
      : { userIds: [...mentions.userIds], streamWildcard: mentions.streamWildcard, topicWildcardUserIds: [...mentions.topicWildcardUserIds] },
    timestamp: sent.timestamp,
    client: sent.client,
    reactions: sent.reactions.length === 0 ? none() : sent.reactions.map((reaction) => ({ ...reaction })),
    userIds: holders ?? [...sent.userIds],
    historicalUserIds: sent.historicalUserIds.length === 0 ? none() : [...sent.historicalUserIds],
  };
  if (sent.lastEditTimestamp !== undefined) message.lastEditTimestamp = sent.lastEditTimestamp;
  if (sent.lastMovedTimestamp !== undefined) message.lastMovedTimestamp = sent.lastMovedTimestamp;
  if (sent.alertedUserIds !== undefined) message.alertedUserIds = [...sent.alertedUserIds];
  if (sent.attachmentIds !== undefined) message.attachmentIds = [...sent.attachmentIds];
  return message;
}

/**
 * Consecutive messages of a channel nearly always reach the same subscribers: they share one holder list
 * (a thousand subscribers cost 8 KB per message otherwise), the channel's last message's, if it has the
 * same. Shared lists are never changed in place.
 */
function sharedHolders(store: MessageStore, message: Pick<SentMessage, 'recipient' | 'userIds'>): number[] | undefined {
  if (message.recipient.kind !== 'channel') return undefined;
  // Called before the message is indexed: the channel's last message is the one before it.
  const ids = store.byChannel.get(message.recipient.channelId);
  // Only if in memory: a send to a channel quiet since long does not read an old chunk for this.
  const last = ids?.last();
  const previous = last !== undefined ? store.byId.ifResident(last) : undefined;
  return previous && sameList(previous.userIds, message.userIds) ? previous.userIds : undefined;
}

function addHolder(message: StoredMessage, userId: number): void {
  if (hasSorted(message.userIds, userId)) return;
  const holders = [...message.userIds];
  insertSorted(holders, userId);
  message.userIds = holders;
  message.historicalUserIds = [...message.historicalUserIds, userId];
}

/**
 * Each holder's flags of the deleted messages, each holder's set looked up once per holder list: looked up per
 * message and holder, a batch of delete_topic (1,000 messages) in a channel of 2,000 held the event loop
 * 450-875 ms (2026-11-30).
 */
function dropFlagsOfDeleted(state: RealmState, byHolders: ReadonlyMap<readonly number[], readonly number[]>): void {
  const { flags } = state.messages;
  for (const flag of PERSONAL_FLAGS) {
    const sets = flags[flag];
    for (const [holders, ids] of byHolders) {
      for (const userId of holders) {
        const set = sets.get(userId);
        if (set) for (const id of ids) set.delete(id);
      }
    }
  }
}

function dropFlags(state: RealmState, userId: number, messageId: number): void {
  for (const flag of PERSONAL_FLAGS) state.messages.flags[flag].get(userId)?.delete(messageId);
}

function indexMentions(state: RealmState, message: StoredMessage, add: boolean): void {
  for (const userId of mentionedUsers(message)) {
    if (add) mentionSet(state.messages, userId).add(message.id);
    else state.messages.mentionedOf.get(userId)?.delete(message.id);
  }
}

function setFirstMessageIds(state: RealmState, firstMessageIds: FirstMessageIds): void {
  for (const [channelId, firstMessageId] of firstMessageIds) {
    const channel = state.channels.get(channelId);
    if (channel) channel.firstMessageId = firstMessageId;
  }
}
