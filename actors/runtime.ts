import { createActor, type Actor } from 'xstate';
import { FORMAT_VERSION } from '../snapshots/codec.ts';
import { ChatError, ErrorCode } from './errors.ts';
import type { Delivery } from './events.ts';
import type { BodyWrite, LogRecord, Persistence, SnapshotRecord } from './persistence.ts';
import { PresenceStore } from './presence/store.ts';
import { ScheduledDeliveries } from './scheduled-delivery.ts';
import type { SearchIndex } from './search-index.ts';
import { SearchSync } from './search-sync.ts';
import { newQueueId } from './ids.ts';
import { NotPrimary, type Replication, type Shared } from './replication.ts';
import type { PresenceStatus } from './presence/store.ts';
import type { QueueChange } from './queue/changes.ts';
import { DEFAULT_QUEUE_LIMITS, type QueueLimits } from './queue/limits.ts';
import { QueueRegistry, type Queue, type QueueTimings, type Routed } from './queue/registry.ts';
import { LEGACY_QUEUE_KIND, QUEUE_KIND, QueueSnapshotLoader, writeQueues } from './queue/snapshot.ts';
import type { QueueContext, QueueSpec } from './queue/spec.ts';
import type { RegistrationView } from './register/initial-state.ts';
import type { RealmChange } from './realm/changes.ts';
import type { RealmCommand } from './realm/commands.ts';
import { decideRealm, type Clock, type DecideContext } from './realm/decide.ts';
import { realmEvents } from './realm/events.ts';
import { realmMachine } from './realm/machine.ts';
import type { MessageChunkRecord, MessageIndexRecord } from './realm/messages/chunks.ts';
import { DEFAULT_CHUNK_CACHE } from './realm/messages/paged.ts';
import { attachChunks, bodiesSaved, MESSAGE_CHUNK_KIND, MESSAGE_INDEX_KIND, RealmSnapshotLoader, realmSnapshot, restoreUnsaved, type RealmSnapshot } from './realm/snapshot.ts';
import { bodyFromRecord, DEFAULT_BODY_CACHE, type BodyRecord } from './realm/messages/bodies.ts';
import { emptyRealm, humanAdministrators, realmFromRecord, realmToRecord, type RealmRecord, type RealmState } from './realm/state.ts';
import type { UserChange } from './user/changes.ts';
import type { UserCommand } from './user/commands.ts';
import { decideUser } from './user/decide.ts';
import { userEvents } from './user/events.ts';
import { userMachine } from './user/machine.ts';
import { settingValue } from './user/settings.ts';
import { emptyUserState, userFromRecord, userToRecord, type UserRecord, type UserState } from './user/state.ts';
import { displayEmail, visibilityOf } from './realm/email-visibility.ts';

export type RealmActor = Actor<typeof realmMachine>;
export type UserActor = Actor<typeof userMachine>;

export interface RuntimeOptions {
  clock: Clock;
  queues: QueueTimings;
  /** absent: DEFAULT_QUEUE_LIMITS */
  queueLimits?: QueueLimits;
  /** told after each commit: how many queue deliveries it made and how long since the change was applied */
  onDelivered?(deliveries: number, seconds: number): void;
  /**
   * Why writes are refused right now, or null: a condition that passes on its own (the data directory's
   * disk low on space), checked before every commit and snapshot.
   */
  writesRefused?(): string | null;
  /** the host an organization is served at, the domain of its stand-in addresses (realm/email-visibility.ts); absent: `localhost` */
  realmHost?(stringId: string): string;
  /** the full-text index of the messages (absent: search narrows are refused, as for operator commands) */
  search?: SearchIndex;
  /**
   * Cluster mode: only the primary commits; every node applies the primary's records (follow). Event queues
   * live on their node only, in memory, and are never logged: the log is the organization's, shared by all.
   */
  replication?: Replication;
  /** stored message bodies each realm keeps decoded (absent: DEFAULT_BODY_CACHE) */
  bodyCache?: number;
  /** chunks of stored messages each realm keeps decoded (absent: DEFAULT_CHUNK_CACHE) */
  chunkCache?: number;
}

interface Dirty {
  realms: Set<number>;
  users: Set<string>;
  /** queues whose stored snapshot must go (the live ones mark themselves, see Queue.unsaved) */
  removedQueues: Set<string>;
  /** queues restored from records of the older shape, which the next snapshot replaces (queue/snapshot.ts) */
  legacyQueues: Set<string>;
}

interface CommitTarget {
  realmId: number;
  userId?: number;
  scope?: 'queue';
}

const userKey = (realmId: number, userId: number) => `${realmId}:${userId}`;

/** Realm changes replayed per machine event at boot: the event's cost is spread, the batch's memory stays small. */
const REPLAY_BATCH = 500;

const NO_ALERT_WORDS: ReadonlyMap<number, readonly string[]> = new Map();

/** A user actor as a snapshot stores it: its lifecycle state and its personal state. */
export interface PersonalRecord {
  value: 'active' | 'deactivated';
  state: UserRecord;
}

/**
 * The actor registry and the write path: a command is decided against its actor's state, the changes are
 * applied in memory and appended to the log, and once the group commit holding them is durable the events
 * they announce are delivered and the caller gets its answer.
 */
