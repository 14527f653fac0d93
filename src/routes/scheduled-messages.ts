import { z } from 'zod';
import { badRequest } from '../../actors/errors.ts';
import type { ScheduledEdit } from '../../actors/user/commands.ts';
import { requireEditable, requireFuture, requireScheduled } from '../../actors/user/decide-scheduled.ts';
import type { ScheduledMessage } from '../../actors/user/state.ts';
import { scheduledByTime } from '../../actors/user/views.ts';
import { clientName } from '../http/client-name.ts';
import { p } from '../http/params.ts';
import { changeOf } from './change-of.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

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

const scheduledMessageId = p.int(z.number().int().min(0));

export const scheduledMessageRoutes = [
  route({
    method: 'GET',
    path: '/scheduled_messages',
    auth: 'user',
    params: {},
    handle({ services, realm, user }) {
      return { scheduled_messages: scheduledByTime(services.runtime.userState(realm.realmId, user.userId)) } satisfies WireResponse<'/scheduled_messages', 'get'>;
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
      client: p.string().optional(),
    },
    async handle({ services, realm, user, request }, params) {
      // The time first, then the recipients' form, as in the original; the actor checks the rest.
      requireFuture(params.scheduled_delivery_timestamp, services.runtime.clock);
      const to = recipients(params.type, params.to);
      const changes = await services.runtime.executeUser(realm.realmId, user.userId, {
        type: 'scheduled.create',
        message: { type: params.type, to, topic: params.topic, content: params.content, deliverAt: params.scheduled_delivery_timestamp, readBySender: params.read_by_sender, client: clientName(params.client, request.userAgent) },
        realm,
      });
      return { scheduled_message_id: changeOf(changes, 'scheduled.created').message.id } satisfies WireResponse<'/scheduled_messages', 'post'>;
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
      // The time, then the message, then the recipients' form (read by the kind after the edit), as in the original.
      if (deliverAt !== undefined) requireFuture(deliverAt, clock);
      const existing = requireScheduled(services.runtime.userState(realm.realmId, user.userId), params.scheduled_message_id);
      requireEditable(existing, deliverAt !== undefined);
      const edit: ScheduledEdit = { type, to: to === undefined ? undefined : recipients(type ?? existing.type, to), topic, content, deliverAt };
      await services.runtime.executeUser(realm.realmId, user.userId, { type: 'scheduled.edit', id: existing.id, edit, realm });
      return {} satisfies WireResponse<'/scheduled_messages/{scheduled_message_id}', 'patch'>;
    },
  }),

  route({
    method: 'DELETE',
    path: '/scheduled_messages/{scheduled_message_id}',
    auth: 'user',
    params: { scheduled_message_id: scheduledMessageId },
    async handle({ services, realm, user }, params) {
      await services.runtime.executeUser(realm.realmId, user.userId, { type: 'scheduled.delete', id: params.scheduled_message_id });
      return {} satisfies WireResponse<'/scheduled_messages/{scheduled_message_id}', 'delete'>;
    },
  }),
];
