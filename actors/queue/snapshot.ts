import { EPOCH, EventBuffer, type BufferCounters, type BufferedEvent } from './buffer.ts';
import type { PayloadRecord, Payloads } from './payloads.ts';
import type { Queue, QueueRegistry } from './registry.ts';
import type { QueueContext } from './spec.ts';

/**
 * Event queues in snapshots. A queue's record names its events' payloads by key; each payload is a record of
 * its own, written once by the first snapshot that writes a queue holding it and deleted by the first after
 * no queue holds it (queue/payloads.ts). So an event delivered to many queues is stored once, and a restore
 * reads it once and shares it again.
 *
 * A queue record written before a later acknowledgement may name a payload deleted since: the queue's
 * client acknowledged that event (a payload goes only once nothing holds it, and a queue that goes has its
 * record deleted in the same snapshot), so the restore leaves it out, as the acknowledgement would.
 */
export const QUEUE_KIND = 'event-queue';
export const PAYLOAD_KIND = 'event-payload';
/** Queues written before payloads were shared: each event's JSON, with its id, in every queue's record. */
export const LEGACY_QUEUE_KIND = 'queue';

/** One buffered event: its id and its payload's key; a mergeable flag event adds its merge key and messages. */
type StoredEvent = [id: number, key: number] | [id: number, key: number, mergeKey: string, messages: number[]];

export interface QueueRecord {
  context: QueueContext;
  counters: BufferCounters;
  events: StoredEvent[];
  lastPollStartedAt: number;
}

interface LegacyQueueRecord {
  context: QueueContext;
  buffer: {
    events: { id: number; type: string; json: string; merge?: { key: string; messages: number[] } }[];
    logged?: number;
    lastId?: number;
    /** before logged/lastId (consecutive ids): the next id */
    nextId?: number;
    newestPrunedId: number;
  };
  lastPollStartedAt: number;
}

export interface WrittenQueues {
  records: { kind: string; id: string; data: unknown }[];
  deleted: [string, string][];
  /** the snapshot was not written: the payloads it stored are new again, the deletions still due */
  undo(): void;
}

/** The records of the queues a snapshot writes, the payloads they hold that no snapshot stored yet, and the deletions due. */
export function writeQueues(queues: readonly Queue[], payloads: Payloads): WrittenQueues {
  const records: WrittenQueues['records'] = [];
  const fresh: BufferedEvent['payload'][] = [];
  for (const queue of queues) {
    const events: StoredEvent[] = [];
    for (const event of queue.buffer.events) {
      const { key, fresh: isFresh } = payloads.keyFor(event.payload);
      if (isFresh) {
        fresh.push(event.payload);
        records.push({ kind: PAYLOAD_KIND, id: String(key), data: { type: event.payload.type, body: event.payload.body } satisfies PayloadRecord });
      }
      events.push(event.merge ? [event.id, key, event.merge.key, event.merge.messages] : [event.id, key]);
    }
    const record: QueueRecord = { context: queue.context, counters: queue.buffer.counters, events, lastPollStartedAt: queue.lastPollStartedAt };
    records.push({ kind: QUEUE_KIND, id: queue.id, data: record });
  }
  const released = payloads.takeReleased();
  return {
    records,
    deleted: released.map((key) => [PAYLOAD_KIND, String(key)]),
    undo() {
      for (const payload of fresh) payload.key = 0;
      payloads.giveBack(released);
    },
  };
}

/**
 * Collects the queue records of a boot's snapshots (in whatever order the store reads them) and restores
 * the queues once all are read.
 */
export class QueueSnapshotLoader {
  private readonly payloadRecords = new Map<number, PayloadRecord>();
  private readonly queues: QueueRecord[] = [];
  private readonly legacy: LegacyQueueRecord[] = [];

  /** Takes a snapshot record if it is one of the queues'; returns the queue's id for a queue record. */
  take(kind: string, id: string, data: unknown): string | null {
    switch (kind) {
      case PAYLOAD_KIND:
        this.payloadRecords.set(Number(id), data as PayloadRecord);
        return null;
      case QUEUE_KIND:
        this.queues.push(data as QueueRecord);
        return id;
      case LEGACY_QUEUE_KIND:
        this.legacy.push(data as LegacyQueueRecord);
        return id;
      default:
        return null;
    }
  }

  /** Restores the queues; returns the ids of those read from legacy records, which the next snapshot rewrites. */
  finish(registry: QueueRegistry, rebuilt: boolean): string[] {
    const { payloads } = registry;
    const shared = new Map<number, BufferedEvent['payload']>();
    for (const [key, record] of this.payloadRecords) shared.set(key, payloads.restored(key, record));
    this.payloadRecords.clear();
    for (const record of this.queues.splice(0)) {
      const events: BufferedEvent[] = [];
      for (const [id, key, mergeKey, messages] of record.events) {
        const payload = shared.get(key);
        if (!payload) continue;
        events.push(mergeKey === undefined ? { id, payload } : { id, payload, merge: { key: mergeKey, messages: messages! } });
      }
      registry.restore(record.context, EventBuffer.from(payloads, record.counters, events), rebuilt);
    }
    // Payloads whose every event was acknowledged after their queues' records were written.
    for (const payload of shared.values()) if (payload.refs === 0) payloads.forget(payload);
    const legacyIds: string[] = [];
    for (const record of this.legacy.splice(0)) {
      const { buffer } = record;
      const events: BufferedEvent[] = buffer.events.map(({ id, type, json, merge }) => ({
        id,
        // `{"id":N,...}`: the body is what follows the id.
        payload: payloads.create(type, `{${json.slice(json.indexOf(',') + 1)}`),
        ...(merge ? { merge } : {}),
      }));
      let counters: BufferCounters;
      if (buffer.logged !== undefined) {
        counters = { logged: buffer.logged, lastId: buffer.lastId ?? buffer.logged * EPOCH, newestPrunedId: buffer.newestPrunedId };
      } else {
        // Saved with consecutive ids: continue above them.
        const next = buffer.nextId ?? 0;
        counters = { logged: Math.ceil(next / EPOCH), lastId: next - 1, newestPrunedId: buffer.newestPrunedId };
      }
      const queue = registry.restore(record.context, EventBuffer.from(payloads, counters, events), rebuilt);
      queue.unsaved = true;
      legacyIds.push(queue.id);
    }
    return legacyIds;
  }
}
