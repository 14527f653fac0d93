import { checkTopicAllowed } from '../channels/topics-policy.ts';
import { badRequest, ChatError, ErrorCode } from '../../errors.ts';
import type { Channel } from '../channels/state.ts';
import { canSeeChannel } from '../channels/views.ts';
import type { Clock, DecideContext } from '../decide.ts';
import { settingIncludes } from '../groups/state.ts';
import { allowed } from '../permissions.ts';
import { Role, type RealmState, type UserProfile } from '../state.ts';
import { canAccessUser } from '../user-access.ts';
import type { ContentEdit, MessageChange } from './changes.ts';
import type { MessageCommand } from './commands.ts';
import { callerUser, nowSeconds } from './decide.ts';
import { linkedAttachmentIds } from '../attachments/decide.ts';
import { normalizeContent, normalizeTopic, WILDCARD_MENTION_THRESHOLD } from './limits.ts';
import { groupMembers, renderMessage } from './render.ts';
import { hasSorted, recipientKey, topicKey, type MessageRecipient, type SentMessage } from './state.ts';
import { displayEmail, findUserByAddress } from '../email-visibility.ts';
import { widgetContent } from '../submessages/widget.ts';

type Send = Extract<MessageCommand, { type: 'message.send' }>;

export function decideSend(state: RealmState, command: Send, clock: DecideContext): MessageChange[] {
  const sender = callerUser(state, command.caller);
  const content = normalizeContent(command.content);
  let recipient: MessageRecipient;
  let userIds: number[];
  if (command.kind === 'channel') {
    const channel = channelForSend(state, command.to, sender);
    if (command.topic === undefined) throw badRequest('Missing topic');
    recipient = { kind: 'channel', channelId: channel.id, topic: normalizeTopic(command.topic) };
    checkTopicAllowed(state, channel, recipient.topic);
    userIds = channelRecipients(state, channel, sender);
  } else {
    userIds = directRecipients(state, command.to, sender).sort((a, b) => a - b);
    recipient = { kind: 'direct', userIds };
  }
  const key = recipientKey(recipient);
  const message: SentMessage = {
    id: state.messages.nextId,
    senderId: sender.userId,
    recipient,
    recipientId: state.messages.recipientIds.get(key) ?? state.messages.nextRecipientId,
    ...renderContent(state, sender, recipient, content, userIds),
    timestamp: nowSeconds(clock),
    client: command.client,
    editHistory: [],
    reactions: [],
    userIds,
    historicalUserIds: [],
  };
  const alerted = alertedRecipients(content, userIds, sender.userId, clock);
  if (alerted.length) message.alertedUserIds = alerted;
  const attachmentIds = linkedAttachmentIds(state, sender, content);
  if (attachmentIds.length) message.attachmentIds = attachmentIds;
  const change: MessageChange = { type: 'message.sent', message, readBySender: command.readBySender ?? true };
  if (command.localEcho) change.localEcho = command.localEcho;
  if (command.scheduledMessageId !== undefined) change.scheduledMessageId = command.scheduledMessageId;
  const widget = widgetContent(content);
  if (widget) change.widget = { id: state.submessages.nextId, messageId: message.id, senderId: sender.userId, msgType: 'widget', content: widget };
  return [change];
}

/**
 * The channel a message goes to, by id or name. A private channel the sender cannot see answers like one
 * that does not exist, so that sending does not reveal it.
 */
function channelForSend(state: RealmState, to: Send['to'], sender: UserProfile): Channel {
  const target = Array.isArray(to) ? (to.length === 1 ? to[0]! : undefined) : to;
  if (target === undefined) throw badRequest('Invalid channel: a channel message goes to exactly one channel');
  const byId = typeof target === 'number' || /^\d+$/.test(target);
  const id = byId ? Number(target) : state.channelIdByName.get(String(target).trim().toLowerCase());
  const channel = id === undefined ? undefined : state.channels.get(id);
  if (!channel || !canSeeChannel(state, channel, sender.userId)) {
    throw byId
      ? new ChatError(ErrorCode.STREAM_DOES_NOT_EXIST, `Channel with ID '${target}' does not exist`, 400, { stream_id: Number(target) })
      : new ChatError(ErrorCode.STREAM_DOES_NOT_EXIST, `Channel '${target}' does not exist`, 400, { stream: String(target) });
  }
  const subscribed = state.subscriptions.get(channel.id)?.has(sender.userId) ?? false;
  const mayAccess = subscribed || (!channel.inviteOnly && sender.role !== Role.guest);
  if (channel.isArchived || !mayAccess) throw badRequest(`Not authorized to send to channel '${channel.name}'`);
  if (!settingIncludes(state, channel.permissions.can_send_message_group, sender.userId)) {
    throw badRequest('You do not have permission to post in this channel.');
  }
  return channel;
}

/**
 * The channel's subscribers and the sender, in ascending order. Subscriptions are mostly kept in the order
 * users joined, which is mostly their ids' order: a list found in order is not sorted (a typed array, which
 * sorts without a comparator, cost about 1 us of a send to ten subscribers).
 */
