import { createActor, type Actor } from 'xstate';
import { ChatError, ErrorCode } from './errors.ts';
import type { RealmLimits } from './realm/limits.ts';
import type { Delivery } from './events.ts';
import type { Persistence } from './persistence.ts';
import type { QueueChange } from './queue/changes.ts';
import type { QueueRegistry } from './queue/registry.ts';
import { applyRealmChange } from './realm/apply.ts';
import type { RealmChange } from './realm/changes.ts';
import type { DecideContext } from './realm/decide.ts';
import { displayEmail } from './realm/email-visibility.ts';
import { realmEvents } from './realm/events.ts';
import { realmMachine } from './realm/machine.ts';
import { bodyFromRecord, DEFAULT_BODY_CACHE, type BodyRecord } from './realm/messages/bodies.ts';
import { DEFAULT_CHUNK_CACHE } from './realm/messages/paged.ts';
import { DEFAULT_KEY_CACHE, DEFAULT_SEGMENT_CACHE } from './realm/messages/lazy-map.ts';
import { attachChunks } from './realm/snapshot.ts';
import { emptyRealm, humanAdministrators, type RealmState } from './realm/state.ts';
import { applyUserChange } from './user/apply.ts';
import type { UserChange } from './user/changes.ts';
import { userEvents } from './user/events.ts';
import { takesChanges, userMachine, type UserStatus } from './user/machine.ts';
import { emptyUserState, type UserRecord, type UserState } from './user/state.ts';

export type RealmActor = Actor<typeof realmMachine>;
export type UserActor = Actor<typeof userMachine>;

/** A user actor as a snapshot stores it: its lifecycle state and its personal state. */
export interface PersonalRecord {
  value: UserStatus;
  state: UserRecord;
}

/**
 * How a change is applied: `live` (the write path, a replica following the primary) announces its events
 * and tells the scheduled messages' timers; `replay` (a boot's replay of the log) announces nothing, since
 * no queue is there to take the events; `reannounce` (a replay while queues restored from snapshots are
 * there) announces its events again, for those queues. Actors a replay starts are ready once it ends.
 */
export type ApplyMode = 'live' | 'replay' | 'reannounce';

export interface Dirty {
  realms: Set<number>;
  users: Set<string>;
  /** queues whose stored snapshot must go (the live ones mark themselves, see Queue.unsaved) */
  removedQueues: Set<string>;
  /** queues restored from records of the older shape, which the next snapshot replaces (queue/snapshot.ts) */
  legacyQueues: Set<string>;
}

export const userKey = (realmId: number, userId: number) => `${realmId}:${userId}`;

const NO_ALERT_WORDS: ReadonlyMap<number, readonly string[]> = new Map();

export interface RegistryOptions {
  /** the host an organization is served at, the domain of its stand-in addresses (realm/email-visibility.ts) */
  realmHost?(stringId: string): string;
  /** the organization's URL, asked each time it is needed (RealmState.organizationUrl) */
  organizationUrl?(stringId: string): string;
  /** stored message bodies each realm keeps decoded (absent: DEFAULT_BODY_CACHE) */
  bodyCache?: number;
  /** chunks of stored messages each realm keeps decoded (absent: DEFAULT_CHUNK_CACHE) */
  chunkCache?: number;
  /** keys of each per-key message index (channel, topic, user's flags) each realm keeps in memory (absent: DEFAULT_KEY_CACHE) */
  keyCache?: number;
  /** ids of the stored segments of each id list index each realm keeps in memory (absent: DEFAULT_SEGMENT_CACHE) */
  segmentCache?: number;
  /** how many groups, channels, custom emoji, invitations and accounts each organization may have (absent: DEFAULT_REALM_LIMITS) */
  realmLimits?: RealmLimits;
  /** a live change of a user's personal state (the scheduled messages' timers follow them) */
  userChanged(state: UserState, changes: readonly UserChange[]): void;
}

/** How many of a realm's latest personal changes personalChangesSince can name the users of. */
const PERSONAL_CHANGES_KEPT = 1024;

