import { z } from 'zod';
import { badRequest } from '../../actors/errors.ts';
import type { RealmState } from '../../actors/realm/state.ts';
import { findAccessibleUser } from '../../actors/realm/user-access.ts';
import { p } from '../http/params.ts';
import { route } from './route.ts';

const mutedUserId = p.int(z.number().int());

/** Only an active user can be muted; a deactivated one can still be unmuted. A limited guest names only users it may access. */
function requireUser(realm: RealmState, viewerId: number, userId: number, allowDeactivated: boolean): void {
  const user = findAccessibleUser(realm, viewerId, userId);
  if (!user || (!user.isActive && !allowDeactivated)) throw badRequest('No such user');
}

export const mutedUserRoutes = [
  route({
    method: 'POST',
    path: '/users/me/muted_users/{muted_user_id}',
    auth: 'user',
    params: { muted_user_id: mutedUserId },
    async handle({ services, realm, user }, { muted_user_id }) {
      // Muting oneself is refused before the lookup, as in the original.
      if (muted_user_id !== user.userId) requireUser(realm, user.userId, muted_user_id, false);
      await services.runtime.executeUser(realm.realmId, user.userId, { type: 'user.mute', mutedUserId: muted_user_id });
      return {};
    },
  }),

  route({
    method: 'DELETE',
    path: '/users/me/muted_users/{muted_user_id}',
    auth: 'user',
    params: { muted_user_id: mutedUserId },
    async handle({ services, realm, user }, { muted_user_id }) {
      requireUser(realm, user.userId, muted_user_id, true);
      await services.runtime.executeUser(realm.realmId, user.userId, { type: 'user.unmute', mutedUserId: muted_user_id });
      return {};
    },
  }),
];
