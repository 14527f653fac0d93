/**
 * One event as its queues buffer it: serialized once, shared by every queue it is delivered to, each of
 * which gives it its own id when it hands it out (see EventBuffer). A snapshot stores it once too, as a
 * record of its own that the queues' records name by key, so that an event buffered by 10,000 queues is
 * one string in memory, in the snapshot and after a restore, not 10,000.
 */
export interface Payload {
  readonly type: string;
  /** the event's JSON without its opening brace: a queue sends `{"id":N,` followed by this */
  readonly body: string;
  /** buffered events holding it */
  refs: number;
  /** the key of its snapshot record once a snapshot stored it; 0 before */
  key: number;
  /** `body` as UTF-8, made the first time a push connection sends it, then shared by every frame (see payloadUtf8) */
  utf8: Uint8Array | null;
}

const utf8 = new TextEncoder();

/**
 * A payload's body as UTF-8, encoded once: a fan-out to many sockets copies these bytes into each frame
 * instead of converting the body's text for each one. (TextEncoder's array owns its memory: a pooled
 * Buffer would keep its whole 8 KB pool alive as long as the payload is buffered.)
 */
export function payloadUtf8(payload: Payload): Uint8Array {
  return (payload.utf8 ??= utf8.encode(payload.body));
}

/** A payload's snapshot record. */
export interface PayloadRecord {
  type: string;
  body: string;
}

/**
 * The payloads of one registry: counts who holds each, so that the snapshot record of a payload no queue
 * holds any more is deleted by the next snapshot, and hands out the keys of new records.
 */
export class Payloads {
  private nextKey = 1;
  /** keys of stored payloads nothing holds any more: the next snapshot deletes their records */
  private released: number[] = [];

  /** A payload of an event serialized as JSON (an object, so never `{}`: every event has a type). */
  create(type: string, json: string): Payload {
    return { type, body: json.slice(1), refs: 0, key: 0, utf8: null };
  }

  release(payload: Payload): void {
    if (--payload.refs === 0 && payload.key !== 0) this.released.push(payload.key);
  }

  /** A payload read from a snapshot; the keys handed out later continue above the stored ones. */
  restored(key: number, record: PayloadRecord): Payload {
    if (key >= this.nextKey) this.nextKey = key + 1;
    return { type: record.type, body: record.body, refs: 0, key, utf8: null };
  }

  /** A restored payload nothing holds: its record goes with the next snapshot. */
  forget(payload: Payload): void {
    if (payload.refs === 0 && payload.key !== 0) this.released.push(payload.key);
  }

  /** The key of a payload's record, and whether the snapshot being written must store it (it is new). */
  keyFor(payload: Payload): { key: number; fresh: boolean } {
    if (payload.key !== 0) return { key: payload.key, fresh: false };
    payload.key = this.nextKey++;
    return { key: payload.key, fresh: true };
  }

  /** The records to delete now; `giveBack` returns them if the snapshot that was to delete them failed. */
  takeReleased(): number[] {
    const keys = this.released;
    this.released = [];
    return keys;
  }

  giveBack(keys: readonly number[]): void {
    this.released.push(...keys);
  }
}
