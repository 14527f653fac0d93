import { z } from 'zod';
import { badRequest, ChatError, ErrorCode } from '../../actors/errors.ts';
import { renderMessage } from '../../actors/realm/messages/render.ts';
import { idMatcher } from '../../actors/realm/messages/narrow.ts';
import { hasSearch, searchFilter } from '../../actors/realm/messages/search.ts';
import { canRead } from '../../actors/realm/messages/access.ts';
import { clientName } from '../http/client-name.ts';
import { encodedFields } from '../http/envelope.ts';
import { p } from '../http/params.ts';
import {
  anchorParam, checkCounts, writeFetchedMessage, writeFetchedMessages, messageIdsParam, narrowFor, narrowParam, narrowWindow, searchMatch,
} from './message-params.ts';
import { searchWords } from '../../actors/realm/messages/narrow.ts';
import { messageHistoryView } from '../../actors/realm/messages/views.ts';
import { changeOf } from './change-of.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

const messageId = p.int(z.number().int());

/** `to` of POST /messages: a channel id or name, or direct recipients (JSON list, or comma-separated emails). */
function parseTo(raw: string): number | string | (number | string)[] {
  try {
    const value: unknown = JSON.parse(raw);
    if (typeof value === 'number' && Number.isInteger(value)) return value;
    if (typeof value === 'string') return value;
    if (Array.isArray(value) && value.every((entry) => typeof entry === 'string' || Number.isInteger(entry))) return value as (number | string)[];
  } catch {
    // not JSON: a plain channel name or email list
  }
  return raw;
}

