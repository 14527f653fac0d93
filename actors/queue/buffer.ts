import { badRequest } from '../errors.ts';

export interface BufferedEvent {
  id: number;
  type: string;
  /** the event serialized with its id: built once per fan-out, sent as is */
  json: string;
}

export interface BufferRecord {
  events: BufferedEvent[];
  nextId: number;
  newestPrunedId: number;
}

/**
 * The events of one queue not yet acknowledged, with per-queue ids that start at 0 and only grow.
 * No length cap: events stay until acknowledged or the queue is collected.
 */
export class EventBuffer {
  events: BufferedEvent[] = [];
  nextId = 0;
  newestPrunedId = -1;

  static from(record: BufferRecord): EventBuffer {
    const buffer = new EventBuffer();
    buffer.events = record.events;
    buffer.nextId = record.nextId;
    buffer.newestPrunedId = record.newestPrunedId;
    return buffer;
  }

  toRecord(): BufferRecord {
    return { events: this.events, nextId: this.nextId, newestPrunedId: this.newestPrunedId };
  }

  get isEmpty(): boolean {
    return this.events.length === 0;
  }

  /** Appends an event given as its JSON text without the id (`{"type":...}`) and returns the id it got. */
  push(type: string, bodyJson: string): number {
    const id = this.nextId++;
    this.events.push({ id, type, json: `{"id":${id},${bodyJson.slice(1)}` });
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
    if (count === 0 || this.events[count - 1]!.id !== lastEventId) {
      throw badRequest(`Event ${lastEventId} was not in this queue`);
    }
    this.events.splice(0, count);
    this.newestPrunedId = lastEventId;
  }

  /** The buffered events as a JSON array text. */
  render(): string {
    let out = '[';
    for (let i = 0; i < this.events.length; i++) out += (i ? ',' : '') + this.events[i]!.json;
    return out + ']';
  }
}
