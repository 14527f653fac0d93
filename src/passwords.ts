import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as common from '@zxcvbn-ts/language-common';

// scrypt parameters: about 50 ms per hash on one core here; stored with the hash so they can be raised.
const COST = { N: 16384, r: 8, p: 1 };
const KEY_LENGTH = 32;

/** The original server's limits (password_min_length, password_max_length, password_min_guesses). */
export const PASSWORD_MIN_LENGTH = 6;
export const PASSWORD_MAX_LENGTH = 100;
export const PASSWORD_MIN_GUESSES = 10_000;

const strength = new ZxcvbnFactory({ dictionary: common.dictionary, graphs: common.adjacencyGraphs });

function derive(password: string, salt: Buffer, options: ScryptOptions, length: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, length, { ...options, maxmem: 64 * 1024 * 1024 }, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, COST, KEY_LENGTH);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parts = stored?.split('$') ?? [];
  if (parts.length !== 6 || parts[0] !== 'scrypt') {
    // Spend the same time as a real check, so a missing account is not told apart by timing.
    await derive(password, randomBytes(16), COST, KEY_LENGTH);
    return false;
  }
  const [, N, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(hash, 'base64');
  const actual = await derive(password, Buffer.from(salt, 'base64'), { N: +N, r: +r, p: +p }, expected.length);
  return timingSafeEqual(actual, expected);
}

/** Why a new password is refused, or null when it is acceptable. */
export async function passwordWeakness(password: string, userInputs: string[]): Promise<string | null> {
  if (password.length < PASSWORD_MIN_LENGTH) return `Password is too short (at least ${PASSWORD_MIN_LENGTH} characters)`;
  if (password.length > PASSWORD_MAX_LENGTH) return `Password is too long (at most ${PASSWORD_MAX_LENGTH} characters)`;
  const { guesses } = await strength.checkAsync(password, userInputs);
  return guesses < PASSWORD_MIN_GUESSES ? 'The password is too weak.' : null;
}
