import { badRequest, ChatError, ErrorCode, notAdmin } from '../../errors.ts';
import { canSeeChannel } from '../channels/views.ts';
import { activeEmoji } from '../emoji/state.ts';
import { allowed } from '../permissions.ts';
import { isAdmin, type RealmState } from '../state.ts';
import { canRead, holds, messageAudience } from './access.ts';
import type { DeletedGroup, EditableFlag, FirstMessageIds, MessageChange } from './changes.ts';
import type { MessageCommand } from './commands.ts';
import { callerUser, readableMessage } from './decide.ts';
import { emojiCodeOf, isUnicodeEmojiCode, MAX_EMOJI_NAME_LENGTH } from './emoji.ts';
import { IdList } from './id-list.ts';
import type { IdSet } from './id-set.ts';
import { normalizeTopic } from './limits.ts';
import { conversationKey, firstIdNotIn, hasSorted, lowerBound, topicKey, type Reaction, type StoredMessage } from './state.ts';

type Command<T extends MessageCommand['type']> = Extract<MessageCommand, { type: T }>;

export function decideDelete(state: RealmState, command: Command<'message.delete'>): MessageChange[] {
  const user = callerUser(state, command.caller);
  const message = readableMessage(state, user.userId, command.messageId);
  // The channel's own settings (feature level 407) add to the organization's.
  const channel = message.recipient.kind === 'channel' ? state.channels.get(message.recipient.channelId) : undefined;
  const inChannel = (name: 'can_delete_any_message_group' | 'can_delete_own_message_group') => !!channel && allowed(state, channel.permissions[name], user.userId);
  const any = allowed(state, 'can_delete_any_message_group', user.userId) || inChannel('can_delete_any_message_group');
  const own = message.senderId === user.userId && (allowed(state, 'can_delete_own_message_group', user.userId) || inChannel('can_delete_own_message_group'));
  if (!own && !any) throw badRequest("You don't have permission to delete this message");
  return [deletion(state, [message])];
}

/** The newest `limit` messages of a topic that the administrator can read; nothing when none are left. */
export function decideDeleteTopic(state: RealmState, command: Command<'topic.delete'>): MessageChange[] {
  const user = callerUser(state, command.caller);
  if (!isAdmin(user)) throw notAdmin();
  const channel = state.channels.get(command.channelId);
  if (!channel || !canSeeChannel(state, channel, user.userId)) throw badRequest('Invalid channel ID');
  const ids = state.messages.byTopic.get(topicKey(channel.id, command.topic));
  const batch: StoredMessage[] = [];
  if (ids) {
    for (const id of ids.idsFrom(Infinity, true)) {
      if (batch.length >= command.limit) break;
      const message = state.messages.byId.get(id)!;
      if (canRead(state, user.userId, message)) batch.push(message);
    }
  }
  return batch.length ? [deletion(state, batch.reverse())] : [];
}

/** A deletion, with who is told computed now: afterwards the messages are gone. */
function deletion(state: RealmState, messages: StoredMessage[]): MessageChange {
  const groups = new Map<string, DeletedGroup & { audience: Set<number> }>();
  // A message's audience is its holders and the channel's readers: messages of a conversation that share a
  // holder list (sharedHolders) add nothing new, and are not walked again (2,000 holders a message).
  const walked = new Map<string, Set<readonly number[]>>();
  for (const message of messages) {
    const { recipient } = message;
    const key = recipient.kind === 'channel' ? topicKey(recipient.channelId, recipient.topic) : conversationKey(recipient.userIds);
    let group = groups.get(key);
    if (!group) {
      group = recipient.kind === 'channel'
        ? { messageType: 'stream', channelId: recipient.channelId, topic: recipient.topic, messageIds: [], userIds: [], audience: new Set() }
        : { messageType: 'private', messageIds: [], userIds: [], audience: new Set() };
      groups.set(key, group);
      walked.set(key, new Set());
    }
    group.messageIds.push(message.id);
    const lists = walked.get(key)!;
    if (lists.has(message.userIds)) continue;
    lists.add(message.userIds);
    for (const userId of messageAudience(state, message)) group.audience.add(userId);
  }
  const out: DeletedGroup[] = [];
  for (const { audience, ...group } of groups.values()) {
    out.push({ ...group, messageIds: group.messageIds.sort((a, b) => a - b), userIds: [...audience].sort((a, b) => a - b) });
  }
  return { type: 'messages.deleted', groups: out, firstMessageIds: firstIdsAfterDelete(state, messages) };
}

