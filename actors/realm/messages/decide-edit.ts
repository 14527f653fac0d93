import { createHash } from 'node:crypto';
import type { GroupSetting } from '../groups/state.ts';
import { badRequest, ChatError, ErrorCode } from '../../errors.ts';
import type { Channel } from '../channels/state.ts';
import { canSeeChannel } from '../channels/views.ts';
import type { Clock } from '../decide.ts';
import { allowed } from '../permissions.ts';
import { Role, type RealmState, type UserProfile } from '../state.ts';
import { canRead, readsChannelHistory } from './access.ts';
import type { FirstMessageIds, MessageChange, MoveEdit } from './changes.ts';
import type { MessageCommand } from './commands.ts';
import { callerUser, nowSeconds, readableMessage } from './decide.ts';
import { detachedAttachmentIds, linkedAttachmentIds } from '../attachments/decide.ts';
import { renderContent } from './decide-send.ts';
import { topicsRequired } from '../settings/state.ts';
import { EDIT_LIMIT_BUFFER_SECONDS, normalizeContent, normalizeTopic, RESOLVED_TOPIC_PREFIX, TOPICS_REQUIRED } from './limits.ts';
import { firstIdNotIn, topicKey, type StoredMessage } from './state.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

type Edit = Extract<MessageCommand, { type: 'message.edit' }>;

const noPermission = () => badRequest("You don't have permission to edit this message");
/** Administrators and moderators move messages without time limits. */
const unlimited = (user: UserProfile) => user.role <= Role.moderator;

export function decideEdit(state: RealmState, command: Edit, clock: Clock): MessageChange[] {
  const editor = callerUser(state, command.caller);
  const message = readableMessage(state, editor.userId, command.messageId);
  if (command.prevContentSha256 !== undefined && sha256(state.messages.bodies.of(message).content) !== command.prevContentSha256) {
    throw badRequest("'prev_content_sha256' value does not match the expected value.");
  }
  const now = nowSeconds(clock);
  if (command.content !== undefined && command.channelId !== undefined) throw badRequest('Cannot change message content while changing channel');
  if (message.recipient.kind === 'direct') {
    if (command.topic !== undefined) throw badRequest('Direct messages cannot have topics.');
    if (command.channelId !== undefined) throw badRequest('Direct messages cannot be moved to channels.');
  }
  const move = message.recipient.kind === 'channel' ? planMove(state, editor, message, command, now) : undefined;
  if (command.content === undefined && !move) throw badRequest('Nothing to change');
  if (!move && command.propagateMode !== 'change_one') throw badRequest('Invalid propagate_mode without topic edit');
  const change: Extract<MessageChange, { type: 'message.edited' }> = {
    type: 'message.edited',
    editorId: editor.userId,
    at: now,
    targetId: message.id,
    messageIds: [message.id],
    propagateMode: command.propagateMode,
    firstMessageIds: [],
  };
  if (command.content !== undefined) {
    // The realm's settings bind everyone, administrators included (as in the original).
    const { allow_message_editing: editingAllowed, message_content_edit_limit_seconds: limit } = state.settings;
    if (!editingAllowed) throw badRequest('Your organization has turned off message editing');
    if (message.senderId !== editor.userId) throw noPermission();
    if (state.submessages.byMessage.has(message.id)) throw badRequest('Widgets cannot be edited.');
    if (limit !== null && now > message.timestamp + limit + EDIT_LIMIT_BUFFER_SECONDS) {
      throw badRequest('The time limit for editing this message has passed');
    }
    const recipient = move ? { kind: 'channel' as const, channelId: move.edit.toChannelId, topic: move.edit.toTopic } : message.recipient;
    const content = normalizeContent(command.content);
    change.content = renderContent(state, editor, recipient, content, message.userIds);
    linkAttachments(state, editor, message, content, change);
  }
  if (move) {
    change.move = move.edit;
    change.messageIds = move.ids;
    change.firstMessageIds = move.firstMessageIds;
  }
  return [change];
}

interface PlannedMove {
  edit: MoveEdit;
  ids: number[];
  firstMessageIds: FirstMessageIds;
}

