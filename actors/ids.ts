import { randomBytes, randomUUID } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** An API key: 32 characters of [A-Za-z0-9], as the original server issues them. */
export function newApiKey(): string {
  return randomString(32);
}

export function randomString(length: number): string {
  // 248 is the largest multiple of 62 below 256: rejecting bytes above it keeps the choice uniform.
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHANUMERIC[byte % 62];
    }
  }
  return out;
}

export const newQueueId = (): string => randomUUID();

export const isWellFormedApiKey = (key: string) => /^[A-Za-z0-9]{32}$/.test(key);
