import { badRequest } from '../errors.ts';

/**
 * Event ids: the n-th logged event of a queue (one that a log entry announced) has id n * EPOCH, and events
 * that are never logged (typing, presence, heartbeats, restart) take the ids after the last logged one. After
 * a crash, replaying the log gives every logged event the id it had before, so a client that resumes with the
 * last id it saw neither skips nor repeats one; only never-logged events are lost, as they would be anyway.
 */
export const EPOCH = 2 ** 20;

export interface BufferedEvent {
  id: number;
  type: string;
  /** the event serialized with its id: built once per fan-out, sent as is */
  json: string;
  /** a flag event that a later one with the same key may absorb (see flagMergeKey) */
  merge?: { key: string; messages: number[] };
}

export interface BufferRecord {
  events: BufferedEvent[];
  /** how many logged events the queue has had */
  logged?: number;
  /** the newest id handed out, -1 before the first */
  lastId?: number;
  /** before logged/lastId (consecutive ids): the next id */
  nextId?: number;
  newestPrunedId: number;
}

/** What a logged event needs beyond its JSON: its type and, for a mergeable flag event, its key and messages. */
export interface LoggedEvent {
  type: string;
  json: string;
  merge?: { key: string; messages: readonly number[]; event: Record<string, unknown> };
}

/**
 * The events of one queue not yet acknowledged. Ids only grow and are not consecutive (see EPOCH).
 * No length cap: events stay until acknowledged or the queue is collected.
 */
export class EventBuffer {
  events: BufferedEvent[] = [];
  logged = 0;
  lastId = -1;
  newestPrunedId = -1;
  /**
   * Set on a queue rebuilt after a crash: the client may acknowledge an id handed out to a never-logged event
   * that the rebuild does not have; the first acknowledgement is taken as long as it is not beyond the ids
   * the queue could have handed out.
   */
  rebuilt = false;

  static from(record: BufferRecord): EventBuffer {
    const buffer = new EventBuffer();
    buffer.events = record.events;
    buffer.newestPrunedId = record.newestPrunedId;
    if (record.logged !== undefined) {
      buffer.logged = record.logged;
      buffer.lastId = record.lastId ?? record.logged * EPOCH;
    } else {
      // Saved with consecutive ids: continue above them.
      const next = record.nextId ?? 0;
      buffer.logged = Math.ceil(next / EPOCH);
      buffer.lastId = next - 1;
    }
    return buffer;
  }

  toRecord(): BufferRecord {
    return { events: this.events, logged: this.logged, lastId: this.lastId, newestPrunedId: this.newestPrunedId };
  }

  get isEmpty(): boolean {
    return this.events.length === 0;
  }

  /**
   * Appends an event a log entry announced. A flag event absorbs an unacknowledged one with the same key
   * (the original's compaction): the older leaves, and this one carries the union of their messages.
   */
  pushLogged(event: LoggedEvent): number {
    this.logged++;
    // Only past 2^20 never-logged events in a row can the epoch be behind the ids already used.
    if (this.lastId >= this.logged * EPOCH) this.logged = Math.floor(this.lastId / EPOCH) + 1;
    const id = this.logged * EPOCH;
    this.lastId = id;
    const merge = event.merge;
    if (merge) {
      const index = this.events.findIndex((buffered) => buffered.merge?.key === merge.key);
      if (index >= 0) {
        const union = [...new Set([...this.events[index]!.merge!.messages, ...merge.messages])].sort((a, b) => a - b);
        this.events.splice(index, 1);
        const json = JSON.stringify({ id, ...merge.event, messages: union });
        this.events.push({ id, type: event.type, json, merge: { key: merge.key, messages: union } });
        return id;
      }
      this.events.push({ id, type: event.type, json: withId(id, event.json), merge: { key: merge.key, messages: [...merge.messages] } });
      return id;
    }
    this.events.push({ id, type: event.type, json: withId(id, event.json) });
    return id;
  }

  /** Appends an event no log entry holds (typing, presence, heartbeat, restart) and returns its id. */
  pushEphemeral(type: string, bodyJson: string): number {
    const id = ++this.lastId;
    this.events.push({ id, type, json: withId(id, bodyJson) });
    return id;
  }

  /** Drops every event with id <= lastEventId, with the original server's checks. */
  acknowledge(lastEventId: number): void {
    if (lastEventId < this.newestPrunedId) {
      throw badRequest(`An event newer than ${lastEventId} has already been pruned!`);
    }
    if (lastEventId === this.newestPrunedId) return;
    let count = 0;
    while (count < this.events.length && this.events[count]!.id <= lastEventId) count++;
    if (this.rebuilt) {
      if (lastEventId >= (this.logged + 1) * EPOCH) throw badRequest(`Event ${lastEventId} was not in this queue`);
      this.rebuilt = false;
      // Never-logged events before the crash may have used ids up to here: new ones go above.
      if (lastEventId > this.lastId) this.lastId = lastEventId;
    } else if (count === 0 || this.events[count - 1]!.id !== lastEventId) {
      throw badRequest(`Event ${lastEventId} was not in this queue`);
    }
    this.events.splice(0, count);
    this.newestPrunedId = lastEventId;
  }

  /** The events with ids after `id` as a JSON array text, and the newest one's id; null if there are none. */
  renderAfter(id: number): { json: string; newestId: number } | null {
    const events = this.events;
    // Usually only the newest few are new: look from the end.
    let first = events.length;
    while (first > 0 && events[first - 1]!.id > id) first--;
    if (first === events.length) return null;
    let json = '[';
    for (let i = first; i < events.length; i++) json += (i > first ? ',' : '') + this.handOut(events[i]!);
    return { json: json + ']', newestId: events[events.length - 1]!.id };
  }

  /** The buffered events as a JSON array text, handed to a client (see `handOut`). */
  render(): string {
    let out = '[';
    for (let i = 0; i < this.events.length; i++) out += (i ? ',' : '') + this.handOut(this.events[i]!);
    return out + ']';
  }

  /**
   * An event a client has been sent is never merged into a later one: the client may acknowledge its id,
   * which must stay in the queue until then (the original, too, merges only events not yet sent).
   */
  private handOut(event: BufferedEvent): string {
    if (event.merge) event.merge = undefined;
    return event.json;
  }
}

function withId(id: number, bodyJson: string): string {
  return `{"id":${id},${bodyJson.slice(1)}`;
}
