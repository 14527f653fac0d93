import type { ApiEvent, Audience, Delivery, SelectedDelivery } from '../../events.ts';
import type { WireEventOf } from '../../wire/events.ts';
import type { QueueContext } from '../../queue/spec.ts';
import { canSeeChannel } from '../channels/views.ts';
import { Role, type RealmState } from '../state.ts';
import { canRead, flagsFor, holds, messageAudience, readsChannelHistory } from './access.ts';
import type { FirstMessageIds, MessageChange } from './changes.ts';
import { hasSorted, type StoredMessage } from './state.ts';
import { topicLinks } from './topic-links.ts';
import { messageView, reactionView, type ViewOptions } from './views.ts';
import { displayEmail } from '../email-visibility.ts';

type MessageDetails = NonNullable<Extract<WireEventOf<'update_message_flags'>, { op: 'remove' }>['message_details']>;
type Edited = Extract<MessageChange, { type: 'message.edited' }>;

/** One event for the listed users' queues, if there are any users. */
const toUsers = (state: RealmState, userIds: readonly number[], event: ApiEvent): Delivery[] =>
  userIds.length ? [{ realmId: state.realmId, audience: { kind: 'users', userIds }, event }] : [];

export function messageEvents(state: RealmState, change: MessageChange): Delivery[] {
  switch (change.type) {
    case 'message.sent': {
      const message = state.messages.byId.get(change.message.id)!;
      const out = newMessageDeliveries(state, message, change.localEcho);
      if (message.recipient.kind === 'channel' && state.channels.get(message.recipient.channelId)?.firstMessageId === message.id) {
        out.push(...firstMessageIdEvents(state, [[message.recipient.channelId, message.id]]));
      }
      return out;
    }
    case 'message.edited':
      return editDeliveries(state, change);
    case 'messages.deleted': {
      const out: Delivery[] = [];
      for (const group of change.groups) {
        const event: WireEventOf<'delete_message'> = { type: 'delete_message', message_ids: group.messageIds, message_type: group.messageType };
        if (group.messageType === 'stream') Object.assign(event, { stream_id: group.channelId, topic: group.topic });
        out.push(...toUsers(state, group.userIds, event));
      }
      return [...out, ...firstMessageIdEvents(state, change.firstMessageIds)];
    }
    case 'reaction.added':
    case 'reaction.removed': {
      const message = state.messages.byId.get(change.messageId);
      const user = state.users.get(change.reaction.userId);
      if (!message || !user) return [];
      const event: ApiEvent = {
        type: 'reaction',
        op: change.type === 'reaction.added' ? 'add' : 'remove',
        message_id: message.id,
        ...reactionView(change.reaction),
        user: { user_id: user.userId, email: displayEmail(state, user), full_name: user.fullName },
      };
      return toUsers(state, messageAudience(state, message), event);
    }
    case 'message.flags_changed': {
      const { flag, messageIds: messages } = change;
      const event: ApiEvent = change.op === 'add'
        ? { type: 'update_message_flags', op: 'add', operation: 'add', flag, messages, all: false }
        : flag === 'read'
          ? { type: 'update_message_flags', op: 'remove', operation: 'remove', flag, messages, all: false, message_details: unreadDetails(state, change.userId, messages) }
          : { type: 'update_message_flags', op: 'remove', operation: 'remove', flag, messages, all: false };
      return toUsers(state, [change.userId], event);
    }
  }
}

/**
 * The shapes of a message as queues asked for it, by `apply_markdown` and `client_extavatar`. The empty
 * topic's display name (the `empty_topic_name` capability) is applied at delivery, by the queue registry's
 * capability adapters.
 */
const SHAPES: readonly ViewOptions[] = [
  { applyMarkdown: true, clientExtavatar: true, allowEmptyTopicName: true },
  { applyMarkdown: true, clientExtavatar: false, allowEmptyTopicName: true },
  { applyMarkdown: false, clientExtavatar: true, allowEmptyTopicName: true },
  { applyMarkdown: false, clientExtavatar: false, allowEmptyTopicName: true },
];

const shapeOf = (queue: QueueContext) => (queue.spec.applyMarkdown ? 0 : 2) + (queue.spec.clientExtavatar ? 0 : 1);