function channelRecipients(state: RealmState, channel: Channel, sender: UserProfile): number[] {
  const subscribers = state.subscriptions.get(channel.id);
  const ids: number[] = [];
  let sorted = true;
  for (const id of subscribers?.keys() ?? []) {
    if (ids.length > 0 && ids[ids.length - 1]! > id) sorted = false;
    ids.push(id);
  }
  if (!subscribers?.has(sender.userId)) {
    if (ids.length > 0 && ids[ids.length - 1]! > sender.userId) sorted = false;
    ids.push(sender.userId);
  }
  return sorted ? ids : Array.from(Int32Array.from(ids).sort());
}

/**
 * The participants of a direct message: the recipients named by id or email, and the sender. A recipient
 * a limited guest may not access is refused like an unknown one (realm/user-access.ts).
 */
function directRecipients(state: RealmState, to: Send['to'], sender: UserProfile): number[] {
  const listed = Array.isArray(to) ? to : typeof to === 'number' ? [to] : to.split(',').map((part) => part.trim()).filter(Boolean);
  if (listed.length === 0) throw badRequest('Message must have recipients');
  const ids = new Set<number>([sender.userId]);
  for (const entry of listed) {
    const user = typeof entry === 'number' ? state.users.get(entry) : findUserByAddress(state, sender.userId, entry);
    if (!user || !canAccessUser(state, sender.userId, user)) throw badRequest(typeof entry === 'number' ? `Invalid user ID ${entry}` : `Invalid email '${entry}'`);
    if (!user.isActive && user.userId !== sender.userId) throw badRequest(`'${displayEmail(state, user)}' is no longer using this server.`);
    ids.add(user.userId);
  }
  return [...ids];
}

/**
 * Renders content for its recipients: the HTML and who it mentions (by name, through a group, or with a
 * wildcard), after checking the sender may use those mentions.
 */
export function renderContent(
  state: RealmState,
  sender: UserProfile,
  recipient: MessageRecipient,
  content: string,
  userIds: readonly number[],
): ContentEdit {
  const rendered = renderMessage(state, sender.userId, content);
  const mentioned = new Set(rendered.userIds);
  for (const groupId of rendered.groupIds) {
    const group = state.groups.get(groupId)!;
    if (!settingIncludes(state, group.permissions.can_mention_group, sender.userId)) {
      throw badRequest(`You are not allowed to mention user group '${group.name}'.`);
    }
    for (const member of groupMembers(state, groupId)) mentioned.add(member);
  }
  // Asked only of a wildcard mention: the group setting's closure is not free, and most sends have none.
  const mayMentionMany = () => allowed(state, 'can_mention_many_users_group', sender.userId);
  const channel = recipient.kind === 'channel';
  const streamWildcard = channel && rendered.streamWildcard;
  if (streamWildcard && (state.subscriptions.get(recipient.channelId)?.size ?? 0) > WILDCARD_MENTION_THRESHOLD && !mayMentionMany()) {
    throw new ChatError(ErrorCode.STREAM_WILDCARD_MENTION_NOT_ALLOWED, 'You do not have permission to use channel wildcard mentions in this channel.');
  }
  let topicWildcardUserIds: number[] = [];
  if (recipient.kind === 'channel' && rendered.topicWildcard) {
    const participants = topicParticipants(state, recipient.channelId, recipient.topic, sender.userId);
    if (participants.size > WILDCARD_MENTION_THRESHOLD && !mayMentionMany()) {
      throw new ChatError(ErrorCode.TOPIC_WILDCARD_MENTION_NOT_ALLOWED, 'You do not have permission to use topic wildcard mentions in this topic.');
    }
    topicWildcardUserIds = [...participants].filter((id) => hasSorted(userIds, id)).sort((a, b) => a - b);
  }
  return {
    content,
    renderedContent: rendered.html,
    isMeMessage: rendered.isMeMessage,
    mentions: {
      userIds: [...mentioned].filter((id) => hasSorted(userIds, id)).sort((a, b) => a - b),
      streamWildcard,
      topicWildcardUserIds,
    },
  };
}

/** The users who have sent to a topic, and the sender about to. */
function topicParticipants(state: RealmState, channelId: number, topic: string, senderId: number): Set<number> {
  const out = new Set([senderId]);
  for (const id of state.messages.byTopic.get(topicKey(channelId, topic)) ?? []) out.add(state.messages.byId.senderOf(id)!);
  return out;
}

/**
 * The recipients (never the sender) one of whose alert words the content holds, as a whole word and
 * without regard to case: they get the `has_alert_word` flag.
 */
function alertedRecipients(content: string, userIds: readonly number[], senderId: number, context: DecideContext): number[] {
  const watchers = context.alertWords?.();
  if (!watchers || watchers.size === 0) return [];
  // Most users have no alert words: walk whichever list is shorter.
  const candidates = watchers.size < userIds.length ? [...watchers.keys()].filter((id) => hasSorted(userIds, id)).sort((a, b) => a - b) : userIds;
  const text = content.toLowerCase();
  const out: number[] = [];
  for (const userId of candidates) {
    if (userId === senderId) continue;
    const words = watchers.get(userId);
    if (words?.some((word) => containsWord(text, word.toLowerCase()))) out.push(userId);
  }
  return out;
}

function containsWord(text: string, word: string): boolean {
  if (!word) return false;
  const isWordChar = (char: string | undefined) => char !== undefined && /[\p{L}\p{N}_]/u.test(char);
  for (let at = text.indexOf(word); at >= 0; at = text.indexOf(word, at + 1)) {
    if (!isWordChar(text[at - 1]) && !isWordChar(text[at + word.length])) return true;
  }
  return false;
}
