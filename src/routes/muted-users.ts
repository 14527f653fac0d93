import { z } from 'zod';
import { p } from '../http/params.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

const mutedUserId = p.int(z.number().int());

export const mutedUserRoutes = [
  route({
    method: 'POST',
    path: '/users/me/muted_users/{muted_user_id}',
    auth: 'user',
    params: { muted_user_id: mutedUserId },
    async handle({ services, realm, user }, { muted_user_id }) {
      await services.runtime.executeUser(realm.realmId, user.userId, { type: 'user.mute', mutedUserId: muted_user_id, realm });
      return {} satisfies WireResponse<'/users/me/muted_users/{muted_user_id}', 'post'>;
    },
  }),

  route({
    method: 'DELETE',
    path: '/users/me/muted_users/{muted_user_id}',
    auth: 'user',
    params: { muted_user_id: mutedUserId },
    async handle({ services, realm, user }, { muted_user_id }) {
      await services.runtime.executeUser(realm.realmId, user.userId, { type: 'user.unmute', mutedUserId: muted_user_id, realm });
      return {} satisfies WireResponse<'/users/me/muted_users/{muted_user_id}', 'delete'>;
    },
  }),
];