export class Runtime {
  readonly realms = new Map<number, RealmActor>();
  private readonly realmIdByStringId = new Map<string, number>();
  readonly users = new Map<string, UserActor>();
  readonly queues: QueueRegistry;
  /** who was last active when: in memory only, never logged (see presence/store.ts) */
  readonly presence: PresenceStore;
  /** the one timer service of scheduled messages; started by the app once recovery is done */
  readonly scheduled: ScheduledDeliveries;
  private seq: number;
  private lastCommit: Promise<void> = Promise.resolve();
  private readonly dirty: Dirty = { realms: new Set(), users: new Set(), removedQueues: new Set(), legacyQueues: new Set() };
  private replaying = false;
  /** during a replay: whether the replayed changes are announced again, to the queues rebuilt from the log */
  private reannouncing = false;
  /**
   * Events of changes applied but not yet durable, by log position, with the queues they go to once they
   * are. A snapshot taken meanwhile covers those changes: it stores these events too (see snapshot).
   */
  private readonly undelivered = new Map<number, Routed[]>();
  /** per realm, what its decisions may read besides its state (see decideContext) */
  private readonly decideContexts = new Map<number, DecideContext>();
  /** realm -> the users with alert words, and theirs: a send checks these few rather than every recipient's actor */
  private readonly alertWords = new Map<number, Map<number, readonly string[]>>();
  /** why the data directory stopped taking writes, once it failed one: the server is read-only until restarted */
  private storageFailure: string | null = null;
  private readonly searchSync: SearchSync | null;

  constructor(
    private readonly store: Persistence,
    private readonly options: RuntimeOptions,
  ) {
    this.queues = new QueueRegistry({
      timings: options.queues,
      limits: options.queueLimits ?? DEFAULT_QUEUE_LIMITS,
      now: () => options.clock.now(),
      // The sweep already dropped it; the log learns it so that a replay drops it too.
      onExpired: (queue) => this.collectQueue(queue),
      // A replay leaves it: the log holds its removal further on if the process that ran then dropped it.
      onOverflow: (queue) => {
        if (!this.replaying) this.collectQueue(queue);
      },
    });
    this.presence = new PresenceStore((realmId, userId) => {
      const settings = this.users.get(userKey(realmId, userId))?.getSnapshot().context.state.settings;
      return !!settings && settingValue(settings, 'presence_enabled') === true;
    });
    this.seq = store.lastSeq();
    this.scheduled = new ScheduledDeliveries(this);
    this.searchSync = options.search ? new SearchSync(options.search) : null;
  }

  get clock(): Clock {
    return this.options.clock;
  }

  get logPosition(): number {
    return this.seq;
  }

  realmState(realmId: number): RealmState {
    const actor = this.realms.get(realmId);
    if (!actor) throw new ChatError(ErrorCode.BAD_REQUEST, 'No such organization');
    return actor.getSnapshot().context.state;
  }

  realmByStringId(stringId: string): RealmState | undefined {
    const id = this.realmIdByStringId.get(stringId);
    return id === undefined ? undefined : this.realmState(id);
  }

  realmStates(): RealmState[] {
    return [...this.realms.values()].map((actor) => actor.getSnapshot().context.state);
  }

  userActor(realmId: number, userId: number): UserActor | undefined {
    return this.users.get(userKey(realmId, userId));
  }

  /** The time, and the personal facts of the realm's user actors that a realm decision may record. */
  private decideContext(realmId: number): DecideContext {
    let context = this.decideContexts.get(realmId);
    if (!context) {
      context = {
        now: () => this.options.clock.now(),
        alertWords: () => this.alertWords.get(realmId) ?? NO_ALERT_WORDS,
      };
      this.decideContexts.set(realmId, context);
    }
    return context;
  }

  /** Decides a realm command and commits its changes; resolves once they are durable. */
  async execute(realmId: number, command: RealmCommand): Promise<RealmChange[]> {
    const actor = this.realms.get(realmId);
    if (!actor || actor.getSnapshot().value !== 'ready') {
      throw new ChatError(ErrorCode.BAD_REQUEST, 'No such organization');
    }
    const changes = decideRealm(actor.getSnapshot().context.state, command, this.decideContext(realmId));
    if (changes.length > 0) await this.commit({ realmId }, changes, (at) => this.applyRealm(realmId, changes, at));
    return changes;
  }

  /** Decides a command of one user about its own state and commits its changes. */
  async executeUser(realmId: number, userId: number, command: UserCommand): Promise<UserChange[]> {
    const actor = this.users.get(userKey(realmId, userId));
    if (!actor || actor.getSnapshot().value !== 'active') throw new ChatError(ErrorCode.BAD_REQUEST, 'No such user');
    const changes = decideUser(actor.getSnapshot().context.state, command, this.options.clock);
    if (changes.length > 0) await this.commit({ realmId, userId }, changes, () => this.applyUser(realmId, userId, changes));
    return changes;
  }

