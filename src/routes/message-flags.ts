import { z } from 'zod';
import { badRequest } from '../../actors/errors.ts';
import { topicKey } from '../../actors/realm/messages/state.ts';
import { normalizeTopic } from '../../actors/realm/messages/limits.ts';
import { p } from '../http/params.ts';
import { anchorParam, checkCounts, narrowFor, narrowParam, narrowWindow } from './message-params.ts';
import { updateFlags } from './message-edits.ts';
import { route } from './route.ts';

const op = p.string(z.enum(['add', 'remove']));
const count = p.int(z.number().int().min(0));

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
      };
    },
  }),

  route({
    method: 'POST',
    path: '/mark_all_as_read',
    auth: 'user',
    params: {},
    async handle({ services, realm, user }) {
      const unread = [...(realm.messages.flags.unread.get(user.userId) ?? [])];
      if (unread.length) await updateFlags(services, realm.realmId, user.userId, unread, 'add', 'read');
      return { complete: true };
    },
  }),

  route({
    method: 'POST',
    path: '/mark_stream_as_read',
    auth: 'user',
    params: { stream_id: p.int(z.number().int()) },
    async handle({ services, realm, user }, params) {
      if (!realm.subscriptions.get(params.stream_id)?.has(user.userId)) throw badRequest('Invalid channel ID');
      const inChannel = new Set(realm.messages.byChannel.get(params.stream_id) ?? []);
      const unread = [...(realm.messages.flags.unread.get(user.userId) ?? [])].filter((id) => inChannel.has(id));
      if (unread.length) await updateFlags(services, realm.realmId, user.userId, unread, 'add', 'read');
      return {};
    },
  }),

  route({
    method: 'POST',
    path: '/mark_topic_as_read',
    auth: 'user',
    params: { stream_id: p.int(z.number().int()), topic_name: p.string() },
    async handle({ services, realm, user }, params) {
      if (!realm.subscriptions.get(params.stream_id)?.has(user.userId)) throw badRequest('Invalid channel ID');
      const inTopic = new Set(realm.messages.byTopic.get(topicKey(params.stream_id, normalizeTopic(params.topic_name))) ?? []);
      const unread = [...(realm.messages.flags.unread.get(user.userId) ?? [])].filter((id) => inTopic.has(id));
      if (unread.length) await updateFlags(services, realm.realmId, user.userId, unread, 'add', 'read');
      return {};
    },
  }),
];