/**
 * The actors in memory and the one `apply` of logged changes to them: the live path (runtime.ts) applies
 * what it commits, a replay (replay.ts: boot, reload, a replica's records) what the log holds, the same way.
 * Notes what changed since the last snapshot (dirty).
 */
export class ActorRegistry {
  readonly realms = new Map<number, RealmActor>();
  readonly realmIdByStringId = new Map<string, number>();
  readonly users = new Map<string, UserActor>();
  /** per realm, how many changes its users' personal states have taken in this process (personalVersion) */
  private readonly personalVersions = new Map<number, number>();
  /** per realm, the users of its latest personal changes, the one that took version v at `users[v - first]` */
  private readonly personalChanges = new Map<number, { first: number; users: number[] }>();
  readonly dirty: Dirty = { realms: new Set(), users: new Set(), removedQueues: new Set(), legacyQueues: new Set() };
  /** per realm, what its decisions may read besides its state (see decideContext) */
  private readonly decideContexts = new Map<number, DecideContext>();
  /** realm -> the users with alert words, and theirs: a send checks these few rather than every recipient's actor */
  private readonly alertWords = new Map<number, Map<number, readonly string[]>>();

  constructor(
    private readonly store: Persistence,
    private readonly queues: QueueRegistry,
    private readonly now: () => number,
    private readonly options: RegistryOptions,
  ) {}

  realmState(realmId: number): RealmState {
    const actor = this.realms.get(realmId);
    if (!actor) throw new ChatError(ErrorCode.BAD_REQUEST, 'No such organization');
    return actor.getSnapshot().context.state;
  }

  userActor(realmId: number, userId: number): UserActor | undefined {
    return this.users.get(userKey(realmId, userId));
  }

  /** The time, and the personal facts of the realm's user actors that a realm decision may record. */
  decideContext(realmId: number): DecideContext {
    let context = this.decideContexts.get(realmId);
    if (!context) {
      context = {
        now: this.now,
        alertWords: () => this.alertWords.get(realmId) ?? NO_ALERT_WORDS,
        ...(this.options.realmLimits ? { limits: this.options.realmLimits } : {}),
      };
      this.decideContexts.set(realmId, context);
    }
    return context;
  }

  /** Stops every realm and user actor (the state is then loaded again, see Runtime.failStorage). */
  clear(): void {
    for (const actor of this.realms.values()) actor.stop();
    for (const actor of this.users.values()) actor.stop();
    this.realms.clear();
    this.users.clear();
    this.alertWords.clear();
    this.realmIdByStringId.clear();
  }

  /**
   * How many changes the realm's users' personal states have taken in this process: with the realm's version
   * (realm/version.ts), a view of every user's personal state (registration's statuses) is kept until it moves.
   */
  personalVersion(realmId: number): number {
    return this.personalVersions.get(realmId) ?? 0;
  }

  /**
   * The users whose personal state changed after `version` (personalVersion), or null when that is further
   * back than the last PERSONAL_CHANGES_KEPT changes: a view of every user's state checks those users again.
   */
  personalChangesSince(realmId: number, version: number): readonly number[] | null {
    const kept = this.personalChanges.get(realmId);
    if (version === this.personalVersion(realmId)) return [];
    if (!kept || version + 1 < kept.first) return null;
    return kept.users.slice(version + 1 - kept.first);
  }