  /**
   * Sends a due scheduled message as its sender would: the realm command of POST /messages with its checks
   * made now, at delivery. The send carries the scheduled message's id and applying it removes the entry from
   * the sender's actor (applyToUserActors): one log record, so a crash can neither send it twice nor lose the
   * removal. A send the realm refuses marks the entry failed instead. Decides and applies synchronously, before
   * its first await, so nothing can change the entry between the check and the send.
   */
  async deliverScheduled(realmId: number, userId: number, id: number): Promise<'sent' | 'failed' | 'skipped'> {
    const realm = this.realms.get(realmId);
    const actor = this.users.get(userKey(realmId, userId));
    const message = actor?.getSnapshot().context.state.scheduled.get(id);
    // A replica leaves it to the primary; the timer tries again later, in case this node becomes the primary.
    if (this.options.replication?.isPrimary() === false) return 'skipped';
    if (!realm || realm.getSnapshot().value !== 'ready' || !message || message.failed) return 'skipped';
    if (message.deliverAt * 1000 > this.options.clock.now()) return 'skipped';
    const command: RealmCommand = message.reminderTargetMessageId !== undefined ? {
      type: 'reminder.deliver', userId, scheduledMessageId: id, content: message.content, renderedContent: message.renderedContent,
    } : {
      type: 'message.send',
      caller: { kind: 'user', userId },
      kind: message.type === 'stream' ? 'channel' : 'direct',
      to: message.type === 'stream' ? message.to[0]! : [...message.to],
      topic: message.topic,
      content: message.content,
      client: 'API',
      readBySender: message.readBySender,
      scheduledMessageId: id,
    };
    let changes: RealmChange[];
    try {
      changes = decideRealm(realm.getSnapshot().context.state, command, this.decideContext(realmId));
    } catch (error) {
      const reason = error instanceof ChatError ? error.message : 'Internal server error';
      const failed = decideUser(actor!.getSnapshot().context.state, { type: 'scheduled.fail', id, reason }, this.options.clock);
      // A deactivated sender's actor takes this change too (see user/machine.ts).
      if (failed.length > 0) await this.commit({ realmId, userId }, failed, () => this.applyUser(realmId, userId, failed));
      if (!(error instanceof ChatError)) throw error;
      return 'failed';
    }
    await this.commit({ realmId }, changes, (at) => this.applyRealm(realmId, changes, at));
    return 'sent';
  }

  userState(realmId: number, userId: number): UserState {
    const actor = this.users.get(userKey(realmId, userId));
    if (!actor) throw new ChatError(ErrorCode.BAD_REQUEST, 'No such user');
    return actor.getSnapshot().context.state;
  }

  /**
   * One organization's durable state as records (export-realm): the realm's and its users' personal state,
   * in the shapes snapshots use.
   */
  realmRecords(realmId: number): { realm: RealmRecord; users: PersonalRecord[] } {
    const realm = realmToRecord(this.realmState(realmId));
    const users: PersonalRecord[] = [];
    for (const actor of this.users.values()) {
      const snapshot = actor.getSnapshot();
      if (snapshot.context.state.realmId === realmId) users.push({ value: snapshot.value, state: userToRecord(snapshot.context.state) });
    }
    return { realm, users };
  }

  /**
   * Adds an organization made of records (import-realm) under a new id and the given subdomain, as a boot
   * loads snapshots. Operator commands only: no server runs, so nobody is told; the caller's snapshot makes
   * it durable (realm and users are marked changed).
   */
  adoptRealm(stringId: string, realm: RealmRecord, users: readonly PersonalRecord[]): RealmState {
    if (this.realmIdByStringId.has(stringId)) throw new ChatError(ErrorCode.BAD_REQUEST, `Organization '${stringId}' already exists`);
    const realmId = this.nextRealmId();
    this.startRealm(realmFromRecord({ ...realm, realmId, stringId }), true);
    this.dirty.realms.add(realmId);
    for (const { value, state } of users) {
      this.startUser(userFromRecord({ ...state, realmId }), value);
      this.dirty.users.add(userKey(realmId, state.userId));
    }
    return this.realmState(realmId);
  }

  /** The id the next organization created or adopted gets. */
  nextRealmId(): number {
    return Math.max(0, ...this.realms.keys()) + 1;
  }

  async createRealm(stringId: string, name: string): Promise<RealmState> {
    if (this.realmIdByStringId.has(stringId)) {
      throw new ChatError(ErrorCode.BAD_REQUEST, `Organization '${stringId}' already exists`);
    }
    const realmId = this.nextRealmId();
    const changes: RealmChange[] = [{ type: 'realm.created', realmId, stringId, name, at: this.options.clock.now() }];
    await this.commit({ realmId }, changes, (at) => this.applyRealm(realmId, changes, at));
    return this.realmState(realmId);
  }

  /**
   * Delivers events that change no state and are never persisted (typing, presence): straight to the
   * queues, in order with the committed events already delivered.
   */
  publish(deliveries: readonly Delivery[]): void {
    for (const delivery of deliveries) {
      for (const { event, queues } of this.queues.resolve(delivery)) this.queues.deliver(queues, event);
    }
    // In a cluster the other nodes' queues get them too (none of these events is shaped per queue).
    if (this.options.replication) this.options.replication.share({ kind: 'deliveries', deliveries: deliveries.filter((delivery) => !delivery.select) });
  }