/** What every delivery of a new message has in common, for the registry's type checks. */
const MESSAGE_EVENT: SelectedDelivery['event'] = Object.freeze({ type: 'message' });

type LocalEcho = { queueId: string; localId: string };
type MessageView = WireEventOf<'message'>['message'];

/** A new message's views, built once per shape some queue takes and shared by every group of recipients. */
class NewMessage {
  private readonly views: (MessageView | undefined)[] = [];
  constructor(
    readonly state: RealmState,
    readonly message: StoredMessage,
    readonly echo: LocalEcho | undefined,
  ) {}

  view(shape: number): MessageView {
    return (this.views[shape] ??= messageView(this.state, this.message, SHAPES[shape]!));
  }
}

/**
 * The `message` events of recipients whose flags are the same (read off the first of them), or those of the
 * `all_public_streams` queues that did not receive the message (no flags, as the original). Each queue gets its shape; the sender's echoing queue gets it with `local_message_id`.
 * Nothing is built until a queue takes it, and then while the state is the one the send left.
 */
class NewMessageDelivery implements SelectedDelivery {
  readonly realmId: number;
  readonly event = MESSAGE_EVENT;
  private flags: string[] | undefined;
  /** by shape, then by shape + 4 for the echo */
  private readonly events: (WireEventOf<'message'> | undefined)[] = [];

  constructor(
    readonly audience: Audience,
    private readonly sent: NewMessage,
  ) {
    this.realmId = sent.state.realmId;
  }

  select(queue: QueueContext): ApiEvent | null {
    const { state, message, echo } = this.sent;
    const { audience } = this;
    if (audience.kind !== 'users' && (holds(message, queue.userId) || state.users.get(queue.userId)?.role === Role.guest)) return null;
    const echoes = echo !== undefined && queue.queueId === echo.queueId && queue.userId === message.senderId;
    const shape = shapeOf(queue);
    const at = echoes ? shape + SHAPES.length : shape;
    let event = this.events[at];
    if (!event) {
      this.flags ??= audience.kind === 'users' ? flagsFor(state, audience.userIds[0]!, message) : [];
      event = echoes
        ? { type: 'message', message: this.sent.view(shape), flags: this.flags, local_message_id: echo.localId }
        : { type: 'message', message: this.sent.view(shape), flags: this.flags };
      this.events[at] = event;
    }
    return event;
  }
}

/**
 * `message` events: recipients grouped by identical flags, one delivery per group, each queue getting the
 * shape it asked for; queues registered with `all_public_streams` get public channel messages they did not
 * receive. Queue narrows are applied by the queue registry when it resolves recipients.
 */
function newMessageDeliveries(state: RealmState, message: StoredMessage, echo?: LocalEcho): Delivery[] {
  // A new message's flags differ between recipients only by who sent it and whom it mentions by name or
  // as a topic participant: group on those facts, then read each group's flags off one of its members.
  const { mentions } = message;
  const byKey = new Map<number, number[]>();
  for (const userId of message.userIds) {
    const key = (userId === message.senderId ? 1 : 0) | (hasSorted(mentions.userIds, userId) ? 2 : 0) | (hasSorted(mentions.topicWildcardUserIds, userId) ? 4 : 0);
    const list = byKey.get(key);
    if (list) list.push(userId);
    else byKey.set(key, [userId]);
  }
  const sent = new NewMessage(state, message, echo);
  const out: Delivery[] = [];
  for (const userIds of byKey.values()) out.push(new NewMessageDelivery({ kind: 'users', userIds }, sent));
  const channel = message.recipient.kind === 'channel' ? state.channels.get(message.recipient.channelId) : undefined;
  if (channel && !channel.inviteOnly) out.push(new NewMessageDelivery({ kind: 'all_public_streams' }, sent));
  return out;
}

