import { badRequest } from '../errors.ts';

/**
 * How many of each kind of organization-wide thing one organization may have. The original keeps them in
 * PostgreSQL with no limit; here they are in memory, every registration carries them all, and any member
 * may make them (with the default permissions), so each kind is bounded well above what large organizations
 * use. Deactivated groups and emoji and archived channels count: they are kept. Only a new one is refused.
 */
export interface RealmLimits {
  userGroups: number;
  channels: number;
  customEmoji: number;
  /**
   * Invitations of each kind (email invitations, reusable links) kept. Used, revoked and expired ones are kept
   * so that their links say what became of them, until new ones need their room: then the oldest of them are
   * forgotten. Only the usable ones can fill the bound.
   */
  invitations: number;
  /**
   * Accounts: people and bots, deactivated ones included (they are kept). The notification bot, which the
   * server makes for itself, is not one of them. Every account is in memory (about 7 KB of heap) and in every
   * full registration: at 100,000 the server boots in 7 s with 0.9 GB resident and a registration is 34 MB
   * (bench/README.md); at 1,000,000 it would need more heap than Node's default limit gives.
   */
  users: number;
}

export const DEFAULT_REALM_LIMITS: RealmLimits = {
  userGroups: 5000,
  channels: 10_000,
  customEmoji: 5000,
  invitations: 10_000,
  users: 100_000,
};

/** Refuses `adding` more of a kind (one by default) when the organization has `count` of it and may have `limit`. */
export function requireRealmRoom(what: string, count: number, limit: number, adding = 1): void {
  if (count + adding <= limit) return;
  if (adding === 1) throw badRequest(`This organization already has ${limit} ${what}, the most it may have`);
  throw badRequest(`This organization has ${count} ${what} and may have at most ${limit}; these ${adding} would make ${count + adding}`);
}
