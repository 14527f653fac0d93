import type { BufferedEvent } from './buffer.ts';
import { payloadUtf8 } from './payloads.ts';

/**
 * Frames up to this size are written into one buffer reused for every frame. A larger one (a reconnect's
 * long backlog) gets a buffer of its own, so that one large frame does not keep its size in memory.
 */
const REUSED_BYTES = 64 * 1024;

const OPEN_EVENT = '{"id":';
const [OPEN_ARRAY, CLOSE_ARRAY, COMMA, ZERO] = ['[', ']', ',', '0'].map((char) => char.charCodeAt(0)) as [number, number, number, number];

/**
 * Writes what a client is sent of its queue's events as UTF-8, into one buffer reused for every frame or
 * answer: ASCII text around the events handed out (EventBuffer.handOutAfter, handOutAll) as the JSON array
 * a poll's answer holds (each `{"id":N,` and its payload's body, as eventsJson writes it). Each frame or
 * answer of a fan-out differs from the others only in its queue's id and the events' ids: the payloads are
 * encoded once and copied, where a text would be concatenated, flattened and converted to UTF-8 for every
 * client. What `done` returns is a view that the next use overwrites: it is to be sent at once.
 */
export class EventsWriter {
  private readonly reused = new Uint8Array(REUSED_BYTES);
  private out = this.reused;
  private at = 0;

  /** Starts a text of `size` bytes (asciiSize and eventsSize of its pieces). */
  start(size: number): this {
    this.out = size <= REUSED_BYTES ? this.reused : new Uint8Array(size);
    this.at = 0;
    return this;
  }

  /**
   * ASCII text (see asciiJson): copied a character at a time, it costs less than bytes of its own per client
   * would, which are more objects to fetch from memory for each frame of a fan-out.
   */
  ascii(text: string): this {
    const out = this.out;
    const at = this.at;
    for (let i = 0; i < text.length; i++) out[at + i] = text.charCodeAt(i);
    this.at = at + text.length;
    return this;
  }

  /** The events from index `first` on, as a JSON array. */
  events(events: readonly BufferedEvent[], first: number): this {
    const out = this.out;
    let at = this.at;
    out[at++] = OPEN_ARRAY;
    for (let i = first; i < events.length; i++) {
      if (i > first) out[at++] = COMMA;
      const event = events[i]!;
      this.at = at;
      at = writeDigits(out, this.ascii(OPEN_EVENT).at, event.id);
      out[at++] = COMMA;
      const body = payloadUtf8(event.payload);
      out.set(body, at);
      at += body.length;
    }
    out[at++] = CLOSE_ARRAY;
    this.at = at;
    return this;
  }

  done(): Uint8Array {
    return new Uint8Array(this.out.buffer, 0, this.at);
  }

  /** A push connection's frame: `head` and `tail` (ASCII) around the events. */
  write(head: string, events: readonly BufferedEvent[], first: number, tail: string): Uint8Array {
    return this.start(head.length + eventsSize(events, first) + tail.length).ascii(head).events(events, first).ascii(tail).done();
  }
}

/** The bytes of the events from index `first` on, as a JSON array (EventsWriter.events). */
export function eventsSize(events: readonly BufferedEvent[], first: number): number {
  let size = 2 + Math.max(0, events.length - first - 1);
  for (let i = first; i < events.length; i++) {
    const event = events[i]!;
    size += OPEN_EVENT.length + digitCount(event.id) + 1 + payloadUtf8(event.payload).length;
  }
  return size;
}

/**
 * JSON text of a string in ASCII alone: any other character escaped as `\uXXXX`, the same string to a
 * JSON reader. (Queue ids are ASCII already: this only makes sure.)
 */
export function asciiJson(text: string): string {
  return JSON.stringify(text).replace(/[^\x00-\x7f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Event ids are integers from 0 to 2^53 (buffer.ts). */
function digitCount(id: number): number {
  let count = 1;
  for (let rest = id; rest >= 10; rest = Math.floor(rest / 10)) count++;
  return count;
}

function writeDigits(out: Uint8Array, at: number, id: number): number {
  const end = at + digitCount(id);
  let rest = id;
  for (let i = end - 1; i >= at; i--) {
    out[i] = ZERO + (rest % 10);
    rest = Math.floor(rest / 10);
  }
  return end;
}
