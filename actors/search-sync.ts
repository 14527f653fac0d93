import type { LogRecord, Persistence } from './persistence.ts';
import type { RealmChange } from './realm/changes.ts';
import { isHistoryChange } from './realm/version.ts';
import type { RealmState } from './realm/state.ts';
import { MESSAGE_CHUNK_SIZE } from './realm/messages/chunk-size.ts';
import type { IndexOp, SearchIndex } from './search-index.ts';

/** What the index takes of a realm commit's changes (sends, new contents and topics, deletions), added to `ops`. */
export function indexOps(realmId: number, changes: readonly RealmChange[], ops: IndexOp[] = []): IndexOp[] {
  for (const change of changes) {
    // Other changes alter no message: version.ts names those that do.
    if (!isHistoryChange(change)) continue;
    switch (change.type) {
      case 'message.sent': {
        const { message } = change;
        ops.push({ kind: 'put', realmId, id: message.id, content: message.content, topic: topicOf(message.recipient) });
        break;
      }
      case 'message.edited':
        if (change.content) ops.push({ kind: 'content', realmId, id: change.targetId, content: change.content.content });
        if (change.move) for (const id of change.messageIds) ops.push({ kind: 'topic', realmId, id, topic: change.move.toTopic });
        break;
      case 'messages.deleted':
        for (const group of change.groups) for (const id of group.messageIds) ops.push({ kind: 'delete', realmId, id });
        break;
      // Not what the index holds: contents and topics.
      case 'message.flags_changed':
      case 'reaction.added':
      case 'reaction.removed':
      case 'submessage.added':
        break;
      default: {
        const unknown: never = change;
        throw new Error(`unknown history change ${JSON.stringify(unknown)}`);
      }
    }
  }
  return ops;
}

/** A realm actor's commit (not a queue's, nor a user actor's): the only ones that change messages. */
const realmCommit = (record: Pick<LogRecord, 'userId' | 'scope'>) => record.scope !== 'queue' && record.userId === undefined;

const topicOf = (recipient: { kind: string; topic?: string }) => (recipient.kind === 'channel' ? recipient.topic ?? '' : '');

/**
 * How long the index writes of durable commits wait to be batched: short enough that a crash loses little
 * for the boot to repair (nothing is lost: the log has it), long enough to gather a burst of sends. FTS5
 * writes a segment per transaction and merges them as they pile up: the worker spent about 8.7 us per
 * message in transactions of 30 (10 ms of sends at 3,000/s) and 6.0 in transactions of 500 (2026-11-26).
 * A search never waits for it: it hands the pending writes over first.
 */
const FLUSH_DELAY_MS = 100;

/** Pending ops that are handed over at once, without waiting for the timer: one handover stays small. */
const FLUSH_MAX_OPS = 2000;

/** Log records replayed into the index per transaction at boot. */
const CATCH_UP_BATCH = 1000;

/**
 * Most records of the log archive a boot replays into an index behind the snapshot's position, before the
 * listening starts (about 40 us each here); further behind, the index is built again in the background.
 */
const KEPT_CATCH_UP_LIMIT = 20_000;

/** The ids the background build reads at a time, one chunk of them (paged.ts), then waits for the index to write them. */
const BUILD_SLICE = MESSAGE_CHUNK_SIZE;

/**
 * Keeps the full-text index exact by construction. LMDB and SQLite share no transaction, so the index
 * records the log position it covers: each group commit's message changes are written, with its position,
 * once the commit is durable; at boot the index catches up from the log after its position (the log
 * archive's records too, when its position is before the snapshot's), or, where those are no longer kept
 * or the index is ahead of the log (a restore), is built again from every message. A crash at any point
 * leaves an index that the next boot repairs.
 */
export class SearchSync {
  /** the position through which every durable commit reached the index (written or not: most have no ops) */
  private indexed: number;
  /**
   * Set once an index write failed: nothing more is written, so that its position stays before the
   * change it lacks, and the next boot repairs it.
   */
  private failure: unknown = null;
  /**
   * Ops of durable commits not handed to the index yet, and the position of the last of them: handed over
   * together FLUSH_DELAY_MS after the first, or before the next search reads the index (runtime.searchIndex),
   * so a search sees every commit answered before it. The index writes them off the event loop.
   */
  private pending: IndexOp[] = [];
  private pendingSeq = 0;
  private flushScheduled = false;
  /**
   * While the index is built again in the background (see build): the messages handed to it so far. Its
   * position stays 0 meanwhile, so that a crash before the end has the next boot build it again.
   */
  building: { messages: number; failed: boolean } | null = null;

  constructor(readonly index: SearchIndex) {
    this.indexed = index.position();
  }

  /** After the commit at `seq` is durable (commits are, in order). */
  committed(seq: number, record: Pick<LogRecord, 'userId' | 'scope' | 'realmId'> & { changes: readonly unknown[] }): void {
    if (this.failure !== null) return;
    try {
      if (realmCommit(record)) {
        const before = this.pending.length;
        indexOps(record.realmId, record.changes as RealmChange[], this.pending);
        if (this.pending.length > before) {
          this.pendingSeq = Math.max(this.pendingSeq, seq);
          if (this.pending.length >= FLUSH_MAX_OPS) this.flush();
          else if (!this.flushScheduled) {
            this.flushScheduled = true;
            setTimeout(() => {
              this.flushScheduled = false;
              this.flush();
            }, FLUSH_DELAY_MS).unref();
          }
        }
      }
      this.indexed = Math.max(this.indexed, seq);
    } catch (error) {
      this.failure = error;
    }
  }

