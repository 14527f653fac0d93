import { lowerBound } from '../realm/messages/lower-bound.ts';

/**
 * Presence: when each user was last active and last connected, kept in memory only. It is ephemeral by
 * design: a restart forgets it, and clients, which report their presence every minute, refill it within a
 * minute (everyone reads as offline until then). It changes no other state and is never written to the log.
 */

/** How often clients report presence; reported at registration as `server_presence_ping_interval_seconds`. */
export const PRESENCE_PING_INTERVAL_SECONDS = 60;
/** Older than this, a user reads as offline; reported as `server_presence_offline_threshold_seconds`. */
export const OFFLINE_THRESHOLD_SECONDS = 140;
/**
 * Reports closer together than this change nothing: a user with several windows open reports several times
 * a minute, and each change would otherwise be fetched again by every client polling incrementally.
 */
export const UPDATE_MIN_INTERVAL_SECONDS = 55;
/**
 * An active report from a user last active longer ago than this is announced at once with a `presence`
 * event: the user missed a couple of regular reports and other clients may already show them offline (the
 * original's `OFFLINE_THRESHOLD - PING_INTERVAL - 10`).
 */
export const NEWLY_ONLINE_SECONDS = OFFLINE_THRESHOLD_SECONDS - PRESENCE_PING_INTERVAL_SECONDS - 10;

export type PresenceStatus = 'active' | 'idle';

export interface PresenceEntry {
  /** UNIX seconds of the last report that the user was active; null if they only ever reported idle */
  activeAt: number | null;
  /** UNIX seconds of the last report of any kind (never before `activeAt`) */
  connectedAt: number;
  /** the realm's presence sequence number when this entry last changed: incremental fetches ask past it */
  updateId: number;
}

interface RealmPresence {
  lastUpdateId: number;
  byUser: Map<number, PresenceEntry>;
  log: PresenceLog;
}

/**
 * Every change of a realm's entries in update order (in memory, like them; not the persistent log): slot
 * `i` is user `users[i]` taking update id `ids[i]`, current while that user's entry still has that id. An
 * incremental fetch walks from the first id past the client's, so it costs what changed since, not the
 * realm. A full answer is built per segment of PRESENCE_SEGMENT slots and kept until the segment's stamp
 * moves (views.ts); a rewritten log is a new object.
 */
export interface PresenceLog {
  readonly ids: number[];
  readonly users: number[];
  /** per segment, the update id of the last change to it: a slot appended, or made stale by a newer one */
  readonly stamps: number[];
}

export const PRESENCE_SEGMENT = 64;

/** A log this much longer than the realm's entries (stale slots) is rewritten with its current slots only. */
const LOG_SLACK = 2;

export interface RecordResult {
  entry: PresenceEntry;
  /** the user came online (first report, or active after a while away): tell everyone now */
  announce: boolean;
}

export interface SharingVersions {
  version(realmId: number): number;
  changedSince(realmId: number, version: number): readonly number[] | null;
}

/** Every realm's presence entries; the Runtime holds one. */
export class PresenceStore {
  private readonly realms = new Map<number, RealmPresence>();

  /**
   * @param sharesPresence whether a user lets others see their presence (the `presence_enabled` setting);
   *   a user who does not is neither recorded nor shown, so reads as offline
   * @param sharing a number that moves whenever `sharesPresence` may answer otherwise for a user of the realm
   *   (any change to their personal state), and the users it moved for since a value (null: not known that
   *   far back): full answers are kept until it moves, then those users are checked again (views.ts)
   */
  constructor(
    readonly sharesPresence: (realmId: number, userId: number) => boolean,
    readonly sharing: SharingVersions,
  ) {}

  private realm(realmId: number): RealmPresence {
    let realm = this.realms.get(realmId);
    if (!realm) this.realms.set(realmId, (realm = { lastUpdateId: 0, byUser: new Map(), log: emptyLog() }));
    return realm;
  }

  get(realmId: number, userId: number): PresenceEntry | undefined {
    return this.realms.get(realmId)?.byUser.get(userId);
  }

  entries(realmId: number): ReadonlyMap<number, PresenceEntry> {
    return this.realms.get(realmId)?.byUser ?? new Map();
  }

  log(realmId: number): Readonly<PresenceLog> | undefined {
    return this.realms.get(realmId)?.log;
  }

  /** The entries whose current slot is in `segment` of the log, in update order. */
  segment(realmId: number, segment: number): Generator<[number, PresenceEntry]> {
    return this.currentSlots(realmId, () => segment * PRESENCE_SEGMENT, (segment + 1) * PRESENCE_SEGMENT);
  }

  /** The entries that changed after update id `after` (an integer), oldest change first. */
  updatedSince(realmId: number, after: number): Generator<[number, PresenceEntry]> {
    return this.currentSlots(realmId, (ids) => lowerBound(ids, after + 1), Infinity);
  }

  private *currentSlots(realmId: number, from: (ids: readonly number[]) => number, to: number): Generator<[number, PresenceEntry]> {
    const realm = this.realms.get(realmId);
    if (!realm) return;
    const { ids, users } = realm.log;
    for (let i = from(ids); i < Math.min(ids.length, to); i++) {
      const entry = realm.byUser.get(users[i]!)!;
      if (entry.updateId === ids[i]) yield [users[i]!, entry];
    }
  }

  /** Records one report (at `now`, UNIX seconds), with the original's rules about what it changes. */
  record(realmId: number, userId: number, status: PresenceStatus, now: number): RecordResult {
    const realm = this.realm(realmId);
    const existing = realm.byUser.get(userId);
    if (!existing) {
      const entry = { activeAt: status === 'active' ? now : null, connectedAt: now, updateId: ++realm.lastUpdateId };
      realm.byUser.set(userId, entry);
      logged(realm, userId, entry.updateId, null);
      return { entry, announce: true };
    }
    const sinceActive = existing.activeAt === null ? Infinity : now - existing.activeAt;
    const sinceConnected = now - existing.connectedAt;
    let changed = false;
    if (sinceConnected > UPDATE_MIN_INTERVAL_SECONDS) {
      existing.connectedAt = now;
      changed = true;
    }
    if (status === 'active' && sinceActive > UPDATE_MIN_INTERVAL_SECONDS) {
      existing.activeAt = now;
      existing.connectedAt = Math.max(existing.connectedAt, now);
      changed = true;
    }
    if (changed) {
      const previous = existing.updateId;
      logged(realm, userId, (existing.updateId = ++realm.lastUpdateId), previous);
    }
    return { entry: existing, announce: status === 'active' && sinceActive > NEWLY_ONLINE_SECONDS };
  }
}

const emptyLog = (): PresenceLog => ({ ids: [], users: [], stamps: [] });

function logged(realm: RealmPresence, userId: number, updateId: number, previous: number | null): void {
  const { log } = realm;
  if (previous !== null) log.stamps[Math.floor(lowerBound(log.ids, previous) / PRESENCE_SEGMENT)] = updateId;
  log.ids.push(updateId);
  log.users.push(userId);
  log.stamps[Math.floor((log.ids.length - 1) / PRESENCE_SEGMENT)] = updateId;
  if (log.ids.length <= LOG_SLACK * realm.byUser.size + 64) return;
  const current = emptyLog();
  for (let i = 0; i < log.ids.length; i++) {
    if (realm.byUser.get(log.users[i]!)!.updateId !== log.ids[i]) continue;
    current.ids.push(log.ids[i]!);
    current.users.push(log.users[i]!);
    current.stamps[Math.floor((current.ids.length - 1) / PRESENCE_SEGMENT)] = updateId;
  }
  realm.log = current;
}
