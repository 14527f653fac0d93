import type { Delivery } from './events.ts';
import type { LogRecord, Persistence } from './persistence.ts';
import type { QueueChange } from './queue/changes.ts';
import type { QueueRegistry } from './queue/registry.ts';
import { QueueSnapshotLoader } from './queue/snapshot.ts';
import type { RealmChange } from './realm/changes.ts';
import type { MessageChunkRecord, MessageIndexRecord } from './realm/messages/chunks.ts';
import { CHANNEL_SUBSCRIPTIONS_KIND, MESSAGE_CHUNK_KIND, MESSAGE_INDEX_KIND, MESSAGE_KEY_KIND, RealmSnapshotLoader } from './realm/snapshot.ts';
import { messageKeysChanged } from './realm/messages/state.ts';
import type { RealmRecord, SubscriptionRecord } from './realm/state.ts';
import { userKey, type ActorRegistry, type ApplyMode, type PersonalRecord } from './registry.ts';
import { UNDELIVERED, type UndeliveredRecord } from './snapshot-writer.ts';
import type { UserChange } from './user/changes.ts';
import { userFromRecord } from './user/state.ts';

/** Realm changes replayed per machine event at boot: the event's cost is spread, the batch's memory stays small. */
const REPLAY_BATCH = 500;

export interface Recovered {
  snapshots: number;
  replayed: number;
  queues: number;
  tornTail: { seq: number; error: string } | null;
}

/** Applies one logged record of an organization or of a user (not a queue's) to the actors. */
export function applyRecord(registry: ActorRegistry, record: Pick<LogRecord, 'realmId' | 'userId' | 'at' | 'changes'>, mode: ApplyMode): Delivery[] {
  return record.userId === undefined
    ? registry.applyRealm(record.realmId, record.changes as RealmChange[], record.at, mode)
    : registry.applyUser(record.realmId, record.userId, record.changes as UserChange[], mode);
}

/**
 * The log replayed into the actors, through the registry's one `apply`: at boot, when the state is loaded
 * again after a failed write (Runtime.failStorage), and at a cluster's replica, which applies the records
 * the primary committed (Runtime.follow) as a boot that never stops.
 */
export class Replay {
  /** whether a replay is under way: a queue over its limit then stays (the log holds its removal if it went) */
  active = false;

  constructor(
    private readonly registry: ActorRegistry,
    private readonly queues: QueueRegistry,
    private readonly store: Persistence,
  ) {}

  /** A record another node committed: applied as the live path applies its own; the events it announces. */
  follow(record: LogRecord): Delivery[] {
    // A queue's record can only come from a log written before its organization became a cluster.
    return record.scope === 'queue' ? [] : applyRecord(this.registry, record, 'live');
  }

  /**
   * Boot: load the snapshots, replay the log after them through the same apply, then serve. Event queues
   * come back too, after a crash as after a graceful stop: a queue's snapshot holds its events up to the
   * snapshot's position, and the replay announces the later changes again to the queues that took them
   * (each queue's logged events get the ids they had, see queue/buffer.ts). With `queues: false` the queues
   * in memory are left alone (reloading after a failed write).
   */
  recover(options: { queues?: boolean } = {}): Recovered {
    const { registry } = this;
    const withQueues = options.queues !== false;
    this.active = true;
    const clean = this.store.wasCleanShutdown();
    let snapshots = 0;
    let undelivered: UndeliveredRecord = [];
    const snapshotSeq = new Map<string, number>();
    const realms = new RealmSnapshotLoader();
    const queues = new QueueSnapshotLoader();
    // Messages stay on disk: the realm record's head says what a boot needs (realm/snapshot.ts).
    for (const record of this.store.readSnapshots([MESSAGE_CHUNK_KIND, MESSAGE_INDEX_KIND, MESSAGE_KEY_KIND])) {
      snapshots++;
      snapshotSeq.set(`${record.kind}:${record.id}`, record.seq);
      if (withQueues) {
        const queueId = queues.take(record.kind, record.id, record.data);
        // Replay skips the log entries a queue's record covers, whichever shape it has.
        if (queueId !== null) snapshotSeq.set(`queue:${queueId}`, record.seq);
      }
      if (record.kind === 'realm') registry.startRealm(realms.realm(record.data as RealmRecord), false);
      else if (record.kind === CHANNEL_SUBSCRIPTIONS_KIND) realms.subscriptions(record.id, record.data as SubscriptionRecord[]);
      else if (record.kind === 'user') {
        const data = record.data as PersonalRecord;
        registry.startUser(userFromRecord(data.state), data.value);
      } else if (record.kind === UNDELIVERED[0] && withQueues) {
        undelivered = record.data as UndeliveredRecord;
      }
    }
    // A snapshot before format 5 has no key records: its realms are built from their chunks' index records.
    for (const prefix of realms.needsIndex()) {
      for (const record of this.store.readSnapshotsOf(MESSAGE_INDEX_KIND, prefix)) {
        snapshots++;
        realms.index(record.id, record.data as MessageIndexRecord);
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
    if (withQueues) for (const id of queues.finish(this.queues, !clean)) registry.dirty.legacyQueues.add(id);
    // A realm loaded from a record of format 1 is written in chunks by the boot's snapshot; one of format 5 or
    // before has its subscriptions written per channel.
    for (const actor of registry.realms.values()) {
      const state = actor.getSnapshot().context.state;
      if (state.messages.unsavedChunks.size > 0 || state.messages.bodies.unsaved.size > 0 || messageKeysChanged(state.messages) || state.unsavedSubscriptions.size > 0) {
        registry.dirty.realms.add(state.realmId);
      }
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
      if (batchRealmId !== null) registry.applyRealm(batchRealmId, batch.splice(0), batchAt, 'replay');
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
        for (const queueChange of uncovered) registry.applyQueue(queueChange);
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
      const deliveries = applyRecord(registry, entry, reannouncing ? 'reannounce' : 'replay');
      for (const delivery of deliveries) this.reannounce(delivery, entry.seq, snapshotSeq);
    }
    flush();
    for (const actor of registry.realms.values()) actor.send({ type: 'realm.recovered' });
    this.active = false;
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
}
