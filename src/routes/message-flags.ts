import { z } from 'zod';
import type { MarkReadScope } from '../../actors/realm/messages/commands.ts';
import type { AppServices } from '../services.ts';
import { p } from '../http/params.ts';
import { anchorParam, checkCounts, narrowFor, narrowParam, narrowWindow } from './message-params.ts';
import { updateFlags } from './message-edits.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

const op = p.string(z.enum(['add', 'remove']));
const count = p.int(z.number().int().min(0));

function markRead(services: AppServices, realmId: number, userId: number, scope: MarkReadScope) {
  return services.runtime.execute(realmId, { type: 'message.mark_read', caller: { kind: 'user', userId }, scope });
}

export const messageFlagRoutes = [
  route({
    method: 'POST',
    path: '/messages/flags/narrow',
    auth: 'user',
    params: { anchor: anchorParam, include_anchor: p.bool().default(true), num_before: count, num_after: count, narrow: narrowParam.default([]), op, flag: p.string() },
    async handle({ services, realm, user }, params) {
      checkCounts(params.num_before, params.num_after);
      const clauses = narrowFor(services, realm, user.userId, params.narrow);
      const window = await narrowWindow(services, realm, user.userId, clauses, { anchor: params.anchor, numBefore: params.num_before, numAfter: params.num_after, includeAnchor: params.include_anchor });
      const changed = window.ids.length ? await updateFlags(services, realm.realmId, user.userId, window.ids, params.op, params.flag) : [];
      return {
        processed_count: window.ids.length,
        updated_count: changed.length,
        first_processed_id: window.ids[0] ?? null,
        last_processed_id: window.ids[window.ids.length - 1] ?? null,
        found_oldest: window.foundOldest,
        found_newest: window.foundNewest,
      } satisfies WireResponse<'/messages/flags/narrow', 'post'>;
    },
  }),

  route({
    method: 'POST',
    path: '/mark_all_as_read',
    auth: 'user',
    params: {},
    async handle({ services, realm, user }) {
      await markRead(services, realm.realmId, user.userId, { kind: 'all' });
      return { complete: true } satisfies WireResponse<'/mark_all_as_read', 'post'>;
    },
  }),

  route({
    method: 'POST',
    path: '/mark_stream_as_read',
    auth: 'user',
    params: { stream_id: p.int(z.number().int()) },
    async handle({ services, realm, user }, params) {
      await markRead(services, realm.realmId, user.userId, { kind: 'channel', channelId: params.stream_id });
      return {} satisfies WireResponse<'/mark_stream_as_read', 'post'>;
    },
  }),

  route({
    method: 'POST',
    path: '/mark_topic_as_read',
    auth: 'user',
    params: { stream_id: p.int(z.number().int()), topic_name: p.string() },
    async handle({ services, realm, user }, params) {
      await markRead(services, realm.realmId, user.userId, { kind: 'topic', channelId: params.stream_id, topic: params.topic_name });
      return {} satisfies WireResponse<'/mark_topic_as_read', 'post'>;
    },
  }),
];