function firstIdsAfterDelete(state: RealmState, messages: StoredMessage[]): FirstMessageIds {
  const gone = new Set(messages.map((message) => message.id));
  const channels = new Set(messages.flatMap((message) => (message.recipient.kind === 'channel' ? [message.recipient.channelId] : [])));
  const out: FirstMessageIds = [];
  for (const channelId of channels) {
    const first = firstIdNotIn(state.messages.byChannel.get(channelId), gone);
    if (first !== state.channels.get(channelId)?.firstMessageId) out.push([channelId, first]);
  }
  return out;
}

export function decideReaction(state: RealmState, command: Command<'reaction.add' | 'reaction.remove'>): MessageChange[] {
  const user = callerUser(state, command.caller);
  const message = readableMessage(state, user.userId, command.messageId);
  const { emojiName } = command.reaction;
  const mine = message.reactions.filter((reaction) => reaction.userId === user.userId);
  if (command.type === 'reaction.remove') {
    const { emojiCode, reactionType = 'unicode_emoji' } = command.reaction;
    const found = mine.find((r) => (emojiCode === undefined ? r.emojiName === emojiName : r.emojiCode === emojiCode && r.reactionType === reactionType));
    if (!found) throw new ChatError(ErrorCode.REACTION_DOES_NOT_EXIST, "Reaction doesn't exist.");
    return [{ type: 'reaction.removed', messageId: message.id, reaction: found }];
  }
  const reaction = resolveReaction(state, command.reaction.emojiName, command.reaction.emojiCode, command.reaction.reactionType, user.userId);
  if (mine.some((r) => r.emojiCode === reaction.emojiCode && r.reactionType === reaction.reactionType)) {
    throw new ChatError(ErrorCode.REACTION_ALREADY_EXISTS, 'Reaction already exists.');
  }
  requireRoomForEmoji(message.reactions, reaction);
  return [{ type: 'reaction.added', messageId: message.id, reaction }];
}

/**
 * The original takes only emoji it knows, about 3,700; here any well-formed code is taken (no emoji data
 * package is installed), so a message keeps at most this many different emoji, as chat services commonly
 * do: once it has them, others can still react with those, but no one adds another. Without it a member
 * could hang any number of made-up emoji on every message, each kept and sent to every recipient.
 */
export const MAX_EMOJI_PER_MESSAGE = 100;
// The longest emoji sequences Unicode defines (ZWJ sequences with skin tones) have 10 code points.
const MAX_EMOJI_CODE_POINTS = 10;

/** The different emoji among a message's reactions (what MAX_EMOJI_PER_MESSAGE bounds). */
export function distinctEmoji(reactions: readonly Reaction[]): Set<string> {
  return new Set(reactions.map(emojiKey));
}

const emojiKey = (reaction: Reaction) => `${reaction.reactionType} ${reaction.emojiCode}`;

function requireRoomForEmoji(reactions: readonly Reaction[], reaction: Reaction): void {
  const emoji = distinctEmoji(reactions);
  if (emoji.has(emojiKey(reaction))) return;
  if (emoji.size >= MAX_EMOJI_PER_MESSAGE) {
    throw badRequest(`This message already has ${MAX_EMOJI_PER_MESSAGE} different emoji reactions, the most it may have; react with one of those`);
  }
}

/**
 * The reaction a request names. By name alone, the realm's active custom emoji of that name comes first (it
 * overrides a built-in one), as in the original; with a code, the code and type say which emoji it is.
 */
function resolveReaction(state: RealmState, emojiName: string, emojiCode: string | undefined, type: Reaction['reactionType'] | undefined, userId: number): Reaction {
  if (emojiCode === undefined && type === undefined) {
    const custom = activeEmoji(state.emoji, emojiName);
    if (custom) return { emojiName, emojiCode: String(custom.id), reactionType: 'realm_emoji', userId };
  }
  const reactionType = type ?? 'unicode_emoji';
  if (reactionType === 'realm_emoji') return customReaction(state, emojiName, emojiCode, userId);
  if (reactionType === 'svc_extra_emoji') {
    if (emojiName !== 'zulip' || (emojiCode !== undefined && emojiCode !== 'zulip')) throw badRequest('Invalid emoji code');
    return { emojiName, emojiCode: 'zulip', reactionType, userId };
  }
  const code = emojiCode ?? emojiCodeOf(emojiName);
  if (code === undefined) throw badRequest(`Emoji '${emojiName}' does not exist`);
  if (!isUnicodeEmojiCode(code) || code.split('-').length > MAX_EMOJI_CODE_POINTS) throw badRequest('Invalid emoji code');
  if (!/^[a-z0-9_+-]+$/.test(emojiName) || emojiName.length > MAX_EMOJI_NAME_LENGTH) throw badRequest('Invalid emoji name');
  return { emojiName, emojiCode: code, reactionType, userId };
}