  /** A user's presence report (POST /users/me/presence): recorded here, and in a cluster on every node. */
  recordPresence(realmId: number, userId: number, status: PresenceStatus, now: number): ReturnType<PresenceStore['record']> {
    this.options.replication?.share({ kind: 'presence', realmId, userId, status, now });
    return this.presence.record(realmId, userId, status, now);
  }

  /** What another node of the cluster shared (see publish and recordPresence): applied here, not passed on. */
  receiveShared(message: Shared): void {
    switch (message.kind) {
      case 'deliveries':
        for (const delivery of message.deliveries) {
          for (const { event, queues } of this.queues.resolve(delivery)) this.queues.deliver(queues, event);
        }
        break;
      case 'presence':
        this.presence.record(message.realmId, message.userId, message.status, message.now);
        break;
      default: {
        const unknown: never = message;
        throw new Error(`unknown shared message ${JSON.stringify(unknown)}`);
      }
    }
  }

  /** Resolves once every change applied so far is durable: what a reader of the state may have seen. */
  settled(): Promise<void> {
    return this.lastCommit;
  }

  /** Set once a log append failed: every write is refused since, until a restart (see commit). */
  get readOnlyReason(): string | null {
    return this.storageFailure;
  }

  /**
   * Throws what a write gets now: after a storage failure, a refusal until the server is restarted; while
   * writes are refused for a passing reason (low disk space), that reason. Commits call it; so does work
   * that writes beside the log before committing (an upload's bytes).
   */
  assertWritable(): void {
    this.assertStorageWorks();
    const refused = this.options.writesRefused?.() ?? null;
    if (refused !== null) throw new ChatError(ErrorCode.INTERNAL_SERVER_ERROR, refused, 503);
  }

  private assertStorageWorks(): void {
    if (this.storageFailure !== null) {
      throw new ChatError(ErrorCode.INTERNAL_SERVER_ERROR, `The server cannot save changes (${this.storageFailure}); it takes none until it is restarted`, 503);
    }
  }

  /**
   * Applies changes and appends them to the log; resolves once they are durable and their events delivered.
   * Throws at once, before applying anything, when the server takes no writes; otherwise `apply` has run
   * when this returns.
   */
  private commit(target: CommitTarget, changes: (RealmChange | UserChange | QueueChange)[], apply: (at: number) => Delivery[]): Promise<void> {
    // Event queues' registrations and removals are small, and serving reads needs them (POST /register):
    // they are logged even while writes wait for disk space.
    if (target.scope === 'queue') this.assertStorageWorks();
    else this.assertWritable();
    if (this.options.replication?.isPrimary() === false) throw new NotPrimary();
    const seq = ++this.seq;
    const started = performance.now();
    // One time for the entry and its events, so that a replay announces them the same way.
    const at = this.options.clock.now();
    const deliveries = apply(at);
    // Recipients are resolved now, against the queues that exist when the change happens, so that a queue
    // registered later (whose initial state already holds the change) never gets it twice.
    const routes: Routed[] = [];
    for (const delivery of deliveries) for (const routed of this.queues.resolve(delivery)) routes.push(routed);
    if (routes.length > 0) this.undelivered.set(seq, routes);
    const written = this.store.append({ v: FORMAT_VERSION, seq, at, ...target, changes });
    this.lastCommit = written.catch(() => undefined);
    return written.then(
      () => {
        this.searchSync?.committed(seq, { ...target, changes });
        this.undelivered.delete(seq);
        let count = 0;
        for (const { event, queues } of routes) {
          this.queues.deliver(queues, event, true);
          count += queues.length;
        }
        if (count) this.options.onDelivered?.(count, (performance.now() - started) / 1000);
      },
      (error: unknown) => {
        this.undelivered.delete(seq);
        this.failStorage(error);
        throw new ChatError(ErrorCode.INTERNAL_SERVER_ERROR, `The change could not be saved (${this.storageFailure}); the server takes no more changes until it is restarted`, 500);
      },
    );
  }

  /**
   * Applies a record another node committed (a cluster's primary; it is durable in the cluster's stream), as
   * the live path applies its own: in memory, its events to this node's queues at once, and to this node's
   * log. Records must come in order, each right after the last; resolves once the local log holds it.
   */
  follow(record: LogRecord): Promise<void> {
    if (record.seq !== this.seq + 1) throw new Error(`log record ${record.seq} does not follow ${this.seq}`);
    this.seq = record.seq;
    let deliveries: Delivery[] = [];
    // A queue's record can only come from a log written before its organization became a cluster.
    if (record.scope !== 'queue') {
      deliveries = record.userId === undefined
        ? this.applyRealm(record.realmId, record.changes as RealmChange[], record.at)
        : this.applyUser(record.realmId, record.userId, record.changes as UserChange[]);
    }
    let count = 0;
    for (const delivery of deliveries) {
      for (const { event, queues } of this.queues.resolve(delivery)) {
        this.queues.deliver(queues, event, true);
        count += queues.length;
      }
    }
    if (count) this.options.onDelivered?.(count, 0);
    const written = this.store.append(record);
    this.lastCommit = written.catch(() => undefined);
    return written.then(() => this.searchSync?.committed(record.seq, record), (error: unknown) => {
      this.failStorage(error);
      throw error;
    });
  }

