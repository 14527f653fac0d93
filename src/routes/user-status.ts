import { findAccessibleUser } from '../../actors/realm/user-access.ts';
import { z } from 'zod';
import { badRequest } from '../../actors/errors.ts';
import { statusView } from '../../actors/user/views.ts';
import { p } from '../http/params.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

const statusParams = {
  status_text: p.string().optional(),
  emoji_name: p.string().optional(),
  emoji_code: p.string().optional(),
  reaction_type: p.string().optional(),
};

/**
 * A user's status: set by the user (or an administrator), readable by everyone in the realm, announced to the
 * whole realm.
 */
export const userStatusRoutes = [
  route({
    method: 'POST',
    path: '/users/me/status',
    auth: 'user',
    params: { ...statusParams, away: p.bool().optional() },
    async handle({ services, realm, user }, params) {
      await services.runtime.executeUser(realm.realmId, user.userId, {
        type: 'status.update',
        status: {
          away: params.away,
          statusText: params.status_text,
          emojiName: params.emoji_name,
          emojiCode: params.emoji_code,
          reactionType: params.reaction_type,
        },
      });
      return {} satisfies WireResponse<'/users/me/status', 'post'>;
    },
  }),

  route({
    method: 'POST',
    path: '/users/{user_id}/status',
    auth: 'user',
    params: { user_id: p.int(z.number().int()), ...statusParams },
    async handle({ services, realm, user }, params) {
      // An unknown or deactivated user has no actor to take it: 'No such user', as administeredUser answers.
      await services.runtime.executeUser(realm.realmId, params.user_id, {
        type: 'status.update',
        status: { statusText: params.status_text, emojiName: params.emoji_name, emojiCode: params.emoji_code, reactionType: params.reaction_type },
        by: { userId: user.userId, realm },
      });
      return {} satisfies WireResponse<'/users/{user_id}/status', 'post'>;
    },
  }),

  route({
    method: 'GET',
    path: '/users/{user_id}/status',
    auth: 'user',
    params: { user_id: p.int(z.number().int()) },
    handle({ services, realm, user }, { user_id }) {
      const target = findAccessibleUser(realm, user.userId, user_id);
      if (!target || !target.isActive) throw badRequest('No such user');
      return { status: statusView(services.runtime.userState(realm.realmId, user_id)) } satisfies WireResponse<'/users/{user_id}/status', 'get'>;
    },
  }),
];
