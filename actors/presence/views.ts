import type { RealmState, UserProfile } from '../realm/state.ts';
import { accessFilter } from '../realm/user-access.ts';
import { OFFLINE_THRESHOLD_SECONDS, type PresenceEntry, type PresenceStore } from './store.ts';
import { displayEmail } from '../realm/email-visibility.ts';

/** How far back presence data goes when the client does not say (register `presence_history_limit_days`). */
export const DEFAULT_HISTORY_LIMIT_DAYS = 14;
const DAY_SECONDS = 86_400;
/** The legacy format calls a user active if they were active within this long (the original's 2 minutes). */
const LEGACY_ACTIVE_SECONDS = 120;
/**
 * In a `presence` event (sent right after a report), the user counts as active if their last activity is
 * this close to their last connection (the original's PRESENCE_LEGACY_EVENT_OFFSET_FOR_ACTIVITY_SECONDS).
 */
const LEGACY_EVENT_ACTIVITY_OFFSET_SECONDS = 70;

export interface ModernPresence {
  active_timestamp: number;
  idle_timestamp: number;
}

export interface LegacyPresenceInfo {
  client: 'website';
  status: 'active' | 'idle';
  timestamp: number;
  pushable?: false;
}

type LegacyPresence = { aggregated: LegacyPresenceInfo; website: LegacyPresenceInfo };

/** A user who never reported being active reads as last active when they joined (as in the original). */
const activeAt = (entry: PresenceEntry, user: UserProfile) => entry.activeAt ?? user.dateJoined;

/** Is this user's presence shown to others at all? Deactivated users, bots and invisible users: no. */
export function showsPresence(store: PresenceStore, realm: RealmState, user: UserProfile | undefined): user is UserProfile {
  return !!user && user.isActive && !user.isBot && store.sharesPresence(realm.realmId, user.userId);
}

export function modernPresence(entry: PresenceEntry, user: UserProfile): ModernPresence {
  return { active_timestamp: Math.floor(activeAt(entry, user)), idle_timestamp: Math.floor(entry.connectedAt) };
}

/**
 * The legacy format: one client, always `website` since the original stopped tracking clients, plus
 * `aggregated`, which carries the same data.
 */
export function legacyPresence(entry: PresenceEntry, user: UserProfile, now: number): LegacyPresence {
  const active = activeAt(entry, user);
  const idle = now - active > LEGACY_ACTIVE_SECONDS;
  const status = idle ? 'idle' : 'active';
  const timestamp = Math.floor(idle ? entry.connectedAt : active);
  return { aggregated: { client: 'website', status, timestamp }, website: { client: 'website', status, timestamp, pushable: false } };
}

/** The legacy `presence` of a `presence` event, computed right after the report that caused it. */
export function legacyEventPresence(entry: PresenceEntry, user: UserProfile): { website: Required<LegacyPresenceInfo> } {
  const active = activeAt(entry, user);
  const isActive = active + LEGACY_EVENT_ACTIVITY_OFFSET_SECONDS >= entry.connectedAt;
  const timestamp = Math.floor(isActive ? active : entry.connectedAt);
  return { website: { client: 'website', status: isActive ? 'active' : 'idle', timestamp, pushable: false } };
}

export interface PresenceQuery {
  /** the modern format keyed by user id; otherwise the legacy one keyed by email */
  slim: boolean;
  /** the newest update the client already has: only newer entries are returned */
  lastUpdateId?: number;
  /** only entries connected within this many days (ignored once the client has data: lastUpdateId > 0) */
  historyLimitDays?: number;
  /** UNIX seconds */
  now: number;
  /** who asks: a guest limited by can_access_all_users_group gets only the users it may access */
  viewerId: number;
}

export interface RealmPresences<P = ModernPresence | LegacyPresence> {
  /** by user id (slim) or by email (legacy) */
  presences: Record<string, P>;
  /** the newest update returned, never below the client's; -1 when nothing was returned or asked past */
  lastUpdateId: number;
}

/** The realm's presence data as POST /users/me/presence, GET /realm/presence and registration return it. */
export function realmPresences(store: PresenceStore, realm: RealmState, query: PresenceQuery & { slim: false }): RealmPresences<LegacyPresence>;
export function realmPresences(store: PresenceStore, realm: RealmState, query: PresenceQuery): RealmPresences;
export function realmPresences(store: PresenceStore, realm: RealmState, query: PresenceQuery): RealmPresences {
  const { lastUpdateId } = query;
  const incremental = lastUpdateId !== undefined && lastUpdateId > 0;
  const since = incremental ? -Infinity : query.now - (query.historyLimitDays ?? DEFAULT_HISTORY_LIMIT_DAYS) * DAY_SECONDS;
  const presences: RealmPresences['presences'] = {};
  let newest = lastUpdateId ?? -1;
  const accessible = accessFilter(realm, query.viewerId);
  for (const [userId, entry] of store.entries(realm.realmId)) {
    if (accessible && !accessible.has(userId)) continue;
    if (lastUpdateId !== undefined && entry.updateId <= lastUpdateId) continue;
    if (entry.connectedAt < since) continue;
    const user = realm.users.get(userId);
    if (!showsPresence(store, realm, user)) continue;
    newest = Math.max(newest, entry.updateId);
    if (query.slim) presences[String(userId)] = modernPresence(entry, user);
    else presences[displayEmail(realm, user)] = legacyPresence(entry, user, query.now);
  }
  return { presences, lastUpdateId: newest };
}

/**
 * One user's presence as GET /users/{user_id_or_email}/presence returns it: the legacy format without
 * `client` and `pushable`, and `aggregated` reading `offline` once the user is past the offline threshold.
 */
export function userPresence(entry: PresenceEntry, user: UserProfile, now: number): Record<string, { status: string; timestamp: number }> {
  const { aggregated, website } = legacyPresence(entry, user, now);
  const offline = now - aggregated.timestamp > OFFLINE_THRESHOLD_SECONDS;
  return {
    website: { status: website.status, timestamp: website.timestamp },
    aggregated: { status: offline ? 'offline' : aggregated.status, timestamp: aggregated.timestamp },
  };
}
