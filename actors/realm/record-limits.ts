import { fillsBound, type Invitation } from './invitations/state.ts';
import type { RealmLimits } from './limits.ts';
import { MAX_PROFILE_FIELDS } from './profile-fields/decide.ts';
import type { RealmRecord } from './state.ts';

/** A kind of thing an organization's record holds more of than the server lets an organization have. */
export interface Excess {
  what: string;
  count: number;
  limit: number;
  /** the RealmLimits field that sets the bound; null: a bound of the server's own, not configured */
  bound: keyof RealmLimits | null;
}

/**
 * What a whole organization brought in at once (import-realm) holds past `limits`, counted as the commands
 * that make each kind count it (requireRealmRoom): kept ones included, but for invitations only the usable
 * ones, of each kind apart. `now`: UNIX ms, for the invitations' expiry. Empty: within every bound.
 */
export function realmRecordExcess(record: RealmRecord, limits: RealmLimits, now: number): Excess[] {
  const counted: Excess[] = [
    { what: 'accounts (bots and deactivated ones included)', count: record.users.length, limit: limits.users, bound: 'users' },
    { what: 'channels (archived ones included)', count: record.channels.length, limit: limits.channels, bound: 'channels' },
    { what: 'user groups (system groups and deactivated ones included)', count: record.groups.length, limit: limits.userGroups, bound: 'userGroups' },
    { what: 'custom emoji (deactivated ones included)', count: record.emoji?.emoji.length ?? 0, limit: limits.customEmoji, bound: 'customEmoji' },
    { what: 'custom profile fields', count: record.profileFields?.fields.length ?? 0, limit: MAX_PROFILE_FIELDS, bound: null },
    ...usableInvitations(record, now).map(([what, count]): Excess => ({ what, count, limit: limits.invitations, bound: 'invitations' })),
  ];
  return counted.filter(({ count, limit }) => count > limit);
}

/** The usable invitations of each kind the record holds (what can fill RealmLimits.invitations). */
function usableInvitations(record: RealmRecord, now: number): [string, number][] {
  const emails = new Set(record.users.map((user) => user.email.toLowerCase()));
  const hasAccount = (email: string) => emails.has(email.toLowerCase());
  const usable = (invitations: Invitation[]) => invitations.filter((invitation) => fillsBound(invitation, now, hasAccount)).length;
  const invitations = record.invitations?.invitations ?? [];
  return [
    ['usable email invitations', usable(invitations.filter((invitation) => !invitation.multiuse))],
    ['usable invitation links', usable(invitations.filter((invitation) => invitation.multiuse))],
  ];
}
