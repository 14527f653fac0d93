import { z } from 'zod';
import { badRequest } from '../../actors/errors.ts';
import type { Clock } from '../../actors/realm/decide.ts';
import { decideRealm } from '../../actors/realm/decide.ts';
import type { RealmState } from '../../actors/realm/state.ts';
import type { ScheduledInput } from '../../actors/user/commands.ts';
import { requireEditable, requireFuture, requireScheduled } from '../../actors/user/decide-scheduled.ts';
import type { ScheduledMessage } from '../../actors/user/state.ts';
import { scheduledByTime } from '../../actors/user/views.ts';
import { p } from '../http/params.ts';
import { route } from './route.ts';

type Kind = ScheduledMessage['type'];

/** `direct` and `channel` are the modern names of the stored kinds (`channel` since feature level 248). */
const typeParam = p.string(z.enum(['direct', 'channel', 'stream', 'private']).transform((type): Kind => (type === 'direct' || type === 'private' ? 'private' : 'stream')));

/** A channel message goes to one channel ID, as the original reads it (an integer, not a list). */
function channelId(raw: string): number[] {
  if (!/^\s*[+-]?\d+\s*$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw badRequest('Invalid data type for channel ID');
  return [Number(raw)];
}

/** A direct message goes to a JSON list of user IDs; duplicates count once. */
function userIds(raw: string): number[] {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    value = raw;
  }
  if (!Array.isArray(value)) throw badRequest('Invalid data type for recipients');
  if (!value.every((id) => Number.isSafeInteger(id))) throw badRequest('Recipient list may only contain user IDs');
  return [...new Set(value as number[])];
}

const recipients = (type: Kind, raw: string) => (type === 'stream' ? channelId(raw) : userIds(raw));

type Checked = Pick<ScheduledInput, 'type' | 'to' | 'topic' | 'content' | 'renderedContent'>;

/**
 * A dry run of the send the timer service will make: the realm's own checks now (channel, recipients,
 * posting permission, topic and content rules, mentions), and the recipients, topic and content as the send
 * normalizes them. Nothing is committed; the checks run again at delivery.
 */
function checkSend(realm: RealmState, senderId: number, message: Omit<Checked, 'renderedContent' | 'topic'> & { topic?: string }, clock: Clock): Checked {
  const [change] = decideRealm(realm, {
    type: 'message.send',
    caller: { kind: 'user', userId: senderId },
    kind: message.type === 'stream' ? 'channel' : 'direct',
    to: message.type === 'stream' ? message.to[0]! : message.to,
    topic: message.topic,
    content: message.content,
    client: 'API',
  }, clock);
  if (change?.type !== 'message.sent') throw new Error('a send decided no message');
  const { recipient, content, renderedContent } = change.message;
  if (recipient.kind === 'channel') return { type: 'stream', to: [recipient.channelId], topic: recipient.topic, content, renderedContent };
  // As the original lists them: the other participants, or oneself for a note to self.
  const others = recipient.userIds.filter((id) => id !== senderId);
  return { type: 'private', to: others.length > 0 ? others : [senderId], topic: '', content, renderedContent };
}

const scheduledMessageId = p.int(z.number().int().min(0));

export const scheduledMessageRoutes = [
  route({
    method: 'GET',
    path: '/scheduled_messages',
    auth: 'user',
    params: {},
    handle({ services, realm, user }) {
      return { scheduled_messages: scheduledByTime(services.runtime.userState(realm.realmId, user.userId)) };
    },
  }),

  route({
    method: 'POST',
    path: '/scheduled_messages',
    auth: 'user',
    params: {
      type: typeParam,
      to: p.string(),
      content: p.string(),
      topic: p.string().optional(),
      scheduled_delivery_timestamp: p.int(),
      read_by_sender: p.bool().optional(),
    },
    async handle({ services, realm, user }, params) {
      const { clock } = services.runtime;
      requireFuture(params.scheduled_delivery_timestamp, clock);
      const to = recipients(params.type, params.to);
      const checked = checkSend(realm, user.userId, { type: params.type, to, topic: params.topic, content: params.content }, clock);
      const [change] = await services.runtime.executeUser(realm.realmId, user.userId, {
        type: 'scheduled.create',
        message: { ...checked, deliverAt: params.scheduled_delivery_timestamp, readBySender: params.read_by_sender },
      });
      return { scheduled_message_id: change?.type === 'scheduled.created' ? change.message.id : null };
    },
  }),

  route({
    method: 'PATCH',
    path: '/scheduled_messages/{scheduled_message_id}',
    auth: 'user',
    params: {
      scheduled_message_id: scheduledMessageId,
      type: typeParam.optional(),
      to: p.string().optional(),
      topic: p.string().optional(),
      content: p.string().optional(),
      scheduled_delivery_timestamp: p.int().optional(),
    },
    async handle({ services, realm, user }, params) {
      const { clock } = services.runtime;
      const { type, to, topic, content, scheduled_delivery_timestamp: deliverAt } = params;
      if (type === undefined && to === undefined && topic === undefined && content === undefined && deliverAt === undefined) {
        throw badRequest('Nothing to change');
      }
      if (type !== undefined && to === undefined) throw badRequest('Recipient required when updating type of scheduled message.');
      if (type === 'stream' && topic === undefined) throw badRequest('Topic required when updating scheduled message type to stream.');
      if (deliverAt !== undefined) requireFuture(deliverAt, clock);
      const existing = requireScheduled(services.runtime.userState(realm.realmId, user.userId), params.scheduled_message_id);
      requireEditable(existing, deliverAt !== undefined);
      const { id, failed, ...kept } = existing;
      const message: ScheduledInput = { ...kept, deliverAt: deliverAt ?? existing.deliverAt };
      // A topic for a direct message (its type kept) is ignored, as in the original.
      const topicChanges = topic !== undefined && (type ?? existing.type) === 'stream';
      if (type !== undefined || to !== undefined || content !== undefined || topicChanges) {
        // What changes is checked again with the rest, as a send now would check it (and as it was scheduled).
        const kind = type ?? existing.type;
        const checked = checkSend(realm, user.userId, {
          type: kind,
          to: to === undefined ? existing.to : recipients(kind, to),
          topic: topic ?? existing.topic,
          content: content ?? existing.content,
        }, clock);
        Object.assign(message, { type: checked.type, to: checked.to, topic: checked.topic });
        if (content !== undefined) Object.assign(message, { content: checked.content, renderedContent: checked.renderedContent });
      }
      await services.runtime.executeUser(realm.realmId, user.userId, {
        type: 'scheduled.edit',
        id,
        message,
        deliverAtGiven: deliverAt !== undefined,
      });
      return {};
    },
  }),

  route({
    method: 'DELETE',
    path: '/scheduled_messages/{scheduled_message_id}',
    auth: 'user',
    params: { scheduled_message_id: scheduledMessageId },
    async handle({ services, realm, user }, params) {
      await services.runtime.executeUser(realm.realmId, user.userId, { type: 'scheduled.delete', id: params.scheduled_message_id });
      return {};
    },
  }),
];
