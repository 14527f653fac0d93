import { FORMAT_VERSION } from '../snapshots/codec.ts';
import { ChatError, ErrorCode } from './errors.ts';
import type { Delivery } from './events.ts';
import type { LogRecord, Persistence } from './persistence.ts';
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
import type { QueueContext, QueueSpec } from './queue/spec.ts';
import type { RegistrationView } from './register/initial-state.ts';
import type { RealmChange } from './realm/changes.ts';
import type { RealmCommand } from './realm/commands.ts';
import { decideRealm, type Clock } from './realm/decide.ts';
import { readAheadFor, type DecidedAhead } from './realm/messages/read-ahead.ts';
import { realmFromRecord, realmToRecord, type RealmRecord, type RealmState } from './realm/state.ts';
import { ActorRegistry, userKey, type PersonalRecord, type RealmActor, type UserActor } from './registry.ts';
import { Replay, type Recovered } from './replay.ts';
import { writeSnapshot } from './snapshot-writer.ts';
import type { UserChange } from './user/changes.ts';
import type { UserCommand } from './user/commands.ts';
import { decideUser } from './user/decide.ts';
import { settingValue } from './user/settings.ts';
import { userFromRecord, userToRecord, type UserState } from './user/state.ts';
import type { PersonalLimits } from './user/limits.ts';
import type { RealmLimits } from './realm/limits.ts';
import { visibilityOf } from './realm/email-visibility.ts';

export type { PersonalRecord, RealmActor, UserActor };

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
  /** the organization's URL, asked each time it is needed, as the port is known only once the server listens; absent: `http://localhost` */
  organizationUrl?(stringId: string): string;
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
  /** keys of each per-key message index each realm keeps in memory (absent: DEFAULT_KEY_CACHE) */
  keyCache?: number;
  /** ids of the stored segments of each id list index each realm keeps in memory (absent: DEFAULT_SEGMENT_CACHE) */
  segmentCache?: number;
  /** how many of each kind of personal thing one user may keep (absent: DEFAULT_PERSONAL_LIMITS) */
  personalLimits?: PersonalLimits;
  /** how many groups, channels, custom emoji, invitations and accounts each organization may have (absent: DEFAULT_REALM_LIMITS) */
  realmLimits?: RealmLimits;
}

interface CommitTarget {
  realmId: number;
  userId?: number;
  scope?: 'queue';
}

/**
 * The live path: a command is decided against its actor's state, the changes are applied in memory
 * (registry.ts, the one apply a replay uses too) and appended to the log, and once the group commit holding
 * them is durable the events they announce are delivered and the caller gets its answer. Recovery and a
 * replica's records go through replay.ts; snapshots are written by snapshot-writer.ts.
 */
