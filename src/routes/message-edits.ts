import { z } from 'zod';
import { badRequest } from '../../actors/errors.ts';
import type { MessageChange } from '../../actors/realm/messages/changes.ts';
import { normalizeTopic } from '../../actors/realm/messages/limits.ts';
import { attachmentView } from '../../actors/realm/attachments/views.ts';
import type { ReactionType } from '../../actors/realm/messages/state.ts';
import { p } from '../http/params.ts';
import type { AppServices } from '../services.ts';
import { botDomain } from './bots.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

const messageId = p.int(z.number().int());
const reactionType = p.string(z.enum(['unicode_emoji', 'realm_emoji', 'svc_extra_emoji']));

/** delete_topic works in batches, newest first, and stops after this long (the client repeats the call). */
const DELETE_TOPIC_BATCH = 1000;
const DELETE_TOPIC_BUDGET_MS = 10_000;

export const messageEditRoutes = [
  route({
    method: 'PATCH',
    path: '/messages/{message_id}',
    auth: 'user',
    params: {
      message_id: messageId,
      topic: p.string().optional(),
      subject: p.string().optional(),
      propagate_mode: p.string(z.enum(['change_one', 'change_later', 'change_all'])).default('change_one'),
      send_notification_to_old_thread: p.bool().default(false),
      send_notification_to_new_thread: p.bool().default(true),
      content: p.string().optional(),
      stream_id: p.int(z.number().int()).optional(),
      prev_content_sha256: p.string().optional(),
    },
    async handle({ services, realm, user }, params) {
      const changes = await services.runtime.execute(realm.realmId, {
        type: 'message.edit',
        caller: { kind: 'user', userId: user.userId },
        messageId: params.message_id,
        content: params.content,
        topic: params.topic ?? params.subject,
        channelId: params.stream_id,
        propagateMode: params.propagate_mode,
        notifyOldThread: params.send_notification_to_old_thread,
        notifyNewThread: params.send_notification_to_new_thread,
        botDomain: botDomain(services, realm),
        prevContentSha256: params.prev_content_sha256,
      });
      const edited = changes.find((change) => change.type === 'message.edited');
      const detached = edited?.type === 'message.edited' ? (edited.detachedAttachmentIds ?? []) : [];
      return {
        detached_uploads: detached.flatMap((id) => {
          const attachment = realm.attachments.byId.get(id);
          return attachment ? [attachmentView(realm, attachment)] : [];
        }),
      } satisfies WireResponse<'/messages/{message_id}', 'patch'>;
    },
  }),

  route({
    method: 'DELETE',
    path: '/messages/{message_id}',
    auth: 'user',
    params: { message_id: messageId },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, { type: 'message.delete', caller: { kind: 'user', userId: user.userId }, messageId: params.message_id });
      return {} satisfies WireResponse<'/messages/{message_id}', 'delete'>;
    },
  }),

  route({
    method: 'POST',
    path: '/streams/{stream_id}/delete_topic',
    auth: 'user',
    params: { stream_id: p.int(z.number().int()), topic_name: p.string() },
    async handle({ services, realm, user }, params) {
      const started = Date.now();
      const topic = normalizeTopic(params.topic_name);
      for (;;) {
        const changes = await services.runtime.execute(realm.realmId, {
          type: 'topic.delete', caller: { kind: 'user', userId: user.userId }, channelId: params.stream_id, topic, limit: DELETE_TOPIC_BATCH,
        });
        if (changes.length === 0) return { complete: true } satisfies WireResponse<'/streams/{stream_id}/delete_topic', 'post'>;
        if (Date.now() - started > DELETE_TOPIC_BUDGET_MS) return { complete: false } satisfies WireResponse<'/streams/{stream_id}/delete_topic', 'post'>;
      }
    },
  }),

  route({
    method: 'POST',
    path: '/messages/{message_id}/reactions',
    auth: 'user',
    params: { message_id: messageId, emoji_name: p.string(), emoji_code: p.string().optional(), reaction_type: reactionType.optional() },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, {
        type: 'reaction.add',
        caller: { kind: 'user', userId: user.userId },
        messageId: params.message_id,
        reaction: { emojiName: params.emoji_name, emojiCode: params.emoji_code, reactionType: params.reaction_type as ReactionType | undefined },
      });
      return {} satisfies WireResponse<'/messages/{message_id}/reactions', 'post'>;
    },
  }),

  route({
    method: 'DELETE',
    path: '/messages/{message_id}/reactions',
    auth: 'user',
    params: { message_id: messageId, emoji_name: p.string().optional(), emoji_code: p.string().optional(), reaction_type: reactionType.optional() },
    async handle({ services, realm, user }, params) {
      if (params.emoji_name === undefined && params.emoji_code === undefined) {
        throw badRequest('At least one of the following arguments must be present: emoji_name, emoji_code');
      }
      await services.runtime.execute(realm.realmId, {
        type: 'reaction.remove',
        caller: { kind: 'user', userId: user.userId },
        messageId: params.message_id,
        reaction: { emojiName: params.emoji_name ?? '', emojiCode: params.emoji_code, reactionType: params.reaction_type as ReactionType | undefined },
      });
      return {} satisfies WireResponse<'/messages/{message_id}/reactions', 'delete'>;
    },
  }),

  route({
    method: 'POST',
    path: '/messages/flags',
    auth: 'user',
    params: { messages: p.json(z.array(z.number().int())), op: p.string(z.enum(['add', 'remove'])), flag: p.string() },
    async handle({ services, realm, user }, params) {
      const changed = await updateFlags(services, realm.realmId, user.userId, params.messages, params.op, params.flag);
      return { messages: changed } satisfies WireResponse<'/messages/flags', 'post'>;
    },
  }),
];

export async function updateFlags(services: AppServices, realmId: number, userId: number, ids: number[], op: 'add' | 'remove', flag: string): Promise<number[]> {
  const changes: MessageChange[] = (await services.runtime.execute(realmId, { type: 'message.flags', caller: { kind: 'user', userId }, messageIds: ids, op, flag })) as MessageChange[];
  const change = changes[0];
  return change?.type === 'message.flags_changed' ? change.messageIds : [];
}
