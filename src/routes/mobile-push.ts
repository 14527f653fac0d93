import { z } from 'zod';
import { ChatError, ErrorCode } from '../../actors/errors.ts';
import { testNotificationDevices } from '../../actors/user/push-devices.ts';
import { p } from '../http/params.ts';
import { registerWithPushService } from '../push-registrations.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

/**
 * Without a push notification service configured (CHAT_PUSH_BOUNCER_URL: a bouncer this server is registered
 * with), the server answers what the original answers without one, after the same checks of the request.
 */
const notConfigured = () => new ChatError(ErrorCode.PUSH_SERVICE_NOT_CONFIGURED, 'Server is not configured to use push notification service.');

export const mobilePushRoutes = [
  route({
    method: 'POST',
    path: '/mobile_push/register',
    auth: 'user',
    params: {
      token_kind: p.string(z.enum(['fcm', 'apns'])),
      push_account_id: p.int(),
      push_public_key: p.string(),
      bouncer_public_key: p.string(),
      encrypted_push_registration: p.string(),
    },
    async handle({ services, realm, user }, params) {
      if (!services.config.pushBouncer) throw notConfigured();
      const input = {
        tokenKind: params.token_kind as 'fcm' | 'apns',
        pushAccountId: params.push_account_id,
        pushPublicKey: params.push_public_key,
        bouncerPublicKey: params.bouncer_public_key,
        encryptedPushRegistration: params.encrypted_push_registration,
      };
      const changes = await services.runtime.executeUser(realm.realmId, user.userId, { type: 'push_device.register', ...input });
      // The push service answers later: the device is pending until then (a `push_device` event tells the outcome).
      if (changes.length) {
        void registerWithPushService(services, realm.realmId, user.userId, input).catch((error: unknown) =>
          services.log.warn({ err: error, realmId: realm.realmId, userId: user.userId }, 'push device registration outcome not recorded'));
      }
      return {} satisfies WireResponse<'/mobile_push/register', 'post'>;
    },
  }),

  route({
    method: 'POST',
    path: '/mobile_push/test_notification',
    auth: 'user',
    params: { token: p.string().optional() },
    handle({ services, realm, user }, { token }) {
      testNotificationDevices(services.runtime.userState(realm.realmId, user.userId), token);
      throw notConfigured();
    },
  }),

  route({
    method: 'POST',
    path: '/mobile_push/e2ee/test_notification',
    auth: 'user',
    params: { push_account_id: p.int().optional() },
    handle() {
      // E2EE devices are registered through the push service (POST /mobile_push/register): without one, none is.
      throw new ChatError(ErrorCode.NO_ACTIVE_PUSH_DEVICE, 'No active registered push device');
    },
  }),
];