export const messageRoutes = [
  route({
    method: 'POST',
    path: '/messages',
    auth: 'user',
    params: {
      type: p.string(z.enum(['stream', 'channel', 'direct', 'private'])),
      to: p.string(),
      topic: p.string().optional(),
      subject: p.string().optional(),
      content: p.string(),
      queue_id: p.string().optional(),
      local_id: p.string().optional(),
      read_by_sender: p.bool().optional(),
      client: p.string().optional(),
    },
    async handle({ services, realm, user, request }, params) {
      const changes = await services.runtime.execute(realm.realmId, {
        type: 'message.send',
        caller: { kind: 'user', userId: user.userId },
        kind: params.type === 'stream' || params.type === 'channel' ? 'channel' : 'direct',
        to: parseTo(params.to),
        topic: params.topic ?? params.subject,
        content: params.content,
        client: clientName(params.client, request.userAgent),
        readBySender: params.read_by_sender,
        localEcho: params.queue_id !== undefined && params.local_id !== undefined ? { queueId: params.queue_id, localId: params.local_id } : undefined,
      });
      return { id: changeOf(changes, 'message.sent').message.id } satisfies WireResponse<'/messages', 'post'>;
    },
  }),

  route({
    method: 'GET',
    path: '/messages',
    auth: 'user',
    params: {
      anchor: anchorParam.optional(),
      use_first_unread_anchor: p.bool().default(false),
      num_before: p.int(z.number().int().min(0)).optional(),
      num_after: p.int(z.number().int().min(0)).optional(),
      include_anchor: p.bool().default(true),
      narrow: narrowParam.default([]),
      message_ids: messageIdsParam.optional(),
      apply_markdown: p.bool().default(true),
      client_extavatar: p.bool().default(true),
      allow_empty_topic_name: p.bool().default(false),
    },
    async handle({ services, realm, user }, params) {
      const clauses = narrowFor(services, realm, user.userId, params.narrow);
      const search = hasSearch(clauses) ? services.runtime.searchIndex() : null;
      const options = { applyMarkdown: params.apply_markdown, clientExtavatar: params.client_extavatar, allowEmptyTopicName: params.allow_empty_topic_name };
      const words = searchWords(clauses);
      if (params.message_ids !== undefined) {
        if (params.anchor !== undefined || params.num_before !== undefined || params.num_after !== undefined) {
          throw badRequest("Unsupported parameter combination: message_ids with anchor, num_before or num_after");
        }
        const readable = idMatcher(realm, user.userId, clauses);
        let ids = [...new Set(params.message_ids)].sort((a, b) => a - b).filter(readable);
        if (search) ids = (await searchFilter(search, realm.realmId, clauses, ids)).filter(readable);
        return encodedFields((out) => {
          writeFetchedMessages(out, realm, user.userId, ids, options, words);
          out.raw(',"history_limited":false');
        });
      }
      // The legacy flag wins over an anchor sent beside it, as in the original: old clients send anchor=0 with it.
      const requested = params.use_first_unread_anchor ? 'first_unread' : params.anchor;
      if (requested === undefined) throw new ChatError(ErrorCode.REQUEST_VARIABLE_MISSING, "Missing 'anchor' argument", 400, { var_name: 'anchor' });
      if (params.num_before === undefined) throw new ChatError(ErrorCode.REQUEST_VARIABLE_MISSING, "Missing 'num_before' argument", 400, { var_name: 'num_before' });
      if (params.num_after === undefined) throw new ChatError(ErrorCode.REQUEST_VARIABLE_MISSING, "Missing 'num_after' argument", 400, { var_name: 'num_after' });
      checkCounts(params.num_before, params.num_after);
      const window = await narrowWindow(services, realm, user.userId, clauses, { anchor: requested, numBefore: params.num_before, numAfter: params.num_after, includeAnchor: params.include_anchor });
      // The messages are written as JSON apart (writeFetchedMessages); the other keys are checked here.
      const fields = { anchor: window.anchor, found_anchor: window.foundAnchor, found_oldest: window.foundOldest, found_newest: window.foundNewest, history_limited: false } satisfies Omit<WireResponse<'/messages', 'get'>, 'messages'>;
      return encodedFields((out) => {
        writeFetchedMessages(out, realm, user.userId, window.ids, options, words);
        out.raw(`,${JSON.stringify(fields).slice(1, -1)}`);
      });
    },
  }),

  route({
    method: 'GET',
    path: '/messages/{message_id}',
    auth: 'user',
    params: { message_id: messageId, apply_markdown: p.bool().default(true), allow_empty_topic_name: p.bool().default(false) },
    handle({ realm, user }, params) {
      const message = realm.messages.byId.get(params.message_id);
      if (!message || !canRead(realm, user.userId, message)) throw badRequest('Invalid message(s)');
      const options = { applyMarkdown: params.apply_markdown, clientExtavatar: false, allowEmptyTopicName: params.allow_empty_topic_name };
      return encodedFields((out) => {
        out.raw('"message":');
        writeFetchedMessage(out, realm, user.userId, message, options, []);
        out.raw(',"raw_content":');
        out.string(realm.messages.bodies.of(message).content);
      });
    },
  }),

  route({
    method: 'GET',
    path: '/messages/{message_id}/history',
    auth: 'user',
    params: { message_id: messageId, allow_empty_topic_name: p.bool().default(false) },
    handle({ realm, user }, params) {
      const message = realm.messages.byId.get(params.message_id);
      if (!message || !canRead(realm, user.userId, message)) throw badRequest('Invalid message(s)');
      return { message_history: messageHistoryView(realm, message, params.allow_empty_topic_name) } satisfies WireResponse<'/messages/{message_id}/history', 'get'>;
    },
  }),

  route({
    method: 'GET',
    path: '/messages/matches_narrow',
    auth: 'user',
    params: { msg_ids: messageIdsParam, narrow: narrowParam },
    async handle({ services, realm, user }, params) {
      const clauses = narrowFor(services, realm, user.userId, params.narrow);
      const words = searchWords(clauses);
      const readable = idMatcher(realm, user.userId, clauses);
      let ids = params.msg_ids.filter(readable);
      if (hasSearch(clauses)) ids = (await searchFilter(services.runtime.searchIndex(), realm.realmId, clauses, ids)).filter(readable);
      const messages: Record<string, ReturnType<typeof searchMatch>> = {};
      for (const id of ids) messages[id] = searchMatch(realm, realm.messages.byId.get(id)!, words);
      return { messages } satisfies WireResponse<'/messages/matches_narrow', 'get'>;
    },
  }),

  route({
    method: 'POST',
    path: '/messages/render',
    auth: 'user',
    params: { content: p.string() },
    handle({ realm, user }, params) {
      return { rendered: renderMessage(realm, user.userId, params.content).html } satisfies WireResponse<'/messages/render', 'post'>;
    },
  }),
];
