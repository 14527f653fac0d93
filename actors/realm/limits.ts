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
}

export const DEFAULT_REALM_LIMITS: RealmLimits = {
  userGroups: 5000,
  channels: 10_000,
  customEmoji: 5000,
};

/** Refuses one more of a kind when the organization has `count` of it and may have `limit`. */
export function requireRealmRoom(what: string, count: number, limit: number): void {
  if (count >= limit) throw badRequest(`This organization already has ${limit} ${what}, the most it may have`);
}
