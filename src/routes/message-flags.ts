import { setImmediate } from 'node:timers/promises';
import { z } from 'zod';
import type { MarkReadScope } from '../../actors/realm/messages/commands.ts';
import type { AppServices } from '../services.ts';
import { p } from '../http/params.ts';
import { anchorParam, MAX_MESSAGES_PER_FETCH, narrowFor, narrowParam, narrowWindow } from './message-params.ts';
import { updateFlags } from './message-edits.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

const op = p.string(z.enum(['add', 'remove']));
const count = p.int(z.number().int().min(0));

/**
 * POST /mark_*_as_read mark this many unread messages per command, newest first, each batch committed and
 * told to the user's queues on its own, with other requests answered in between (the original's batch size).
 */
const MARK_READ_BATCH = 2000;
/** Past this, mark_all_as_read tells the client `complete: false` and it asks again (the original's timeout). */
const MARK_ALL_BUDGET_MS = 50_000;

/**
 * Marks the scope's unread messages read a batch at a time; answers false where it stopped at the budget. A
 * channel's or topic's batch goes on below the last: the messages marked before it need no second look. All
 * of them asks afresh each time, as the original does, newer unread messages included.
 */
async function markRead(services: AppServices, realmId: number, userId: number, scope: MarkReadScope, budgetMs = Infinity): Promise<boolean> {
  const started = performance.now();
  let before: number | undefined;
  for (;;) {
    const [change] = await services.runtime.execute(realmId, { type: 'message.mark_read', caller: { kind: 'user', userId }, scope, limit: MARK_READ_BATCH, before });
    const marked = change?.type === 'message.flags_changed' ? change.messageIds : [];
    if (marked.length < MARK_READ_BATCH) return true;
    if (scope.kind !== 'all') before = marked[0];
    if (performance.now() - started > budgetMs) return false;
    // A commit may settle without the event loop turning (no fsync awaited): the turn is given up here.
    await setImmediate();
  }
}

/**
 * The range POST /messages/flags/narrow updates, made smaller rather than refused where it asks for more than
 * one fetch may, as the original bounds each update ("the server may decrease this"): half of the bound
 * stays for the messages before the anchor when both sides ask for much. The client goes on from
 * last_processed_id.
 */
function clampedRange(numBefore: number, numAfter: number): { numBefore: number; numAfter: number } {
  const before = Math.min(numBefore, Math.max(MAX_MESSAGES_PER_FETCH - numAfter, MAX_MESSAGES_PER_FETCH / 2));
  return { numBefore: before, numAfter: Math.min(numAfter, MAX_MESSAGES_PER_FETCH - before) };
}

export const messageFlagRoutes = [
  route({
    method: 'POST',
    path: '/messages/flags/narrow',
    auth: 'user',
    params: { anchor: anchorParam, include_anchor: p.bool().default(true), num_before: count, num_after: count, narrow: narrowParam.default([]), op, flag: p.string() },
    async handle({ services, realm, user }, params) {
      const { numBefore, numAfter } = clampedRange(params.num_before, params.num_after);
      const clauses = narrowFor(services, realm, user.userId, params.narrow);
      const window = await narrowWindow(services, realm, user.userId, clauses, { anchor: params.anchor, numBefore, numAfter, includeAnchor: params.include_anchor });
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
      return { complete: await markRead(services, realm.realmId, user.userId, { kind: 'all' }, MARK_ALL_BUDGET_MS) } satisfies WireResponse<'/mark_all_as_read', 'post'>;
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
