import type { WireSchema } from '../../wire/events.ts';
import type { WireResponse } from '../../wire/responses.ts';
import { badRequest } from '../../errors.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../../register/realm-limits.ts';
import { senderProfile } from '../notifications/state.ts';
import type { RealmState } from '../state.ts';
import { avatarUrl } from '../views.ts';
import type { EditHistoryEntry, MessageBody, Reaction, StoredMessage } from './state.ts';
import { topicLinks } from './topic-links.ts';
import { displayEmail } from '../email-visibility.ts';
import { submessagesView } from '../submessages/views.ts';

/** How a client asked to see messages. */
export interface ViewOptions {
  applyMarkdown: boolean;
  clientExtavatar: boolean;
  /** false: the empty topic is shown as the realm's display name (clients without `empty_topic_name`) */
  allowEmptyTopicName: boolean;
}

export const topicForClient = (topic: string, allowEmpty: boolean) => (topic === '' && !allowEmpty ? EMPTY_TOPIC_DISPLAY_NAME : topic);

export const reactionView = (reaction: Reaction) => ({
  emoji_name: reaction.emojiName,
  emoji_code: reaction.emojiCode,
  reaction_type: reaction.reactionType,
  user_id: reaction.userId,
});

const isMove = (entry: EditHistoryEntry) => entry.prevTopic !== undefined || entry.prevStream !== undefined;

/**
 * The edits the realm's `message_edit_history_visibility_policy` lets users see: all of them, only the moves
 * (without what a move's edit did to the content), or none.
 */
export function visibleHistory(state: RealmState, body: MessageBody): EditHistoryEntry[] {
  switch (state.settings.message_edit_history_visibility_policy) {
    case 'all':
      return body.editHistory;
    case 'moves':
      return body.editHistory.filter(isMove).map(({ prevContent: _content, prevRenderedContent: _rendered, ...move }) => move);
    case 'none':
      return [];
    default: {
      const unknown: never = state.settings.message_edit_history_visibility_policy;
      throw new Error(`unknown edit history policy ${String(unknown)}`);
    }
  }
}

/** GET /messages/{id}/history: refused where the realm shows no edit history. */
export function messageHistoryView(state: RealmState, message: StoredMessage, allowEmptyTopicName: boolean): Snapshot[] {
  if (state.settings.message_edit_history_visibility_policy === 'none') throw badRequest('Message edit history is disabled in this organization');
  const body = state.messages.bodies.of(message);
  return editSnapshots(message, { ...body, editHistory: visibleHistory(state, body) }, allowEmptyTopicName);
}

export function historyView(entry: EditHistoryEntry, allowEmpty: boolean): WireSchema<'MessagesBase_edit_history_inner'> {
  const view: WireSchema<'MessagesBase_edit_history_inner'> = { user_id: entry.userId, timestamp: entry.timestamp };
  if (entry.prevContent !== undefined) {
    view.prev_content = entry.prevContent;
    view.prev_rendered_content = entry.prevRenderedContent;
  }
  if (entry.prevStream !== undefined) Object.assign(view, { prev_stream: entry.prevStream, stream: entry.stream });
  if (entry.prevTopic !== undefined) {
    Object.assign(view, { prev_topic: topicForClient(entry.prevTopic, allowEmpty), topic: topicForClient(entry.topic!, allowEmpty) });
  }
  return view;
}

/** The API Message object (without the per-user `flags`). */
export function messageView(state: RealmState, message: StoredMessage, options: ViewOptions): WireSchema<'MessagesEvent'> {
  const sender = senderProfile(state, message.senderId)!;
  const { recipient } = message;
  const body = state.messages.bodies.of(message);
  const view: WireSchema<'MessagesEvent'> = {
    id: message.id,
    sender_id: sender.userId,
    content: options.applyMarkdown ? body.renderedContent : body.content,
    recipient_id: message.recipientId,
    timestamp: message.timestamp,
    client: message.client,
    subject: recipient.kind === 'channel' ? topicForClient(recipient.topic, options.allowEmptyTopicName) : '',
    topic_links: recipient.kind === 'channel' ? topicLinks(state, recipient.topic) : [],
    is_me_message: message.isMeMessage,
    reactions: message.reactions.map(reactionView),
    submessages: submessagesView(state.submessages, message.id),
    sender_full_name: sender.fullName,
    sender_email: displayEmail(state, sender),
    sender_realm_str: state.stringId,
    display_recipient: recipient.kind === 'channel' ? (state.channels.get(recipient.channelId)?.name ?? '') : directRecipientsView(state, recipient.userIds),
    type: recipient.kind === 'channel' ? 'stream' : 'private',
    avatar_url: avatarUrl(sender, options.clientExtavatar),
    content_type: options.applyMarkdown ? 'text/html' : 'text/x-markdown',
  };
  if (recipient.kind === 'channel') view.stream_id = recipient.channelId;
  const history = visibleHistory(state, body);
  if (history.length) view.edit_history = history.map((entry) => historyView(entry, options.allowEmptyTopicName));
  if (message.lastEditTimestamp !== undefined) view.last_edit_timestamp = message.lastEditTimestamp;
  if (message.lastMovedTimestamp !== undefined) view.last_moved_timestamp = message.lastMovedTimestamp;
  return view;
}

function directRecipientsView(state: RealmState, userIds: readonly number[]) {
  return userIds.map((id) => {
    // The notification bot is among them in its reminders.
    const user = senderProfile(state, id);
    return { id, email: user ? displayEmail(state, user) : '', full_name: user?.fullName ?? '', is_mirror_dummy: false };
  });
}

/** One entry of GET /messages/{id}/history's answer, as the document types it. */
type Snapshot = WireResponse<'/messages/{message_id}/history', 'get'>['message_history'][number];

/**
 * GET /messages/{id}/history: the message as it was after each edit, oldest first, rebuilt by walking the
 * stored history (newest first) back from the message as it is now.
 */
function editSnapshots(message: StoredMessage, body: MessageBody, allowEmptyTopicName: boolean): Snapshot[] {
  const topicOf = (recipient: StoredMessage['recipient']) => (recipient.kind === 'channel' ? recipient.topic : '');
  let current = {
    topic: topicOf(message.recipient),
    content: body.content,
    rendered: body.renderedContent,
    stream: message.recipient.kind === 'channel' ? message.recipient.channelId : undefined,
  };
  const out: Snapshot[] = [];
  for (const entry of body.editHistory) {
    const snapshot: Snapshot = {
      topic: topicForClient(current.topic, allowEmptyTopicName), content: current.content, rendered_content: current.rendered,
      timestamp: entry.timestamp, user_id: entry.userId,
    };
    if (entry.prevContent !== undefined) Object.assign(snapshot, { prev_content: entry.prevContent, prev_rendered_content: entry.prevRenderedContent });
    if (entry.prevTopic !== undefined) snapshot.prev_topic = topicForClient(entry.prevTopic, allowEmptyTopicName);
    if (entry.prevStream !== undefined) Object.assign(snapshot, { prev_stream: entry.prevStream, stream: current.stream });
    out.push(snapshot);
    current = {
      topic: entry.prevTopic ?? current.topic,
      content: entry.prevContent ?? current.content,
      rendered: entry.prevRenderedContent ?? current.rendered,
      stream: entry.prevStream ?? current.stream,
    };
  }
  out.push({ topic: topicForClient(current.topic, allowEmptyTopicName), content: current.content, rendered_content: current.rendered, timestamp: message.timestamp, user_id: message.senderId });
  return out.reverse();
}
