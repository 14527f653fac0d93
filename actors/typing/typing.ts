import { badRequest } from '../errors.ts';
import type { ApiEvent, Delivery } from '../events.ts';
import type { WireEventOf } from '../wire/events.ts';
import type { Channel } from '../realm/channels/state.ts';
import { settingIncludes } from '../realm/groups/state.ts';
import { canRead, messageAudience } from '../realm/messages/access.ts';
import { normalizeTopic } from '../realm/messages/limits.ts';
import { Role, type RealmState, type UserProfile } from '../realm/state.ts';
import { findAccessibleUser } from '../realm/user-access.ts';
import { displayEmail } from '../realm/email-visibility.ts';

/**
 * Typing notifications: validated against the realm, turned into events, and published without changing
 * any state (never logged, see Runtime.publish). Each goes to the users who would receive the message being
 * typed (or hear about the edit), if they have `receives_typing_notifications` on, but never back to the
 * typist. Channel typing reaches only queues with the `stream_typing_notifications` capability; that rule
 * is applied at delivery (queue/capabilities.ts).
 */

export type TypingOp = 'start' | 'stop';

/**
 * Channels with more subscribers than this get no typing notifications: each keystroke burst would fan out
 * to everyone, and in a crowd the indicator says little (the original's MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS).
 */
export const MAX_CHANNEL_SIZE_FOR_TYPING = 100;

export interface Typist {
  realm: RealmState;
  sender: UserProfile;
  /** a user's boolean setting (typing settings live in each user's actor) */
  setting(userId: number, name: string): boolean;
}

const userRef = (realm: RealmState, user: UserProfile) => ({ user_id: user.userId, email: displayEmail(realm, user) });

/** Who gets the notification: active recipients who want it, never the typist. */
function notified(typist: Typist, userIds: Iterable<number>): number[] {
  const out: number[] = [];
  for (const userId of userIds) {
    if (userId === typist.sender.userId) continue;
    if (!typist.realm.users.get(userId)?.isActive) continue;
    if (typist.setting(userId, 'receives_typing_notifications')) out.push(userId);
  }
  return out;
}

const deliver = (typist: Typist, userIds: number[], event: ApiEvent): Delivery[] =>
  userIds.length ? [{ realmId: typist.realm.realmId, audience: { kind: 'users', userIds }, event }] : [];

function requireSetting(typist: Typist, kind: 'direct' | 'channel'): void {
  const name = kind === 'direct' ? 'send_private_typing_notifications' : 'send_stream_typing_notifications';
  if (!typist.setting(typist.sender.userId, name)) {
    throw badRequest(`User has disabled typing notifications for ${kind === 'direct' ? 'direct' : 'channel'} messages`);
  }
}

/** POST /typing for a direct message: `to` names the other participants (the typist is added). */
export function directTyping(typist: Typist, op: TypingOp, to: readonly number[] | undefined): Delivery[] {
  if (to === undefined) throw badRequest("Missing 'to' argument");
  if (to.length === 0) throw badRequest("Empty 'to' list");
  requireSetting(typist, 'direct');
  const ids = [...new Set([...to, typist.sender.userId])];
  // One bad id refuses the whole request: a partial list would name a different conversation. A user the
  // typist may not access is a bad id too (no answer tells a limited guest who exists).
  const users = ids.map((id) => findAccessibleUser(typist.realm, typist.sender.userId, id) ?? badUser(id));
  const event: WireEventOf<'typing'> = { type: 'typing', op, message_type: 'direct', sender: userRef(typist.realm, typist.sender), recipients: users.map((user) => userRef(typist.realm, user)) };
  return deliver(typist, notified(typist, ids), event);
}

function badUser(id: number): never {
  throw badRequest(`Invalid user ID ${id}`);
}

/** POST /typing for a channel message: the typist must be allowed to post there. */
export function channelTyping(typist: Typist, op: TypingOp, channelId: number | undefined, topic: string | undefined): Delivery[] {
  if (channelId === undefined) throw badRequest('Missing channel ID');
  if (topic === undefined) throw badRequest('Missing topic');
  requireSetting(typist, 'channel');
  const channel = postableChannel(typist, channelId);
  const event: WireEventOf<'typing'> = {
    type: 'typing', op, message_type: 'stream', sender: userRef(typist.realm, typist.sender), stream_id: channel.id, topic: normalizeTopic(topic),
  };
  return deliver(typist, channelAudience(typist, channel.id, () => typist.realm.subscriptions.get(channel.id)?.keys() ?? []), event);
}

/** The channel, if the typist may post to it; a channel they cannot read answers like an unknown one. */
function postableChannel(typist: Typist, channelId: number): Channel {
  const { realm, sender } = typist;
  const channel = realm.channels.get(channelId);
  const subscribed = realm.subscriptions.get(channelId)?.has(sender.userId) ?? false;
  if (!channel || !(subscribed || (!channel.inviteOnly && sender.role !== Role.guest))) throw badRequest('Invalid channel ID');
  if (channel.isArchived) throw badRequest(`Not authorized to send to channel '${channel.name}'`);
  if (!settingIncludes(realm, channel.permissions.can_send_message_group, sender.userId)) {
    throw badRequest('You do not have permission to post in this channel.');
  }
  return channel;
}

/**
 * The notified members of a channel's audience, or nobody when the channel is too big for typing: the
 * audience is made only then (a message's, in a channel of 10,000, walks them all).
 */
function channelAudience(typist: Typist, channelId: number, audience: () => Iterable<number>): number[] {
  let members = 0;
  for (const userId of typist.realm.subscriptions.get(channelId)?.keys() ?? []) {
    if (typist.realm.users.get(userId)?.isActive && ++members > MAX_CHANNEL_SIZE_FOR_TYPING) return [];
  }
  return notified(typist, audience());
}

/**
 * POST /messages/{message_id}/typing: someone is editing a message. Whoever would hear about the edit gets
 * a `typing_edit_message` event.
 */
export function editTyping(typist: Typist, op: TypingOp, messageId: number): Delivery[] {
  const { realm, sender } = typist;
  const message = realm.messages.byId.get(messageId);
  if (!message || !canRead(realm, sender.userId, message)) throw badRequest('Invalid message(s)');
  const { recipient } = message;
  requireSetting(typist, recipient.kind);
  const event = (to: WireEventOf<'typing_edit_message'>['recipient']): WireEventOf<'typing_edit_message'> => ({ type: 'typing_edit_message', op, sender_id: sender.userId, message_id: message.id, recipient: to });
  if (recipient.kind === 'channel') {
    return deliver(typist, channelAudience(typist, recipient.channelId, () => messageAudience(realm, message)), event({ type: 'channel', channel_id: recipient.channelId, topic: recipient.topic }));
  }
  return deliver(typist, notified(typist, recipient.userIds), event({ type: 'direct', user_ids: [...recipient.userIds].sort((a, b) => a - b) }));
}
