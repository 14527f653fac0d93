import { z } from 'zod';
import { badRequest } from '../../actors/errors.ts';
import { findAccessibleUser } from '../../actors/realm/user-access.ts';
import { requireChannel } from '../../actors/realm/channels/decide.ts';
import { canSeeChannel } from '../../actors/realm/channels/views.ts';
import type { RealmState, UserProfile } from '../../actors/realm/state.ts';
import type { DraftInput } from '../../actors/user/commands.ts';
import { requireSync } from '../../actors/user/decide-drafts.ts';
import { draftsByTime } from '../../actors/user/views.ts';
import { p } from '../http/params.ts';
import { route } from './route.ts';
import { displayEmail } from '../../actors/realm/email-visibility.ts';

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

/**
 * A channel draft's channel must be one the user can see; direct-message recipients must be users of the
 * realm who still use it. (The count of channel IDs is the actor's rule.)
 */
function toInput(realm: RealmState, user: UserProfile, value: DraftParam): DraftInput {
  if (value.type === 'stream' && value.to.length === 1) {
    const channel = requireChannel(realm, value.to[0]!);
    if (!canSeeChannel(realm, channel, user.userId)) throw badRequest('Invalid channel ID');
  }
  if (value.type === 'private') {
    for (const id of value.to) {
      // A limited guest names only users it may access (realm/user-access.ts).
      const recipient = findAccessibleUser(realm, user.userId, id);
      if (!recipient) throw badRequest(`Invalid user ID ${id}`);
      if (!recipient.isActive) throw badRequest(`'${displayEmail(realm, recipient)}' is no longer using Zulip.`);
    }
  }
  return { type: value.type, to: value.to, topic: value.topic, content: value.content, timestamp: value.timestamp ?? undefined };
}

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
      return { count: drafts.length, drafts };
    },
  }),

  route({
    method: 'POST',
    path: '/drafts',
    auth: 'user',
    params: { drafts: p.json(z.array(draft)).default([]) },
    async handle({ services, realm, user }, params) {
      const drafts = params.drafts.map((value) => toInput(realm, user, value));
      const [change] = await services.runtime.executeUser(realm.realmId, user.userId, { type: 'draft.create', drafts });
      return { ids: change?.type === 'draft.created' ? change.drafts.map((created) => created.id) : [] };
    },
  }),

  route({
    method: 'PATCH',
    path: '/drafts/{draft_id}',
    auth: 'user',
    params: { draft_id: draftId, draft: p.json(draft) },
    async handle({ services, realm, user }, params) {
      await services.runtime.executeUser(realm.realmId, user.userId, { type: 'draft.edit', id: params.draft_id, draft: toInput(realm, user, params.draft) });
      return {};
    },
  }),

  route({
    method: 'DELETE',
    path: '/drafts/{draft_id}',
    auth: 'user',
    params: { draft_id: draftId },
    async handle({ services, realm, user }, params) {
      await services.runtime.executeUser(realm.realmId, user.userId, { type: 'draft.delete', id: params.draft_id });
      return {};
    },
  }),
];
