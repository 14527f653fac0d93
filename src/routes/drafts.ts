import { z } from 'zod';
import type { DraftInput } from '../../actors/user/commands.ts';
import { requireSync } from '../../actors/user/decide-drafts.ts';
import { draftsByTime } from '../../actors/user/views.ts';
import { p } from '../http/params.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

// The spec's Draft shape; `id` is set by the server only, so a client sending it is refused (strict object).
const draft = z.strictObject({
  type: z.enum(['', 'stream', 'private']),
  to: z.array(z.number().int()),
  topic: z.string(),
  content: z.string(),
  timestamp: z.number().nullish(),
});
type DraftParam = z.infer<typeof draft>;

const draftId = p.int(z.number().int());

const toInput = (value: DraftParam): DraftInput => ({ type: value.type, to: value.to, topic: value.topic, content: value.content, timestamp: value.timestamp ?? undefined });

export const draftRoutes = [
  route({
    method: 'GET',
    path: '/drafts',
    auth: 'user',
    params: {},
    handle({ services, realm, user }) {
      const state = services.runtime.userState(realm.realmId, user.userId);
      requireSync(state);
      const drafts = draftsByTime(state, 'oldest');
      return { count: drafts.length, drafts } satisfies WireResponse<'/drafts', 'get'>;
    },
  }),

  route({
    method: 'POST',
    path: '/drafts',
    auth: 'user',
    params: { drafts: p.json(z.array(draft)).default([]) },
    async handle({ services, realm, user }, params) {
      const [change] = await services.runtime.executeUser(realm.realmId, user.userId, { type: 'draft.create', drafts: params.drafts.map(toInput), realm });
      return { ids: change?.type === 'draft.created' ? change.drafts.map((created) => created.id) : [] } satisfies WireResponse<'/drafts', 'post'>;
    },
  }),

  route({
    method: 'PATCH',
    path: '/drafts/{draft_id}',
    auth: 'user',
    params: { draft_id: draftId, draft: p.json(draft) },
    async handle({ services, realm, user }, params) {
      await services.runtime.executeUser(realm.realmId, user.userId, { type: 'draft.edit', id: params.draft_id, draft: toInput(params.draft), realm });
      return {} satisfies WireResponse<'/drafts/{draft_id}', 'patch'>;
    },
  }),

  route({
    method: 'DELETE',
    path: '/drafts/{draft_id}',
    auth: 'user',
    params: { draft_id: draftId },
    async handle({ services, realm, user }, params) {
      await services.runtime.executeUser(realm.realmId, user.userId, { type: 'draft.delete', id: params.draft_id });
      return {} satisfies WireResponse<'/drafts/{draft_id}', 'delete'>;
    },
  }),
];