function editDeliveries(state: RealmState, change: Edited): Delivery[] {
  const target = state.messages.byId.get(change.targetId);
  if (!target) return [];
  const { move, content } = change;
  const base: Omit<WireEventOf<'update_message'>, 'flags'> = {
    type: 'update_message',
    user_id: change.editorId,
    edit_timestamp: change.at,
    message_id: change.targetId,
    message_ids: change.messageIds,
    rendering_only: false,
  };
  const fromChannelId = move?.fromChannelId ?? (target.recipient.kind === 'channel' ? target.recipient.channelId : undefined);
  if (fromChannelId !== undefined) Object.assign(base, { stream_id: fromChannelId, stream_name: state.channels.get(fromChannelId)?.name });
  if (move) {
    Object.assign(base, { propagate_mode: change.propagateMode, orig_subject: move.fromTopic });
    if (move.toTopic !== move.fromTopic) Object.assign(base, { subject: move.toTopic, topic_links: topicLinks(state, move.toTopic) });
    if (move.toChannelId !== move.fromChannelId) base.new_stream_id = move.toChannelId;
  }
  if (content) {
    const previous = state.messages.bodies.of(target).editHistory[0]!;
    Object.assign(base, {
      orig_content: previous.prevContent, orig_rendered_content: previous.prevRenderedContent,
      content: content.content, rendered_content: content.renderedContent, is_me_message: content.isMeMessage,
    });
  }
  const audience = messageAudience(state, target);
  const groups = new Map<string, number[]>();
  for (const userId of audience) {
    const key = flagsFor(state, userId, target).join(',');
    const group = groups.get(key);
    // Pushed, not copied: copying the group at each member made an edit in a channel of 10,000 quadratic.
    if (group) group.push(userId);
    else groups.set(key, [userId]);
  }
  const out: Delivery[] = [];
  for (const [key, userIds] of groups) {
    out.push({ realmId: state.realmId, audience: { kind: 'users', userIds }, event: { ...base, flags: key ? key.split(',') : [] } });
  }
  if (move && move.toChannelId !== move.fromChannelId) out.push(...lostAccessDeliveries(state, change, new Set(audience)));
  return [...out, ...firstMessageIdEvents(state, change.firstMessageIds)];
}

/** After a channel move, those who could read the messages where they were but not where they are. */
function lostAccessDeliveries(state: RealmState, change: Edited, stillSee: Set<number>): Delivery[] {
  const move = change.move!;
  const from = state.channels.get(move.fromChannelId);
  const lost = new Set(move.lostAccess);
  for (const userId of state.subscriptions.get(move.fromChannelId)?.keys() ?? []) {
    if (from && readsChannelHistory(state, from, userId) && !stillSee.has(userId)) lost.add(userId);
  }
  const sample = state.messages.byId.get(change.targetId)!;
  const userIds = [...lost].filter((userId) => !canRead(state, userId, sample)).sort((a, b) => a - b);
  const event: ApiEvent = { type: 'delete_message', message_ids: change.messageIds, message_type: 'stream', stream_id: move.fromChannelId, topic: move.fromTopic };
  return userIds.length ? [{ realmId: state.realmId, audience: { kind: 'users', userIds }, event }] : [];
}

/** `stream` update events for channels whose oldest message changed, to whoever may see the channel. */
function firstMessageIdEvents(state: RealmState, changes: FirstMessageIds): Delivery[] {
  const out: Delivery[] = [];
  for (const [channelId, firstMessageId] of changes) {
    const channel = state.channels.get(channelId);
    if (!channel) continue;
    const userIds = [...state.users.values()].filter((user) => user.isActive && canSeeChannel(state, channel, user.userId)).map((user) => user.userId);
    const event: ApiEvent = { type: 'stream', op: 'update', stream_id: channelId, name: channel.name, property: 'first_message_id', value: firstMessageId };
    if (userIds.length) out.push({ realmId: state.realmId, audience: { kind: 'users', userIds }, event });
  }
  return out;
}

/** For messages marked unread again: where they are, so clients can rebuild their unread counts. */
function unreadDetails(state: RealmState, userId: number, ids: readonly number[]): MessageDetails {
  const out: MessageDetails = {};
  for (const id of ids) {
    const message = state.messages.byId.get(id);
    if (!message) continue;
    const mentioned = state.messages.mentionedOf.get(userId)?.has(id) ? { mentioned: true } : {};
    out[id] = message.recipient.kind === 'channel'
      ? { type: 'stream', stream_id: message.recipient.channelId, topic: message.recipient.topic, unmuted_stream_msg: true, ...mentioned }
      : { type: 'private', user_ids: message.recipient.userIds.filter((other) => other !== userId), ...mentioned };
  }
  return out;
}
