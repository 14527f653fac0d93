import { badRequest } from '../errors.ts';
import type { UserChange } from './changes.ts';
import type { PushDevice, UserState } from './state.ts';

export type PushDeviceStatus = PushDevice['status'];

/** A standard (RFC 4648) base64 text of at least one byte, as the keys and the ciphertext must be. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
/** NaCl's public keys are 32 bytes. */
const PUBLIC_KEY_BYTES = 32;
/** Devices one user may register (the original has no limit; every registration carries them all). */
export const MAX_PUSH_DEVICES = 100;

export interface PushDeviceInput {
  tokenKind: 'fcm' | 'apns';
  pushAccountId: number;
  pushPublicKey: string;
  bouncerPublicKey: string;
  encryptedPushRegistration: string;
}

/**
 * POST /mobile_push/register: the device is recorded as pending until the push service answers. Registering
 * the same account id again with the same key changes nothing (a client retrying); with another key, it
 * replaces the registration and waits for the service again.
 */
export function decideRegisterPushDevice(state: UserState, input: PushDeviceInput): UserChange[] {
  if (!Number.isSafeInteger(input.pushAccountId) || input.pushAccountId < 0) throw badRequest('Invalid push_account_id');
  if (!BASE64.test(input.pushPublicKey) || Buffer.from(input.pushPublicKey, 'base64').length !== PUBLIC_KEY_BYTES) throw badRequest('Invalid push_public_key');
  if (!BASE64.test(input.encryptedPushRegistration)) throw badRequest('Invalid encrypted_push_registration');
  if (!input.bouncerPublicKey) throw badRequest('Invalid bouncer_public_key');
  const existing = state.pushDevices.find((device) => device.pushAccountId === input.pushAccountId);
  if (existing && existing.pushPublicKey === input.pushPublicKey && existing.status !== 'failed') return [];
  if (!existing && state.pushDevices.length >= MAX_PUSH_DEVICES) throw badRequest(`You may register at most ${MAX_PUSH_DEVICES} push devices`);
  return [{
    type: 'push_device.changed',
    device: { pushAccountId: input.pushAccountId, tokenKind: input.tokenKind, pushPublicKey: input.pushPublicKey, status: 'pending', errorCode: null },
  }];
}

/** The push service's answer to a registration (src/push-registrations.ts), for the device still pending. */
export function decidePushDeviceStatus(state: UserState, pushAccountId: number, pushPublicKey: string, status: Exclude<PushDeviceStatus, 'pending'>, errorCode: string | null): UserChange[] {
  const device = state.pushDevices.find((candidate) => candidate.pushAccountId === pushAccountId);
  // Registered again meanwhile: the newer registration's answer decides.
  if (!device || device.status !== 'pending' || device.pushPublicKey !== pushPublicKey) return [];
  return [{ type: 'push_device.changed', device: { ...device, status, errorCode: status === 'failed' ? errorCode : null } }];
}

/** The API's `push_devices`: by push account id (as a string), each with its status. */
export function pushDevicesView(state: UserState): Record<string, { status: string; error_code: string | null }> {
  const out: Record<string, { status: string; error_code: string | null }> = {};
  for (const device of state.pushDevices) out[String(device.pushAccountId)] = { status: device.status, error_code: device.errorCode };
  return out;
}