function customReaction(state: RealmState, emojiName: string, emojiCode: string | undefined, userId: number): Reaction {
  const emoji = emojiCode === undefined ? activeEmoji(state.emoji, emojiName) : /^\d+$/.test(emojiCode) ? state.emoji.byId.get(Number(emojiCode)) : undefined;
  if (!emoji) throw badRequest('Invalid custom emoji.');
  if (emoji.name !== emojiName) throw badRequest('Invalid custom emoji name.');
  if (emoji.deactivated) throw badRequest('This custom emoji has been deactivated.');
  return { emojiName, emojiCode: String(emoji.id), reactionType: 'realm_emoji', userId };
}

const EDITABLE_FLAGS: readonly string[] = ['read', 'starred', 'collapsed'];
const FIXED_FLAGS: readonly string[] = [
  'mentioned', 'stream_wildcard_mentioned', 'topic_wildcard_mentioned', 'wildcard_mentioned', 'has_alert_word',
  'historical', 'is_private', 'active_mobile_push_notification',
];

export function decideFlags(state: RealmState, command: Command<'message.flags'>): MessageChange[] {
  const user = callerUser(state, command.caller);
  if (FIXED_FLAGS.includes(command.flag)) throw badRequest(`Flag not editable: '${command.flag}'`);
  if (!EDITABLE_FLAGS.includes(command.flag)) throw badRequest(`Invalid flag: '${command.flag}'`);
  const flag = command.flag as EditableFlag;
  const set = state.messages.flags[flag === 'read' ? 'unread' : flag].get(user.userId);
  // Adding `read` clears unread; other flags are kept as they are named.
  const present = flag === 'read' ? (id: number) => !set?.has(id) : (id: number) => !!set?.has(id);
  const changed: number[] = [];
  for (const id of new Set(command.messageIds)) {
    const message = readableMessage(state, user.userId, id);
    if (present(id) === (command.op === 'add')) continue;
    // Only messages in the user's history can be unread, as in the original.
    if (flag === 'read' && command.op === 'remove' && !holds(message, user.userId)) continue;
    changed.push(id);
  }
  changed.sort((a, b) => a - b);
  return changed.length ? [{ type: 'message.flags_changed', userId: user.userId, flag, op: command.op, messageIds: changed }] : [];
}

/** The caller's unread messages of the scope marked read, as `message.flags` would (POST /mark_*_as_read). */
export function decideMarkRead(state: RealmState, command: Command<'message.mark_read'>): MessageChange[] {
  const user = callerUser(state, command.caller);
  const { scope } = command;
  let scoped: IdList | null = null;
  if (scope.kind !== 'all') {
    if (!state.subscriptions.get(scope.channelId)?.has(user.userId)) throw badRequest('Invalid channel ID');
    scoped = (scope.kind === 'channel'
      ? state.messages.byChannel.get(scope.channelId)
      : state.messages.byTopic.get(topicKey(scope.channelId, normalizeTopic(scope.topic)))) ?? new IdList();
  }
  const ids = newestUnread(state.messages.flags.unread.get(user.userId), scoped, command.limit ?? Infinity, command.before ?? Infinity);
  return decideFlags(state, { type: 'message.flags', caller: command.caller, messageIds: ids, op: 'add', flag: 'read' });
}

/**
 * The newest `limit` unread ids below `before`, of the ascending `scoped` list where there is one. Walks the
 * shorter of the two, newest first, so that a batch reads about the ids it takes and those it passes over,
 * never the whole of the longer.
 */
function newestUnread(unread: IdSet | undefined, scoped: IdList | null, limit: number, before: number): number[] {
  const taken: number[] = [];
  if (!unread || limit <= 0) return taken;
  // A segment of the list never read counts as full: the unread set is walked when in doubt.
  if (scoped && scoped.sizeBound < unread.sizeBound) {
    for (const id of scoped.idsFrom(Math.min(before, Number.MAX_SAFE_INTEGER), true)) {
      if (taken.length >= limit) break;
      if (unread.has(id)) taken.push(id);
    }
    return taken;
  }
  for (const id of unread.idsFrom(Math.min(before, Number.MAX_SAFE_INTEGER), true)) {
    if (scoped && !scoped.has(id)) continue;
    taken.push(id);
    if (taken.length === limit) break;
  }
  return taken;
}
