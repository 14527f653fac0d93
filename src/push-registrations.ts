import { createHash } from 'node:crypto';
import type { PushDeviceInput } from '../actors/user/push-e2ee.ts';
import type { AppServices } from './services.ts';

/** How long the push service has to answer a registration. */
const BOUNCER_TIMEOUT_MS = 10_000;

/** The organization as the push service knows it: a UUID derived from this server's id there and the realm's. */
export function realmUuid(serverId: string, realmId: number): string {
  const hex = createHash('sha256').update(`${serverId}:${realmId}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Hands a device's encrypted registration to the push service (the original's `register_push_device_to_bouncer`)
 * and records its answer: `active`, or `failed` with the service's error code (INVALID_BOUNCER_PUBLIC_KEY,
 * REQUEST_EXPIRED, ...). The device is pending until then; each change is a `push_device` event.
 */
export async function registerWithPushService(services: AppServices, realmId: number, userId: number, input: PushDeviceInput): Promise<void> {
  const bouncer = services.config.pushBouncer!;
  let status: 'active' | 'failed' = 'failed';
  let errorCode: string | null = null;
  try {
    const response = await fetch(`${bouncer.url}/api/v1/remotes/push/e2ee/register`, {
      method: 'POST',
      headers: { Authorization: `Basic ${Buffer.from(`${bouncer.serverId}:${bouncer.serverKey}`).toString('base64')}` },
      body: new URLSearchParams({
        realm_uuid: realmUuid(bouncer.serverId, realmId),
        push_account_id: String(input.pushAccountId),
        encrypted_push_registration: input.encryptedPushRegistration,
        bouncer_public_key: input.bouncerPublicKey,
      }),
      signal: AbortSignal.timeout(BOUNCER_TIMEOUT_MS),
    });
    const body = (await response.json().catch(() => ({}))) as { result?: string; code?: string };
    if (response.ok && body.result === 'success') status = 'active';
    else errorCode = typeof body.code === 'string' ? body.code : 'BAD_REQUEST';
  } catch (error) {
    services.log.warn({ err: error, realmId, userId }, 'the push service did not answer a device registration');
  }
  await services.runtime.executeUser(realmId, userId, {
    type: 'push_device.set_status', pushAccountId: input.pushAccountId, pushPublicKey: input.pushPublicKey, status, errorCode,
  });
}