/** Checks a topic or channel change and picks the messages it moves; undefined when nothing moves. */
function planMove(state: RealmState, editor: UserProfile, message: StoredMessage, command: Edit, now: number): PlannedMove | undefined {
  if (message.recipient.kind !== 'channel') return undefined;
  const from = message.recipient;
  const toTopic = command.topic === undefined ? from.topic : normalizeTopic(command.topic);
  const target = command.channelId === undefined || command.channelId === from.channelId ? undefined : targetChannel(state, editor, command.channelId);
  const topicChanged = toTopic !== from.topic;
  if (!topicChanged && !target) return undefined;
  if (command.topic !== undefined && toTopic === '' && topicsRequired(state.settings)) throw badRequest(TOPICS_REQUIRED);
  const resolveOnly = !target && (toTopic === RESOLVED_TOPIC_PREFIX + from.topic || from.topic === RESOLVED_TOPIC_PREFIX + toTopic);
  if (resolveOnly && toTopic === RESOLVED_TOPIC_PREFIX) throw badRequest('The empty string topic cannot be marked as resolved.');
  // The channel's own settings (feature levels 396 and 402) add to the organization's; its administrators move freely.
  const source = state.channels.get(from.channelId)!;
  const inChannel = (setting: GroupSetting) => allowed(state, setting, editor.userId);
  const channelAdmin = inChannel(source.permissions.can_administer_channel_group);
  const mayChangeTopic = resolveOnly
    ? allowed(state, 'can_resolve_topics_group', editor.userId) || inChannel(source.permissions.can_resolve_topics_group)
    : allowed(state, 'can_move_messages_between_topics_group', editor.userId) || inChannel(source.permissions.can_move_messages_within_channel_group) || channelAdmin;
  if (topicChanged && !mayChangeTopic) throw noPermission();
  const mayMoveOut = allowed(state, 'can_move_messages_between_channels_group', editor.userId) || inChannel(source.permissions.can_move_messages_out_of_channel_group) || channelAdmin;
  if (target && !mayMoveOut) throw badRequest("You don't have permission to move this message");
  const limit = target ? state.settings.move_messages_between_streams_limit_seconds : state.settings.move_messages_within_stream_limit_seconds;
  const limited = limit !== null && !resolveOnly && !unlimited(editor);
  if (limited && now - message.timestamp > limit) {
    throw badRequest(target ? "The time limit for editing this message's channel has passed" : "The time limit for editing this message's topic has passed");
  }
  const ids = movedIds(state, editor, message, command.propagateMode, limited ? now - limit : null);
  const toChannelId = target?.id ?? from.channelId;
  const edit: MoveEdit = { fromChannelId: from.channelId, fromTopic: from.topic, toChannelId, toTopic, resolveOnly, lostAccess: [], gained: [] };
  if (target) {
    // Messages of a channel share holder lists: each list is walked once (per message, a topic of 10,000 in a
    // channel of 2,000 walked 20,000,000 holders).
    const holders = new Set<number>();
    const walked = new Set<readonly number[]>();
    for (const id of ids) {
      const list = state.messages.byId.get(id)!.userIds;
      if (walked.has(list)) continue;
      walked.add(list);
      for (const userId of list) holders.add(userId);
    }
    const subscribers = state.subscriptions.get(target.id) ?? new Map();
    edit.lostAccess = [...holders].filter((userId) => !subscribers.has(userId) && (target.inviteOnly || state.users.get(userId)?.role === Role.guest)).sort((a, b) => a - b);
    edit.gained = [...subscribers.keys()].sort((a, b) => a - b);
  }
  return { edit, ids, firstMessageIds: target ? firstIdsAfterMove(state, from.channelId, target.id, ids) : [] };
}

function targetChannel(state: RealmState, editor: UserProfile, channelId: number): Channel {
  const channel = state.channels.get(channelId);
  if (!channel || !canSeeChannel(state, channel, editor.userId)) throw badRequest('Invalid channel ID');
  if (channel.isArchived) throw badRequest(`Channel '${channel.name}' is archived.`);
  return channel;
}

/**
 * The messages a move takes along, limited to those the editor can read (a private channel's protected
 * history counts only what the editor received). With `change_all` under a time limit, the whole topic must
 * be recent enough, or the error says how much of it may move.
 */
function movedIds(state: RealmState, editor: UserProfile, message: StoredMessage, mode: Edit['propagateMode'], oldestAllowed: number | null): number[] {
  if (mode === 'change_one' || message.recipient.kind !== 'channel') return [message.id];
  // A move of the whole topic walks it whole (every segment): the move itself touches every message.
  const all = state.messages.byTopic.get(topicKey(message.recipient.channelId, message.recipient.topic));
  // An editor who reads the channel's whole history reads each of its messages: none is looked up.
  const channel = state.channels.get(message.recipient.channelId);
  const readsAll = !!channel && readsChannelHistory(state, channel, editor.userId);
  const readable = !all ? [] : readsAll ? [...all] : [...all].filter((id) => canRead(state, editor.userId, state.messages.byId.get(id)!));
  if (mode === 'change_later') return readable.filter((id) => id >= message.id);
  if (oldestAllowed !== null) {
    const allowedIds = readable.filter((id) => state.messages.byId.get(id)!.timestamp >= oldestAllowed);
    if (allowedIds.length < readable.length) {
      throw new ChatError(
        ErrorCode.MOVE_MESSAGES_TIME_LIMIT_EXCEEDED,
        `You only have permission to move the ${allowedIds.length}/${readable.length} most recent messages in this topic.`,
        400,
        { first_message_id_allowed_to_move: allowedIds[0] ?? null, total_messages_in_topic: readable.length, total_messages_allowed_to_move: allowedIds.length },
      );
    }
  }
  return readable;
}

/** The oldest message of both channels once `ids` moved from one to the other, where it changes. */
function firstIdsAfterMove(state: RealmState, fromId: number, toId: number, ids: number[]): FirstMessageIds {
  const moved = new Set(ids);
  const out: FirstMessageIds = [];
  const oldFirst = firstIdNotIn(state.messages.byChannel.get(fromId), moved);
  if (oldFirst !== state.channels.get(fromId)?.firstMessageId) out.push([fromId, oldFirst]);
  const current = state.channels.get(toId)?.firstMessageId ?? null;
  const newFirst = current === null ? ids[0]! : Math.min(current, ids[0]!);
  if (newFirst !== current) out.push([toId, newFirst]);
  return out;
}

/** The files the new content links, and those the edit unlinks (`detached_uploads`: the editor's left unlinked). */
function linkAttachments(state: RealmState, editor: UserProfile, message: StoredMessage, content: string, change: Extract<MessageChange, { type: 'message.edited' }>): void {
  const after = linkedAttachmentIds(state, editor, content);
  if (after.length) change.content!.attachmentIds = after;
  const unlinked = (message.attachmentIds ?? []).filter((id) => !after.includes(id));
  if (!unlinked.length) return;
  change.unlinkedAttachmentIds = unlinked;
  const detached = detachedAttachmentIds(state, editor.userId, message, after);
  if (detached.length) change.detachedAttachmentIds = detached;
}