  applyUser(realmId: number, userId: number, changes: readonly UserChange[], mode: ApplyMode): Delivery[] {
    const actor = this.users.get(userKey(realmId, userId));
    if (!actor) throw new Error(`log names unknown user ${realmId}:${userId}`);
    const { value, context: { state } } = actor.getSnapshot();
    // Applied in place, not through an xstate event: see userMachine.
    if (takesChanges(value, changes)) for (const change of changes) applyUserChange(state, change);
    const version = this.personalVersion(realmId) + 1;
    this.personalVersions.set(realmId, version);
    let kept = this.personalChanges.get(realmId);
    if (!kept || kept.users.length >= 2 * PERSONAL_CHANGES_KEPT) {
      const users = kept?.users.slice(-PERSONAL_CHANGES_KEPT) ?? [];
      this.personalChanges.set(realmId, (kept = { first: version - users.length, users }));
    }
    kept.users.push(userId);
    this.dirty.users.add(userKey(realmId, userId));
    this.noteAlertWords(state);
    if (mode === 'replay') return [];
    if (mode === 'live') this.options.userChanged(state, changes);
    const realm = this.realms.get(realmId)?.getSnapshot().context.state;
    const facts = { channelName: (id: number) => realm?.channels.get(id)?.name, administrators: () => (realm ? humanAdministrators(realm) : []) };
    const deliveries = changes.flatMap((change) => userEvents(state, change, facts));
    // Legacy settings events name the user by email, which the realm holds; the modern shape drops it.
    const profile = realm?.users.get(userId);
    const email = realm && profile ? displayEmail(realm, profile) : undefined;
    for (const delivery of deliveries) if (delivery.event.type === 'user_settings') delivery.event.user_email = email;
    return deliveries;
  }

  /** Applies changes to the realm and user actors; returns the events they announce. */
  applyRealm(realmId: number, changes: readonly RealmChange[], at: number, mode: ApplyMode): Delivery[] {
    let realm = this.realms.get(realmId);
    const first = changes[0];
    if (!realm && first?.type === 'realm.created') {
      realm = this.startRealm(emptyRealm(realmId, first.stringId, first.name, Math.floor(first.at / 1000)), mode === 'live');
    }
    if (!realm) throw new Error(`log names unknown realm ${realmId}`);
    // Applied in place, not through an xstate event: see realmMachine.
    const state = realm.getSnapshot().context.state;
    for (const change of changes) applyRealmChange(state, change);
    this.realmIdByStringId.set(state.stringId, realmId);
    this.dirty.realms.add(realmId);
    const deliveries: Delivery[] = [];
    for (const change of changes) {
      const personal = this.applyToUserActors(realmId, change, mode);
      if (mode !== 'replay') deliveries.push(...realmEvents(state, change, at), ...personal);
    }
    return deliveries;
  }

  /** The part of a realm change that user actors hold; returns the events of their changes. */
  private applyToUserActors(realmId: number, change: RealmChange, mode: ApplyMode): Delivery[] {
    switch (change.type) {
      case 'user.created':
        this.startUser(emptyUserState(realmId, change.user.userId, change.settings));
        break;
      case 'user.deactivated':
      case 'user.reactivated':
        this.userActor(realmId, change.userId)?.send({ type: change.type });
        break;
      case 'message.sent':
        // A delivered scheduled message leaves its sender's list (a reminder its owner's) with the same record that sent it.
        if (change.scheduledMessageId === undefined) return [];
        if (change.scheduledOwnerId !== undefined) {
          return this.applyUser(realmId, change.scheduledOwnerId, [{ type: 'scheduled.delivered', id: change.scheduledMessageId, reminder: true }], mode);
        }
        return this.applyUser(realmId, change.message.senderId, [{ type: 'scheduled.delivered', id: change.scheduledMessageId }], mode);
      // The realm's alone: no user actor holds any of these.
      case 'attachment.deleted':
      case 'attachment.uploaded':
      case 'bot.updated':
      case 'channel.created':
      case 'channel.updated':
      case 'channel_folder.created':
      case 'channel_folder.updated':
      case 'channel_folders.reordered':
      case 'default_channel_group.created':
      case 'default_channel_group.deleted':
      case 'default_channel_group.updated':
      case 'emoji.added':
      case 'emoji.deactivated':
      case 'group.created':
      case 'group.members_changed':
      case 'group.subgroups_changed':
      case 'group.updated':
      case 'invitation.resent':
      case 'invitation.revoked':
      case 'invitation.used':
      case 'invitations.created':
      case 'invitations.forgotten':
      case 'linkifier.added':
      case 'linkifier.removed':
      case 'linkifier.updated':
      case 'linkifiers.reordered':
      case 'message.edited':
      case 'message.flags_changed':
      case 'messages.deleted':
      case 'notification_bot.created':
      case 'playground.added':
      case 'playground.removed':
      case 'profile_data.changed':
      case 'profile_field.created':
      case 'profile_field.deleted':
      case 'profile_field.updated':
      case 'profile_fields.reordered':
      case 'reaction.added':
      case 'reaction.removed':
      case 'realm.created':
      case 'realm.deactivated':
      case 'realm.permission_changed':
      case 'realm.property_changed':
      case 'realm_domain.added':
      case 'realm_domain.changed':
      case 'realm_domain.removed':
      case 'realm_export.completed':
      case 'realm_export.failed':
      case 'realm_export.requested':
      case 'settings_default.changed':
      case 'subscription.properties_set':
      case 'subscriptions.added':
      case 'submessage.added':
      case 'subscriptions.removed':
      case 'user.api_key_changed':
      case 'user.avatar_changed':
      case 'user.email_changed':
      case 'user.email_visibility_changed':
      case 'user.password_changed':
      case 'user.updated':
        return [];
      default: {
        const unknown: never = change;
        throw new Error(`unknown realm change ${JSON.stringify(unknown)}`);
      }
    }
    if ('userId' in change) this.dirty.users.add(userKey(realmId, change.userId));
    else if (change.type === 'user.created') this.dirty.users.add(userKey(realmId, change.user.userId));
    return [];
  }