export class Runtime {
  /** the actors in memory, and the one apply of changes to them */
  private readonly registry: ActorRegistry;
  private readonly replay: Replay;
  readonly realms: ReadonlyMap<number, RealmActor>;
  readonly users: ReadonlyMap<string, UserActor>;
  readonly queues: QueueRegistry;
  /** who was last active when: in memory only, never logged (see presence/store.ts) */
  readonly presence: PresenceStore;
  /** the one timer service of scheduled messages; started by the app once recovery is done */
  readonly scheduled: ScheduledDeliveries;
  private seq: number;
  private lastCommit: Promise<void> = Promise.resolve();
  /**
   * Events of changes applied but not yet durable, by log position, with the queues they go to once they
   * are. A snapshot taken meanwhile covers those changes: it stores these events too (see snapshot).
   */
  private readonly undelivered = new Map<number, Routed[]>();
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
        if (!this.replay.active) this.collectQueue(queue);
      },
    });
    this.registry = new ActorRegistry(store, this.queues, () => options.clock.now(), {
      ...(options.realmHost ? { realmHost: options.realmHost } : {}),
      ...(options.organizationUrl ? { organizationUrl: options.organizationUrl } : {}),
      ...(options.bodyCache !== undefined ? { bodyCache: options.bodyCache } : {}),
      ...(options.chunkCache !== undefined ? { chunkCache: options.chunkCache } : {}),
      ...(options.keyCache !== undefined ? { keyCache: options.keyCache } : {}),
      ...(options.segmentCache !== undefined ? { segmentCache: options.segmentCache } : {}),
      ...(options.realmLimits ? { realmLimits: options.realmLimits } : {}),
      userChanged: (state, changes) => this.scheduled.noteChanges(state, changes),
    });
    this.realms = this.registry.realms;
    this.users = this.registry.users;
    this.replay = new Replay(this.registry, this.queues, store);
    this.presence = new PresenceStore((realmId, userId) => {
      const settings = this.users.get(userKey(realmId, userId))?.getSnapshot().context.state.settings;
      return !!settings && settingValue(settings, 'presence_enabled') === true;
    }, {
      version: (realmId) => this.registry.personalVersion(realmId),
      changedSince: (realmId, version) => this.registry.personalChangesSince(realmId, version),
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
    return this.registry.realmState(realmId);
  }

  realmByStringId(stringId: string): RealmState | undefined {
    const id = this.registry.realmIdByStringId.get(stringId);
    return id === undefined ? undefined : this.realmState(id);
  }

  realmStates(): RealmState[] {
    return [...this.realms.values()].map((actor) => actor.getSnapshot().context.state);
  }

  userActor(realmId: number, userId: number): UserActor | undefined {
    return this.registry.userActor(realmId, userId);
  }

  /**
   * Decides a realm command and commits its changes; resolves once they are durable. But for a message
   * edit's read-ahead, it decides and applies before its first await: the state read right after the call
   * is the command's outcome (routes/subscriptions.ts shapes its answers so).
   */
  async execute(realmId: number, command: RealmCommand): Promise<RealmChange[]> {
    const ahead = command.type === 'message.edit' ? await this.readAhead(realmId, command) : null;
    try {
      const actor = this.realms.get(realmId);
      if (!actor || actor.getSnapshot().value !== 'ready') {
        throw new ChatError(ErrorCode.BAD_REQUEST, 'No such organization');
      }
      const state = actor.getSnapshot().context.state;
      const changes = ahead?.decidedFor(state) ?? decideRealm(state, command, this.registry.decideContext(realmId));
      if (changes.length > 0) await this.commit({ realmId }, changes, (at) => this.registry.applyRealm(realmId, changes, at, 'live'));
      return changes;
    } finally {
      ahead?.release();
    }
  }

  /** The bodies a move of many messages rewrites, read a slice per turn before it is decided (read-ahead.ts). */
  private readAhead(realmId: number, command: RealmCommand): Promise<DecidedAhead> | null {
    const actor = this.realms.get(realmId);
    // A replica forwards the command to the primary, which reads them.
    if (!actor || actor.getSnapshot().value !== 'ready' || this.options.replication?.isPrimary() === false) return null;
    return readAheadFor(actor.getSnapshot().context.state, command, this.registry.decideContext(realmId));
  }

  /** Decides a command of one user about its own state and commits its changes. */
  async executeUser(realmId: number, userId: number, command: UserCommand): Promise<UserChange[]> {
    const actor = this.users.get(userKey(realmId, userId));
    if (!actor || actor.getSnapshot().value !== 'active') throw new ChatError(ErrorCode.BAD_REQUEST, 'No such user');
    const changes = decideUser(actor.getSnapshot().context.state, command, this.options.clock, this.options.personalLimits);
    if (changes.length > 0) await this.commit({ realmId, userId }, changes, () => this.registry.applyUser(realmId, userId, changes, 'live'));
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
      client: message.client ?? 'API',
      readBySender: message.readBySender,
      scheduledMessageId: id,
    };
    let changes: RealmChange[];
    try {
      changes = decideRealm(realm.getSnapshot().context.state, command, this.registry.decideContext(realmId));
    } catch (error) {
      const reason = error instanceof ChatError ? error.message : 'Internal server error';
      const failed = decideUser(actor!.getSnapshot().context.state, { type: 'scheduled.fail', id, reason }, this.options.clock, this.options.personalLimits);
      // A deactivated sender's actor takes this change too (see user/machine.ts).
      if (failed.length > 0) await this.commit({ realmId, userId }, failed, () => this.registry.applyUser(realmId, userId, failed, 'live'));
      if (!(error instanceof ChatError)) throw error;
      return 'failed';
    }
    await this.commit({ realmId }, changes, (at) => this.registry.applyRealm(realmId, changes, at, 'live'));
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
    if (this.registry.realmIdByStringId.has(stringId)) throw new ChatError(ErrorCode.BAD_REQUEST, `Organization '${stringId}' already exists`);
    const realmId = this.nextRealmId();
    this.registry.startRealm(realmFromRecord({ ...realm, realmId, stringId }), true);
    this.registry.dirty.realms.add(realmId);
    for (const { value, state } of users) {
      this.registry.startUser(userFromRecord({ ...state, realmId }), value);
      this.registry.dirty.users.add(userKey(realmId, state.userId));
    }
    return this.realmState(realmId);
  }

  /** The id the next organization created or adopted gets. */
  nextRealmId(): number {
    return Math.max(0, ...this.realms.keys()) + 1;
  }

  async createRealm(stringId: string, name: string): Promise<RealmState> {
    if (this.registry.realmIdByStringId.has(stringId)) {
      throw new ChatError(ErrorCode.BAD_REQUEST, `Organization '${stringId}' already exists`);
    }
    const realmId = this.nextRealmId();
    const changes: RealmChange[] = [{ type: 'realm.created', realmId, stringId, name, at: this.options.clock.now() }];
    await this.commit({ realmId }, changes, (at) => this.registry.applyRealm(realmId, changes, at, 'live'));
    return this.realmState(realmId);
  }

  /**
   * Delivers events that change no state and are never persisted (typing, presence): straight to the
   * queues, in order with the committed events already delivered.
   */
  publish(deliveries: readonly Delivery[]): void {
    for (const delivery of deliveries) {
      for (const routed of this.queues.resolve(delivery)) this.queues.deliverRouted(routed);
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
          for (const routed of this.queues.resolve(delivery)) this.queues.deliverRouted(routed);
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
    const started = performance.now();
    // One time for the entry and its events, so that a replay announces them the same way.
    const at = this.options.clock.now();
    const deliveries = apply(at);
    // Taken once the changes are applied: an apply that throws (a fault, which its caller is answered with)
    // leaves no hole in the log's positions, which a boot would read as the end of the log.
    const seq = ++this.seq;
    // Recipients are resolved now, against the queues that exist when the change happens, so that a queue
    // registered later (whose initial state already holds the change) never gets it twice.
    const routes: Routed[] = [];
    for (const delivery of deliveries) for (const routed of this.queues.resolve(delivery)) routes.push(routed);
    if (routes.length > 0) this.undelivered.set(seq, routes);
    const record = { v: FORMAT_VERSION, seq, at, ...target, changes };
    const written = this.store.append(record);
    this.lastCommit = written.catch(() => undefined);
    return written.then(
      () => {
        this.searchSync?.committed(seq, record);
        this.undelivered.delete(seq);
        let count = 0;
        for (const routed of routes) {
          this.queues.deliverRouted(routed, true);
          count += routed.queues.length;
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
    const deliveries = this.replay.follow(record);
    let count = 0;
    for (const delivery of deliveries) {
      for (const routed of this.queues.resolve(delivery)) {
        this.queues.deliverRouted(routed, true);
        count += routed.queues.length;
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
    this.searchSync?.storageFailed();
    this.registry.clear();
    // The live queues stay as they are: their events were only ever delivered after being stored.
    this.recover({ queues: false });
    this.registry.dirty.realms.clear();
    this.registry.dirty.users.clear();
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
    const initial = initialState({ realm, user, personal: this.userState(realmId, userId), presence: this.presence, personalOf, personalVersion: this.registry.personalVersion(realmId) });
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
      for (const change of changes) this.registry.applyQueue(change);
      return Promise.resolve();
    }
    // In a cluster, a queue is its node's alone (see RuntimeOptions.replication): once every change its
    // initial state may hold is durable, it is.
    if (this.options.replication) {
      for (const change of changes) this.registry.applyQueue(change);
      return this.settled();
    }
    return this.commit({ realmId: owner.realmId, userId: owner.userId, scope: 'queue' }, changes, () => {
      for (const change of changes) this.registry.applyQueue(change);
      return [];
    });
  }

  // ---- recovery and snapshots ---------------------------------------------------------------------------

  /** Boot (and a reload after a failed write): the snapshots and the log replayed into the actors (replay.ts). */
  recover(options: { queues?: boolean } = {}): Recovered {
    return this.replay.recover(options);
  }

  /**
   * Drops the torn tail `recover` found, and numbers the next entries after what is left of the log. The
   * position was read before the tail went: kept, the boot's snapshot and every later entry would skip the
   * tail's positions, a hole that point-in-time restore cannot cross (verify reports it once archived
   * records lie on both sides), and that a boot before any snapshot covers it takes for a failed write,
   * dropping every entry after it.
   */
  async discardTornTail(): Promise<void> {
    await this.store.discardTornTail();
    this.seq = this.store.lastSeq();
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
    const written = await writeSnapshot(this.registry, this.queues, this.undelivered, this.store, seq, final);
    this.searchSync?.snapshotted(seq);
    return written;
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
    const building = this.searchSync.building;
    if (building?.failed) throw new ChatError(ErrorCode.BAD_NARROW, 'Search is not available: the search index could not be built (the next start builds it again)', 400);
    if (building) throw new ChatError(ErrorCode.BAD_NARROW, `Search is not available yet: the search index is being built (${building.messages} messages so far); try again shortly`, 400);
    // Every commit answered so far is in what the search reads.
    this.searchSync.flush();
    return this.searchSync.index;
  }

  /**
   * After recovery (and a torn tail's removal): brings the full-text index to the end of the log, or has it
   * built again in the background (`built` then resolves with how many messages it wrote).
   */
  repairSearchIndex(): (ReturnType<SearchSync['repair']> & { built: Promise<number> | null }) | null {
    const sync = this.searchSync;
    if (!sync) return null;
    const repaired = sync.repair(this.store);
    const realms = () => [...this.realms.values()].map((actor) => actor.getSnapshot().context.state);
    return { ...repaired, built: repaired.how === 'building' ? sync.build(realms) : null };
  }

  /** After recovery: a snapshot of what the replay rebuilt, which also clears the clean mark. */
  async markRunning(): Promise<void> {
    await this.snapshot(false);
  }
}

export type { Queue };