  /**
   * A log append failed (disk full, an I/O error): its changes, and those of every commit in flight with it,
   * are applied in memory but not stored. Rather than undo them one by one, the state is loaded again from
   * the data directory, the source of truth (snapshots and log, as a boot does), so memory holds exactly
   * what is durable and no reader sees a change that was never saved; then the server takes no more writes
   * until it is restarted (its commits answer 503), reads go on. Taking writes again on its own would need
   * to know the disk has room again, and each retry could half-fail the same way; a restart after the
   * operator freed space is the one clean recovery. Queues and presence, which are not in the log, stay.
   */
  private failStorage(error: unknown): void {
    if (this.storageFailure !== null) return;
    this.storageFailure = error instanceof Error ? error.message : String(error);
    for (const actor of this.realms.values()) actor.stop();
    for (const actor of this.users.values()) actor.stop();
    this.realms.clear();
    this.users.clear();
    this.alertWords.clear();
    this.realmIdByStringId.clear();
    // The live queues stay as they are: their events were only ever delivered after being stored.
    this.recover({ queues: false });
    this.dirty.realms.clear();
    this.dirty.users.clear();
  }

  private applyUser(realmId: number, userId: number, changes: readonly UserChange[]): Delivery[] {
    const actor = this.users.get(userKey(realmId, userId));
    if (!actor) throw new Error(`log names unknown user ${realmId}:${userId}`);
    actor.send({ type: 'user.apply', changes });
    this.dirty.users.add(userKey(realmId, userId));
    const state = actor.getSnapshot().context.state;
    this.noteAlertWords(state);
    if (this.replaying && !this.reannouncing) return [];
    if (!this.replaying) this.scheduled.noteChanges(state, changes);
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
  private applyRealm(realmId: number, changes: readonly RealmChange[], at: number): Delivery[] {
    let realm = this.realms.get(realmId);
    const first = changes[0];
    if (!realm && first?.type === 'realm.created') {
      realm = this.startRealm(emptyRealm(realmId, first.stringId, first.name, Math.floor(first.at / 1000)));
    }
    if (!realm) throw new Error(`log names unknown realm ${realmId}`);
    realm.send({ type: 'realm.apply', changes });
    const state = realm.getSnapshot().context.state;
    this.realmIdByStringId.set(state.stringId, realmId);
    this.dirty.realms.add(realmId);
    const deliveries: Delivery[] = [];
    for (const change of changes) {
      const personal = this.applyToUserActors(realmId, change);
      if (!this.replaying || this.reannouncing) deliveries.push(...realmEvents(state, change, at), ...personal);
    }
    return deliveries;
  }

  /** The part of a realm change that user actors hold; returns the events of their changes. */
  private applyToUserActors(realmId: number, change: RealmChange): Delivery[] {
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
          return this.applyUser(realmId, change.scheduledOwnerId, [{ type: 'scheduled.delivered', id: change.scheduledMessageId, reminder: true }]);
        }
        return this.applyUser(realmId, change.message.senderId, [{ type: 'scheduled.delivered', id: change.scheduledMessageId }]);
      default:
        return [];
    }
    if ('userId' in change) this.dirty.users.add(userKey(realmId, change.userId));
    else if (change.type === 'user.created') this.dirty.users.add(userKey(realmId, change.user.userId));
    return [];
  }

  private startRealm(state: RealmState, ready = !this.replaying): RealmActor {
    if (this.options.realmHost) state.emailDomain = this.options.realmHost(state.stringId);
    const { store } = this;
    const { realmId } = state;
    state.messages.bodies.attach({
      read(id) {
        const record = store.readBody(realmId, id) as BodyRecord | undefined;
        return record && bodyFromRecord(record);
      },
      *scan() {
        for (const [id, record] of store.readBodies(realmId)) yield [id, bodyFromRecord(record as BodyRecord)];
      },
      ids: () => store.readBodyIds(realmId),
    }, this.options.bodyCache ?? DEFAULT_BODY_CACHE);
    attachChunks(state, (kind, id) => store.readSnapshot(kind, id)?.data, this.options.chunkCache ?? DEFAULT_CHUNK_CACHE);
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

  private startUser(state: UserState, value: 'active' | 'deactivated' = 'active'): UserActor {
    const snapshot = userMachine.resolveState({ value, context: { state } });
    const actor = createActor(userMachine, { snapshot, input: { state } }).start();
    this.users.set(userKey(state.realmId, state.userId), actor);
    this.noteAlertWords(state);
    return actor;
  }

  // ---- queues -------------------------------------------------------------------------------------------

  /**
   * Creates a queue and computes the client's initial state in the same synchronous step, so that every
   * change is either in that state or delivered to the queue, never both and never neither. Answers once the
   * queue's registration is durable, and with it every change the state may include.
   */
  async registerQueue<T>(realmId: number, userId: number, spec: QueueSpec, initialState: (view: RegistrationView) => T) {
    const realm = this.realmState(realmId);
    const user = realm.users.get(userId);
    if (!user) throw new ChatError(ErrorCode.BAD_REQUEST, 'No such user');
    const { queue, registered } = this.openQueue(realmId, userId, spec);
    const personalOf = (id: number) => this.users.get(userKey(realmId, id))?.getSnapshot().context.state;
    const initial = initialState({ realm, user, personal: this.userState(realmId, userId), presence: this.presence, personalOf });
    await registered;
    return { queue, initial };
  }

  /** A new queue with no initial state (GET /events without a queue id); resolves once it is durable. */
  async createQueue(realmId: number, userId: number, spec: QueueSpec): Promise<Queue> {
    const { queue, registered } = this.openQueue(realmId, userId, spec);
    await registered;
    return queue;
  }

  private openQueue(realmId: number, userId: number, spec: QueueSpec): { queue: Queue; registered: Promise<void> } {
    const queueId = this.options.replication ? `${this.options.replication.nodeId}:${newQueueId()}` : newQueueId();
    const context: QueueContext = { queueId, realmId, userId, spec, createdAt: this.options.clock.now() };
    // The user's queues over the cap go in the same log record as the new one: one commit, not one each.
    const evicted: QueueChange[] = this.queues.admit(realmId, userId).map((old) => ({ type: 'queue.removed', queueId: old.id, reason: 'queue.expire' }));
    const registered = this.commitQueue(context, ...evicted, { type: 'queue.registered', context });
    // commit() applied the registration before returning.
    return { queue: this.queues.find(context.queueId)!, registered };
  }

  /** DELETE /events: the queue goes at once; resolves once the log holds its removal. */
  deleteQueue(queue: Queue): Promise<void> {
    return this.commitQueue(queue.context, { type: 'queue.removed', queueId: queue.id, reason: 'queue.delete' });
  }

  /** The server drops a queue of its own accord (idle, or over a limit): at once, and the log learns it. */
  private collectQueue(queue: Queue): void {
    this.commitQueue(queue.context, { type: 'queue.removed', queueId: queue.id, reason: 'queue.expire' }).catch(() => undefined);
  }

  /** Changes to one user's queues, applied in order in one log record. */
  private commitQueue(owner: QueueContext, ...changes: QueueChange[]): Promise<void> {
    // A read-only server (see failStorage) still serves events: its queues live in memory only, as the
    // changes they could announce cannot happen, and the next boot's clients register again.
    if (this.storageFailure !== null) {
      for (const change of changes) this.applyQueue(change);
      return Promise.resolve();
    }
    // In a cluster, a queue is its node's alone (see RuntimeOptions.replication): once every change its
    // initial state may hold is durable, it is.
    if (this.options.replication) {
      for (const change of changes) this.applyQueue(change);
      return this.settled();
    }
    return this.commit({ realmId: owner.realmId, userId: owner.userId, scope: 'queue' }, changes, () => {
      for (const change of changes) this.applyQueue(change);
      return [];
    });
  }

  private applyQueue(change: QueueChange): void {
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
    }
  }

  // ---- recovery and snapshots ---------------------------------------------------------------------------

  /**
   * Boot: load the snapshots, replay the log after them through the same apply, then serve. Event queues
   * come back too, after a crash as after a graceful stop: a queue's snapshot holds its events up to the
   * snapshot's position, and the replay announces the later changes again to the queues that took them
   * (each queue's logged events get the ids they had, see queue/buffer.ts). With `queues: false` the queues
   * in memory are left alone (reloading after a failed write).
   */
  recover(options: { queues?: boolean } = {}): { snapshots: number; replayed: number; queues: number; tornTail: { seq: number; error: string } | null } {
    const withQueues = options.queues !== false;
    this.replaying = true;
    const clean = this.store.wasCleanShutdown();
    let snapshots = 0;
    let undelivered: UndeliveredRecord = [];
    const snapshotSeq = new Map<string, number>();
    const realms = new RealmSnapshotLoader();
    const queues = new QueueSnapshotLoader();
    // Message chunks stay on disk: their index records say what a boot needs (realm/snapshot.ts).
    for (const record of this.store.readSnapshots(MESSAGE_CHUNK_KIND)) {
      snapshots++;
      snapshotSeq.set(`${record.kind}:${record.id}`, record.seq);
      if (withQueues) {
        const queueId = queues.take(record.kind, record.id, record.data);
        // Replay skips the log entries a queue's record covers, whichever shape it has.
        if (queueId !== null) snapshotSeq.set(`queue:${queueId}`, record.seq);
      }
      if (record.kind === 'realm') this.startRealm(realms.realm(record.data as RealmRecord), false);
      else if (record.kind === MESSAGE_INDEX_KIND) realms.index(record.id, record.data as MessageIndexRecord);
      else if (record.kind === 'user') {
        const data = record.data as { value: 'active' | 'deactivated'; state: UserRecord };
        this.startUser(userFromRecord(data.state), data.value);
      } else if (record.kind === UNDELIVERED[0] && withQueues) {
        undelivered = record.data as UndeliveredRecord;
      }
    }
    const firstChunk = (prefix: string) => {
      for (const record of this.store.readSnapshotsOf(MESSAGE_CHUNK_KIND, prefix)) return record.data as MessageChunkRecord;
      return undefined;
    };
    for (const prefix of realms.needsChunks(firstChunk)) {
      for (const record of this.store.readSnapshotsOf(MESSAGE_CHUNK_KIND, prefix)) {
        snapshots++;
        realms.chunk(record.id, record.data as MessageChunkRecord);
      }
    }
    realms.finish();
    if (withQueues) for (const id of queues.finish(this.queues, !clean)) this.dirty.legacyQueues.add(id);
    // A realm loaded from a record of format 1 is written in chunks by the boot's snapshot.
    for (const actor of this.realms.values()) {
      const state = actor.getSnapshot().context.state;
      if (state.messages.unsavedChunks.size > 0 || state.messages.bodies.unsaved.size > 0) this.dirty.realms.add(state.realmId);
    }
    // Events the snapshot's changes announced that had not reached their queues when it was taken: they
    // reach them now, in order, as they did in the process that wrote it. The log after the snapshot follows.
    for (const { event, queueIds } of undelivered) {
      const queues = queueIds.map((id) => this.queues.find(id)).filter((queue) => queue !== undefined);
      if (queues.length > 0) this.queues.deliver(queues, event, true);
    }
    let replayed = 0;
    // Consecutive entries of one realm are applied in batches, one machine event instead of one per entry,
    // while no queue takes their events again (reannounce needs each entry's own position). Batches stay
    // small, so that the decoded entries die young rather than all live until the end of the log.
    let batchRealmId: number | null = null;
    let batchAt = 0;
    const batch: RealmChange[] = [];
    const flush = () => {
      if (batchRealmId !== null) this.applyRealm(batchRealmId, batch.splice(0), batchAt);
      batchRealmId = null;
    };
    for (const entry of this.store.readLog(0)) {
      if (entry.scope === 'queue') {
        if (!withQueues) continue;
        // A record may hold several queues' changes (evictions with a registration): each queue's own snapshot decides.
        const uncovered = (entry.changes as QueueChange[]).filter((change) => {
          const covered = snapshotSeq.get(`queue:${change.type === 'queue.registered' ? change.context.queueId : change.queueId}`);
          return covered === undefined || entry.seq > covered;
        });
        if (uncovered.length === 0) continue;
        flush();
        for (const queueChange of uncovered) this.applyQueue(queueChange);
        replayed++;
        continue;
      }
      const owner = entry.userId === undefined ? `realm:${entry.realmId}` : `user:${userKey(entry.realmId, entry.userId)}`;
      const covered = snapshotSeq.get(owner);
      if (covered !== undefined && entry.seq <= covered) continue;
      replayed++;
      const reannouncing = withQueues && this.queues.size > 0;
      if (!reannouncing && entry.userId === undefined) {
        if (batchRealmId !== entry.realmId || batch.length >= REPLAY_BATCH) {
          flush();
          batchRealmId = entry.realmId;
        }
        batchAt = entry.at;
        for (const change of entry.changes as RealmChange[]) batch.push(change);
        continue;
      }
      flush();
      this.reannouncing = reannouncing;
      const deliveries =
        entry.userId === undefined
          ? this.applyRealm(entry.realmId, entry.changes as RealmChange[], entry.at)
          : this.applyUser(entry.realmId, entry.userId, entry.changes as UserChange[]);
      for (const delivery of deliveries) this.reannounce(delivery, entry.seq, snapshotSeq);
      this.reannouncing = false;
    }
    flush();
    for (const actor of this.realms.values()) actor.send({ type: 'realm.recovered' });
    this.replaying = false;
    if (withQueues) {
      // A crash may have cut short never-logged events whose ids the clients saw (see EventBuffer.rebuilt).
      for (const queue of this.queues.all()) queue.buffer.rebuilt = !clean;
    }
    return { snapshots, replayed, queues: withQueues ? this.queues.size : 0, tornTail: this.store.tornTail };
  }

  /**
   * Delivers a replayed change's event to the queues that took it when it happened: those live now, except
   * ones whose snapshot already holds it. (A queue that took an event is written by the next snapshot, with
   * every actor that changed; so an entry older than an actor's snapshot has nothing for any queue.)
   */
  private reannounce(delivery: Delivery, seq: number, snapshotSeq: ReadonlyMap<string, number>): void {
    for (const routed of this.queues.resolve(delivery)) {
      const queues = routed.queues.filter((queue) => (snapshotSeq.get(`queue:${queue.id}`) ?? -1) < seq);
      if (queues.length > 0) this.queues.deliver(queues, routed.event, true);
    }
  }

  /**
   * Writes a snapshot of every actor and event queue changed since the last one and trims the log below
   * it. With `final` (graceful shutdown) every queue is written, with what its client acknowledged, and the
   * directory is marked clean.
   */
  async snapshot(final = false): Promise<number> {
    // Read-only after a storage failure: the log holds everything in memory (see failStorage), and the next
    // boot starts from it. (A snapshot would carry the sequence numbers of the failed entries too.)
    if (this.storageFailure !== null) return 0;
    // Low on disk space: a snapshot can be a large commit; the log keeps everything until there is room.
    if (this.options.writesRefused?.()) return 0;
    const seq = this.seq;
    const records: SnapshotRecord[] = [];
    const record = (kind: string, id: string, data: unknown) => records.push({ v: FORMAT_VERSION, seq, kind, id, data });
    const deleted: [string, string][] = [];
    const dirtyRealms = [...this.dirty.realms];
    const dirtyUsers = [...this.dirty.users];
    const removedQueues = [...this.dirty.removedQueues];
    const legacyQueues = [...this.dirty.legacyQueues];
    this.dirty.realms.clear();
    this.dirty.users.clear();
    this.dirty.removedQueues.clear();
    this.dirty.legacyQueues.clear();
    const taken: [RealmState, RealmSnapshot][] = [];
    const bodies: BodyWrite[] = [];
    for (const realmId of dirtyRealms) {
      const state = this.realmState(realmId);
      const snapshot = realmSnapshot(state);
      taken.push([state, snapshot]);
      record('realm', String(realmId), snapshot.realm);
      for (const [kind, id, data] of snapshot.chunks) {
        if (data) record(kind, id, data);
        else deleted.push([kind, id]);
      }
      for (const [messageId, body] of snapshot.bodies) bodies.push({ realmId, messageId, body });
    }
    for (const key of dirtyUsers) {
      const snapshot = this.users.get(key)?.getSnapshot();
      if (snapshot) record('user', key, { value: snapshot.value, state: userToRecord(snapshot.context.state) });
    }
    const queues = final ? this.queues.all() : this.queues.unsaved();
    const written = writeQueues(queues, this.queues.payloads);
    for (const { kind, id, data } of written.records) record(kind, id, data);
    for (const queue of queues) queue.unsaved = false;
    for (const id of removedQueues) deleted.push([QUEUE_KIND, id]);
    for (const id of legacyQueues) deleted.push([LEGACY_QUEUE_KIND, id]);
    deleted.push(...written.deleted);
    // The snapshot covers changes whose events are not in their queues yet (their commit is in flight): the
    // queues' records above lack them, and a replay would not announce them again. They are stored beside.
    const undelivered: UndeliveredRecord = [];
    for (const list of this.undelivered.values()) {
      for (const { event, queues: to } of list) undelivered.push({ event, queueIds: to.map((queue) => queue.id) });
    }
    if (undelivered.length > 0) record(UNDELIVERED[0], UNDELIVERED[1], undelivered);
    else deleted.push(UNDELIVERED);
    try {
      await this.store.writeSnapshots(seq, records, deleted, final, bodies);
      for (const [state, snapshot] of taken) bodiesSaved(state, snapshot);
      this.searchSync?.snapshotted(seq);
    } catch (error) {
      // Nothing was written: these actors are still only covered by the log, which was not trimmed either.
      for (const realmId of dirtyRealms) this.dirty.realms.add(realmId);
      for (const [state, snapshot] of taken) restoreUnsaved(state, snapshot);
      for (const key of dirtyUsers) this.dirty.users.add(key);
      for (const id of removedQueues) this.dirty.removedQueues.add(id);
      for (const id of legacyQueues) this.dirty.legacyQueues.add(id);
      for (const queue of queues) queue.unsaved = true;
      written.undo();
      throw error;
    }
    return records.length;
  }

  /**
   * Before `email_address_visibility` was applied only the user actor kept it; a user who had set it gets it
   * in the realm's profile at the first start that applies it, as a logged change (so log and snapshots
   * agree). Returns how many users were brought in line; later starts find none.
   */
  async adoptEmailVisibility(): Promise<number> {
    let adopted = 0;
    for (const [realmId, actor] of this.realms) {
      for (const user of actor.getSnapshot().context.state.users.values()) {
        const settings = this.users.get(userKey(realmId, user.userId))?.getSnapshot().context.state.settings;
        if (user.isBot || !settings) continue;
        const visibility = settingValue(settings, 'email_address_visibility');
        if (typeof visibility !== 'number' || visibility === visibilityOf(user)) continue;
        await this.execute(realmId, { type: 'user.set_email_visibility', userId: user.userId, visibility });
        adopted++;
      }
    }
    return adopted;
  }

  /** The full-text index, kept in step with the log; throws when this runtime has none. */
  searchIndex(): SearchIndex {
    if (!this.searchSync) throw new ChatError(ErrorCode.BAD_NARROW, 'Search is not available here', 400);
    // Every commit answered so far is in what the search reads.
    this.searchSync.flush();
    return this.searchSync.index;
  }

  /** After recovery (and a torn tail's removal): brings the full-text index to the end of the log. */
  repairSearchIndex(): ReturnType<SearchSync['repair']> | null {
    if (!this.searchSync) return null;
    const realms = [...this.realms.values()].map((actor) => actor.getSnapshot().context.state);
    return this.searchSync.repair(this.store, realms);
  }

  /** After recovery: a snapshot of what the replay rebuilt, which also clears the clean mark. */
  async markRunning(): Promise<void> {
    await this.snapshot(false);
  }
}

export type { Queue };

/** The snapshot record of events a snapshot's changes announced that had not reached their queues. */
const UNDELIVERED: [string, string] = ['undelivered', 'events'];
type UndeliveredRecord = { event: Delivery['event']; queueIds: string[] }[];