  /** Writes the pending ops now. */
  flush(): void {
    if (this.failure !== null || this.pending.length === 0) return;
    const ops = this.pending;
    this.pending = [];
    try {
      this.index.post(this.building ? 0 : this.pendingSeq, ops);
    } catch (error) {
      this.failure = error;
    }
  }

  /**
   * After a snapshot at `seq` is durable, which trims the log: the stored position moves up to it, when
   * every commit up to it has reached the index, so that the next boot need not build it again. (Should a
   * write before it have failed, the index takes no more writes, this one included.)
   */
  snapshotted(seq: number): void {
    this.flush();
    if (this.failure !== null || this.building) return;
    try {
      if (this.indexed >= seq) this.index.post(this.indexed, []);
    } catch (error) {
      this.failure = error;
    }
  }

  /**
   * Boot, after the log was replayed: brings the index to the log's end. An index behind the snapshot's
   * position (a snapshot made durable before the index had written the commits it covers, then a crash)
   * catches up from the records the log archive keeps below it (Store.readKept), then from the log. Where the
   * archive no longer holds them all (pruned, or a retention of 0) or they are too many, or where the index is
   * ahead of the log (a restore), it is emptied now and built again from every message in the background
   * (`build`): a boot does not read the whole history before it serves.
   */
  repair(store: Persistence): { from: number; to: number; how: 'current' | 'log' | 'building' } {
    const from = this.index.position();
    const to = store.lastSeq();
    const snapshotSeq = store.snapshotSeq();
    this.indexed = to;
    const behind = from < snapshotSeq;
    if (from > to || (behind && (snapshotSeq - from > KEPT_CATCH_UP_LIMIT || this.catchUp(store.readKept(from), from) < snapshotSeq))) {
      this.index.clear();
      this.building = { messages: 0, failed: false };
      return { from, to, how: 'building' };
    }
    if (from === to) return { from, to, how: 'current' };
    // readLog starts after the snapshot's position, which the archive's records have reached.
    if (this.catchUp(store.readLog(from), from) < to) this.index.write(to, []);
    return { from, to, how: 'log' };
  }

  /**
   * The background build `repair` started: every message of the realms, a chunk of ids at a time, each
   * handed to the index and written before the next is read, so that the event loop is held for one chunk
   * at most and the messages waiting for the index are one chunk's. The realms are read as they are then:
   * the commits since the boot are handed over too (committed), in order with these, and whichever comes
   * later for a message is what it was last. At the end the index records the position it has reached.
   * Resolves with how many messages it wrote; rejects if the index failed or was closed (a shutdown): its
   * position is still 0 then.
   */
  async build(realms: () => Iterable<RealmState>): Promise<number> {
    const building = this.building;
    if (!building) return 0;
    try {
      for (const realmId of [...realms()].map((state) => state.realmId)) {
        for (let from = 0; ; from += BUILD_SLICE) {
          let state: RealmState | undefined;
          for (const candidate of realms()) if (candidate.realmId === realmId) state = candidate;
          if (!state || from >= state.messages.nextId) break;
          const { byId, bodies } = state.messages;
          const ops: IndexOp[] = [];
          for (let id = from; id < from + BUILD_SLICE; id++) {
            const message = byId.get(id);
            if (message) ops.push({ kind: 'put', realmId, id, content: bodies.peek(message).content, topic: topicOf(message.recipient) });
          }
          this.index.post(0, ops);
          building.messages += ops.length;
          await this.index.settled();
          if (this.failure !== null) throw this.failure;
        }
      }
      this.flush();
      if (this.failure !== null) throw this.failure;
      // In this turn: a flush after this one posts its own position.
      this.index.post(this.indexed, []);
      this.building = null;
      await this.index.settled();
      return building.messages;
    } catch (error) {
      building.failed = true;
      this.failure ??= error;
      throw error;
    }
  }

  /**
   * A commit failed and the runtime loaded its state again from the data directory (Runtime.failStorage):
   * a build under way may have read that commit's changes in between (an edit's new text, a message it
   * deleted or sent), and the index cannot tell which. The build stops with its position still 0, so that
   * the next start builds it again from what is durable. (Outside a build nothing is wrong: only durable
   * commits reach the index.)
   */
  storageFailed(): void {
    if (this.building) this.failure ??= new Error('a commit failed during the search index build');
  }

  /** Writes the index ops of `records` (those after position `reached`), a transaction per CATCH_UP_BATCH of them; returns the last position written. */
  private catchUp(records: Iterable<LogRecord>, reached: number): number {
    let ops: IndexOp[] = [];
    let batched = 0;
    for (const record of records) {
      if (realmCommit(record)) indexOps(record.realmId, record.changes as RealmChange[], ops);
      reached = record.seq;
      if (++batched === CATCH_UP_BATCH) {
        this.index.write(reached, ops);
        ops = [];
        batched = 0;
      }
    }
    if (batched > 0) this.index.write(reached, ops);
    return reached;
  }
}
