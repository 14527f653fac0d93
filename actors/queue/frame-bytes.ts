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
 * Writes a push connection's frame as UTF-8: a head, the events handed out (EventBuffer.handOutAfter) as the
 * JSON array a poll's answer holds (each `{"id":N,` and its payload's body, as EventBuffer.render writes
 * it), and a tail. Each frame of a fan-out differs from the others only in its head (its queue's id) and
 * the events' ids: the payloads are encoded once and copied, where a text frame would be concatenated,
 * flattened and converted to UTF-8 for every socket.
 */
export class FrameWriter {
  private readonly reused = new Uint8Array(REUSED_BYTES);

  /**
   * The frame's bytes: a view that the next call overwrites, to be sent at once. `head` and `tail` are
   * ASCII (see asciiJson): copied a character at a time, they cost less than bytes of their own per socket
   * would, which are two more objects to fetch from memory for each frame of a fan-out.
   */
  write(head: string, events: readonly BufferedEvent[], first: number, tail: string): Uint8Array {
    let size = head.length + 2 + (events.length - first - 1) + tail.length;
    for (let i = first; i < events.length; i++) {
      const event = events[i]!;
      size += OPEN_EVENT.length + digitCount(event.id) + 1 + payloadUtf8(event.payload).length;
    }
    const out = size <= REUSED_BYTES ? this.reused : new Uint8Array(size);
    let at = writeAscii(out, 0, head);
    out[at++] = OPEN_ARRAY;
    for (let i = first; i < events.length; i++) {
      if (i > first) out[at++] = COMMA;
      const event = events[i]!;
      at = writeDigits(out, writeAscii(out, at, OPEN_EVENT), event.id);
      out[at++] = COMMA;
      const body = payloadUtf8(event.payload);
      out.set(body, at);
      at += body.length;
    }
    out[at++] = CLOSE_ARRAY;
    writeAscii(out, at, tail);
    return new Uint8Array(out.buffer, 0, size);
  }
}

/**
 * JSON text of a string in ASCII alone: any other character escaped as `\uXXXX`, the same string to a
 * JSON reader. (Queue ids are ASCII already: this only makes sure.)
 */
export function asciiJson(text: string): string {
  return JSON.stringify(text).replace(/[^\x00-\x7f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function writeAscii(out: Uint8Array, at: number, text: string): number {
  for (let i = 0; i < text.length; i++) out[at + i] = text.charCodeAt(i);
  return at + text.length;
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
