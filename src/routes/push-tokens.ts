import { z } from 'zod';
import { p } from '../http/params.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

// The original accepts app IDs of this form (reverse-domain bundle identifiers).
const appid = z.string().regex(/^[.a-zA-Z0-9-]+$/, 'Invalid app ID');

/**
 * Mobile push device tokens, under one path for the original's two (`apns_device_token` with an `appid`,
 * `android_gcm_reg_id` for FCM without): registered and removed by the device; nothing is announced.
 */
export const pushTokenRoutes = [
  route({
    method: 'POST',
    path: '/users/me/push_device_token',
    auth: 'user',
    params: { token: p.string(), appid: p.string(appid).optional() },
    async handle({ services, realm, user }, { token, appid }) {
      await services.runtime.executeUser(realm.realmId, user.userId, { type: 'push_token.add', token, appid: appid ?? null });
      return {} satisfies WireResponse<'/users/me/push_device_token', 'post'> & WireResponse<'/users/me/push_device_token (fcm)', 'post'>;
    },
  }),

  route({
    method: 'DELETE',
    path: '/users/me/push_device_token',
    auth: 'user',
    params: { token: p.string() },
    async handle({ services, realm, user }, { token }) {
      await services.runtime.executeUser(realm.realmId, user.userId, { type: 'push_token.remove', token });
      return {} satisfies WireResponse<'/users/me/push_device_token', 'delete'> & WireResponse<'/users/me/push_device_token (fcm)', 'delete'>;
    },
  }),
];