  applyQueue(change: QueueChange): void {
    switch (change.type) {
      case 'queue.registered':
        this.queues.open(change.context);
        break;
      case 'queue.removed': {
        const queue = this.queues.find(change.queueId);
        if (queue) this.queues.remove(queue, change.reason);
        this.dirty.removedQueues.add(change.queueId);
        break;
      }
      default: {
        const unknown: never = change;
        throw new Error(`unknown queue change ${JSON.stringify(unknown)}`);
      }
    }
  }

  /** Starts a realm's actor; `ready` at once unless a replay starts it (it is ready once the replay ends). */
  startRealm(state: RealmState, ready: boolean): RealmActor {
    if (this.options.realmHost) state.emailDomain = this.options.realmHost(state.stringId);
    const { organizationUrl } = this.options;
    if (organizationUrl) state.organizationUrl = () => organizationUrl(state.stringId);
    const { store } = this;
    const { realmId } = state;
    state.messages.bodies.attach({
      read(id) {
        const record = store.readBody(realmId, id) as BodyRecord | undefined;
        return record && bodyFromRecord(record);
      },
      readBytes: (id) => store.readBodyBytes(realmId, id),
      *scan() {
        for (const [id, record] of store.readBodies(realmId)) yield [id, bodyFromRecord(record as BodyRecord)];
      },
      ids: () => store.readBodyIds(realmId),
    }, this.options.bodyCache ?? DEFAULT_BODY_CACHE);
    attachChunks(
      state,
      {
        read: (kind, id) => store.readSnapshot(kind, id)?.data,
        readBytes: (kind, id) => store.readSnapshotBytes(kind, id),
        readIds: (kind, prefix) => store.readSnapshotIdsOf(kind, prefix),
      },
      this.options.chunkCache ?? DEFAULT_CHUNK_CACHE,
      this.options.keyCache ?? DEFAULT_KEY_CACHE,
      this.options.segmentCache ?? DEFAULT_SEGMENT_CACHE,
    );
    const actor = createActor(realmMachine, { input: { state } }).start();
    if (ready) actor.send({ type: 'realm.recovered' });
    this.realms.set(state.realmId, actor);
    this.realmIdByStringId.set(state.stringId, state.realmId);
    return actor;
  }

  private noteAlertWords(state: UserState): void {
    let users = this.alertWords.get(state.realmId);
    if (state.alertWords.length > 0) {
      if (!users) this.alertWords.set(state.realmId, (users = new Map()));
      users.set(state.userId, state.alertWords);
    } else users?.delete(state.userId);
  }

  startUser(state: UserState, value: UserStatus = 'active'): UserActor {
    const snapshot = userMachine.resolveState({ value, context: { state } });
    const actor = createActor(userMachine, { snapshot, input: { state } }).start();
    this.users.set(userKey(state.realmId, state.userId), actor);
    this.noteAlertWords(state);
    return actor;
  }
}

