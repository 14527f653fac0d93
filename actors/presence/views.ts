import type { RealmState, UserProfile } from '../realm/state.ts';
import { accessFilter } from '../realm/user-access.ts';
import { OFFLINE_THRESHOLD_SECONDS, PRESENCE_SEGMENT, type PresenceEntry, type PresenceLog, type PresenceStore } from './store.ts';
import { realmVersion } from '../realm/version.ts';
import { lowerBound } from '../realm/messages/lower-bound.ts';
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

export interface RealmPresences {
  /** the `presences` object as JSON text in parts, one after another: by user id (slim) or by email (legacy) */
  parts: readonly string[];
  /** the newest update returned, never below the client's; -1 when nothing was returned or asked past */
  lastUpdateId: number;
}

/**
 * The realm's presence data as POST /users/me/presence, GET /realm/presence and registration return it. An
 * incremental fetch walks the changes since the client's id (store.ts); a full answer to a viewer who may
 * access everyone is spliced from segments kept between changes (sharedSegments).
 */
export function realmPresences(store: PresenceStore, realm: RealmState, query: PresenceQuery): RealmPresences {
  const { lastUpdateId } = query;
  const accessible = accessFilter(realm, query.viewerId);
  const incremental = lastUpdateId !== undefined && lastUpdateId > 0;
  const since = incremental ? -Infinity : query.now - (query.historyLimitDays ?? DEFAULT_HISTORY_LIMIT_DAYS) * DAY_SECONDS;
  const view: View = { slim: query.slim, since, now: query.now };
  if (incremental) {
    return walked(store, realm, store.updatedSince(realm.realmId, lastUpdateId), accessible, view, lastUpdateId);
  }
  // Update ids start at 1: a client's id of 0 or below leaves out nothing.
  if (accessible) {
    const entries = store.entries(realm.realmId);
    const candidates = accessible.size < entries.size ? [...accessible].flatMap((userId) => {
      const entry = entries.get(userId);
      return entry ? [[userId, entry] as const] : [];
    }) : entries;
    return walked(store, realm, candidates, accessible, view, lastUpdateId ?? -1);
  }
  return sharedSegments(store, realm, view, lastUpdateId ?? -1);
}

/** What a full answer's entries depend on besides the entries and the users: the format, the cutoff, the time. */
interface View {
  slim: boolean;
  /** entries last connected before this are left out (UNIX seconds) */
  since: number;
  now: number;
}

/** One entry as a member of the `presences` object: `"key":{...}`. */
function memberJson(realm: RealmState, userId: number, entry: PresenceEntry, user: UserProfile, view: View): string {
  return view.slim
    ? `"${userId}":${JSON.stringify(modernPresence(entry, user))}`
    : `${JSON.stringify(displayEmail(realm, user))}:${JSON.stringify(legacyPresence(entry, user, view.now))}`;
}

function walked(
  store: PresenceStore, realm: RealmState, entries: Iterable<readonly [number, PresenceEntry]>, accessible: Set<number> | null, view: View, after: number,
): RealmPresences {
  const members: string[] = [];
  let newest = after;
  for (const [userId, entry] of entries) {
    if (accessible && !accessible.has(userId)) continue;
    if (entry.connectedAt < view.since) continue;
    const user = realm.users.get(userId);
    if (!showsPresence(store, realm, user)) continue;
    newest = Math.max(newest, entry.updateId);
    members.push(memberJson(realm, userId, entry, user, view));
  }
  return { parts: [`{${members.join(',')}}`], lastUpdateId: newest };
}

/**
 * One segment of the log as members of the `presences` object (`json`, empty when none is shown), and the
 * range of cutoffs and times for which it stays the same: an entry in it connected exactly at `sinceUpTo`
 * would be left out by a later cutoff, one left out at `sinceAbove` kept by an earlier one; in the legacy
 * format a user active at `nowUpTo - 120` turns idle after `nowUpTo`.
 */
interface BuiltSegment {
  stamp: number;
  json: string;
  newest: number;
  sinceAbove: number;
  sinceUpTo: number;
  nowAbove: number;
  nowUpTo: number;
}

/** What the kept segments of one realm were built from: its log, and what decides how each user shows. */
interface KeptSegments {
  log: object;
  realmVersion: number;
  sharingVersion: number;
  /** user id -> what their member depends on in the realm and their settings (`shownAs`), as last built */
  shown: Map<number, string | null>;
  /** per segment, by format */
  slim: (BuiltSegment | undefined)[];
  legacy: (BuiltSegment | undefined)[];
}

const keptSegments = new WeakMap<RealmState, KeptSegments>();

