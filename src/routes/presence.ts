import { findAccessibleUser } from '../../actors/realm/user-access.ts';
import { z } from 'zod';
import { badRequest } from '../../actors/errors.ts';
import { presenceDeliveries } from '../../actors/presence/events.ts';
import { realmPresences, showsPresence, userPresence } from '../../actors/presence/views.ts';
import { p } from '../http/params.ts';
import { route } from './route.ts';
import { PartsFields } from '../http/envelope.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

/** The answer's `presences`, given as JSON text in parts (views.ts), with its other fields. */
const withPresences = (parts: readonly string[], fields: object) => new PartsFields(['"presences":', ...parts, `,${JSON.stringify(fields).slice(1, -1)}`]);

/**
 * Presence: clients report every minute whether their user is active or idle, and read everyone's presence
 * in the same request. Kept in memory by the runtime (actors/presence); a user coming online is announced
 * with a `presence` event.
 */
export const presenceRoutes = [
  route({
    method: 'POST',
    path: '/users/me/presence',
    auth: 'user',
    params: {
      status: p.string(),
      ping_only: p.bool().default(false),
      new_user_input: p.bool().default(false),
      slim_presence: p.bool().default(false),
      last_update_id: p.int().optional(),
      history_limit_days: p.int(z.number().int().min(0)).optional(),
    },
    handle({ services, realm, user }, params) {
      if (user.isBot) throw badRequest('This endpoint does not accept bot requests.');
      const status = params.status;
      if (status !== 'active' && status !== 'idle') throw badRequest(`Invalid status: ${status}`);
      const { runtime } = services;
      const now = runtime.clock.now() / 1000;
      // An invisible user's reports are not recorded: to everyone else they stay offline.
      if (runtime.presence.sharesPresence(realm.realmId, user.userId)) {
        const { entry, announce } = runtime.recordPresence(realm.realmId, user.userId, status, now);
        if (announce) runtime.publish(presenceDeliveries(realm, user, entry, now));
      }
      if (params.ping_only) return {};
      // Asking incrementally implies the modern format.
      const slim = params.slim_presence || params.last_update_id !== undefined;
      const { parts, lastUpdateId } = realmPresences(runtime.presence, realm, {
        slim, lastUpdateId: params.last_update_id, historyLimitDays: params.history_limit_days, now, viewerId: user.userId,
      });
      return withPresences(parts, { server_timestamp: now, presence_last_update_id: lastUpdateId } satisfies Omit<WireResponse<'/users/me/presence', 'post'>, 'presences'>);
    },
  }),

  route({
    method: 'GET',
    path: '/realm/presence',
    auth: 'user',
    params: {},
    handle({ services, realm, user }) {
      const now = services.runtime.clock.now() / 1000;
      const { parts } = realmPresences(services.runtime.presence, realm, { slim: false, now, viewerId: user.userId });
      return withPresences(parts, { server_timestamp: now } satisfies Omit<WireResponse<'/realm/presence', 'get'>, 'presences'>);
    },
  }),

  route({
    method: 'GET',
    // The router needs one name per path position: this is the API's `user_id_or_email`.
    path: '/users/{user_id}/presence',
    auth: 'user',
    params: { user_id: p.string() },
    handle({ services, realm, user }, { user_id: idOrEmail }) {
      const target = findAccessibleUser(realm, user.userId, idOrEmail);
      if (!target || !target.isActive) throw badRequest('No such user');
      if (target.isBot) throw badRequest('Presence is not supported for bot users.');
      const { presence, clock } = services.runtime;
      const entry = presence.get(realm.realmId, target.userId);
      if (!entry || !showsPresence(presence, realm, target)) throw badRequest(`No presence data for ${idOrEmail}`);
      return { presence: userPresence(entry, target, clock.now() / 1000) } satisfies WireResponse<'/users/{user_id_or_email}/presence', 'get'>;
    },
  }),
];
