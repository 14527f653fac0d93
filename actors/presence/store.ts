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
}

export interface RecordResult {
  entry: PresenceEntry;
  /** the user came online (first report, or active after a while away): tell everyone now */
  announce: boolean;
}

/** Every realm's presence entries; the Runtime holds one. */
export class PresenceStore {
  private readonly realms = new Map<number, RealmPresence>();

  /**
   * @param sharesPresence whether a user lets others see their presence (the `presence_enabled` setting);
   *   a user who does not is neither recorded nor shown, so reads as offline
   */
  constructor(readonly sharesPresence: (realmId: number, userId: number) => boolean) {}

  private realm(realmId: number): RealmPresence {
    let realm = this.realms.get(realmId);
    if (!realm) this.realms.set(realmId, (realm = { lastUpdateId: 0, byUser: new Map() }));
    return realm;
  }

  get(realmId: number, userId: number): PresenceEntry | undefined {
    return this.realms.get(realmId)?.byUser.get(userId);
  }

  entries(realmId: number): ReadonlyMap<number, PresenceEntry> {
    return this.realms.get(realmId)?.byUser ?? new Map();
  }

  /** Records one report (at `now`, UNIX seconds), with the original's rules about what it changes. */
  record(realmId: number, userId: number, status: PresenceStatus, now: number): RecordResult {
    const realm = this.realm(realmId);
    const existing = realm.byUser.get(userId);
    if (!existing) {
      const entry = { activeAt: status === 'active' ? now : null, connectedAt: now, updateId: ++realm.lastUpdateId };
      realm.byUser.set(userId, entry);
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
    if (changed) existing.updateId = ++realm.lastUpdateId;
    return { entry: existing, announce: status === 'active' && sinceActive > NEWLY_ONLINE_SECONDS };
  }
}