/**
 * How a user's member reads, apart from their entry: null when they are not shown, else what it is built
 * from (the join time stands in for a user never active; the legacy format is keyed by display address).
 */
function shownAs(store: PresenceStore, realm: RealmState, userId: number): string | null {
  const user = realm.users.get(userId);
  return showsPresence(store, realm, user) ? `${user.dateJoined} ${displayEmail(realm, user)}` : null;
}

/**
 * A full answer for a viewer who may access everyone, which depends only on the entries, the users, the
 * cutoff and (legacy) the time: spliced from segments of the log built once and kept until a change in the
 * segment (a report), to a user shown in it (the realm's or a user's settings moved and their `shownAs`
 * reads otherwise), or a cutoff or time outside the segment's range.
 */
function sharedSegments(store: PresenceStore, realm: RealmState, view: View, after: number): RealmPresences {
  const log = store.log(realm.realmId);
  if (!log) return { parts: ['{}'], lastUpdateId: after };
  const kept = keptFor(store, realm, log);
  const built = view.slim ? kept.slim : kept.legacy;
  const parts = ['{'];
  let newest = after;
  for (let segment = 0; segment < log.stamps.length; segment++) {
    let found = built[segment];
    const fits = found && found.stamp === log.stamps[segment] && found.sinceAbove < view.since && view.since <= found.sinceUpTo
      && found.nowAbove < view.now && view.now <= found.nowUpTo;
    if (!fits) built[segment] = found = buildSegment(store, realm, kept, log.stamps[segment]!, segment, view);
    if (!found!.json) continue;
    if (parts.length > 1) parts.push(',');
    parts.push(found!.json);
    newest = Math.max(newest, found!.newest);
  }
  parts.push('}');
  return { parts, lastUpdateId: newest };
}

function keptFor(store: PresenceStore, realm: RealmState, log: Readonly<PresenceLog>): KeptSegments {
  const version = realmVersion(realm);
  const sharingVersion = store.sharing.version(realm.realmId);
  let kept = keptSegments.get(realm);
  if (!kept || kept.log !== log) {
    kept = { log, realmVersion: version, sharingVersion, shown: new Map(), slim: [], legacy: [] };
    keptSegments.set(realm, kept);
    return kept;
  }
  if (kept.realmVersion === version && kept.sharingVersion === sharingVersion) return kept;
  // Most changes to the realm or to a user's personal state change no one's member: only the segments of
  // those whose does are built again. After personal changes only, only their users are checked.
  const changed = kept.realmVersion === version ? store.sharing.changedSince(realm.realmId, kept.sharingVersion) : null;
  const entries = store.entries(realm.realmId);
  const check = (userId: number, entry: PresenceEntry) => {
    const now = shownAs(store, realm, userId);
    if (kept.shown.get(userId) === now) return;
    kept.shown.set(userId, now);
    const segment = Math.floor(lowerBound(log.ids, entry.updateId) / PRESENCE_SEGMENT);
    kept.slim[segment] = kept.legacy[segment] = undefined;
  };
  if (changed === null) for (const [userId, entry] of entries) check(userId, entry);
  else for (const userId of changed) {
    const entry = entries.get(userId);
    if (entry) check(userId, entry);
  }
  kept.realmVersion = version;
  kept.sharingVersion = sharingVersion;
  return kept;
}

function buildSegment(store: PresenceStore, realm: RealmState, kept: KeptSegments, stamp: number, segment: number, view: View): BuiltSegment {
  const built: BuiltSegment = { stamp, json: '', newest: -1, sinceAbove: -Infinity, sinceUpTo: Infinity, nowAbove: -Infinity, nowUpTo: Infinity };
  const members: string[] = [];
  for (const [userId, entry] of store.segment(realm.realmId, segment)) {
    const shown = shownAs(store, realm, userId);
    kept.shown.set(userId, shown);
    if (shown === null) continue;
    if (entry.connectedAt < view.since) {
      built.sinceAbove = Math.max(built.sinceAbove, entry.connectedAt);
      continue;
    }
    built.sinceUpTo = Math.min(built.sinceUpTo, entry.connectedAt);
    const user = realm.users.get(userId)!;
    if (!view.slim) {
      const turnsIdle = activeAt(entry, user) + LEGACY_ACTIVE_SECONDS;
      if (view.now > turnsIdle) built.nowAbove = Math.max(built.nowAbove, turnsIdle);
      else built.nowUpTo = Math.min(built.nowUpTo, turnsIdle);
    }
    built.newest = Math.max(built.newest, entry.updateId);
    members.push(memberJson(realm, userId, entry, user, view));
  }
  built.json = members.join(',');
  return built;
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
