import { isImageName } from '../attachments/state.ts';
import type { PagedMessages } from './paged.ts';
import { SECOND_USE_SPAN, SecondUse } from './second-use.ts';
import type { Step } from './turns.ts';
import type { EditHistoryEntry, MessageBody, StoredMessage } from './state.ts';

/** The bodies snapshots stored for the messages of a realm (snapshots/store.ts, through the runtime). */
export interface StoredBodies {
  read(messageId: number): MessageBody | undefined;
  /** the stored record (BodyRecord) as its bytes, valid until the next read from the data directory */
  readBytes(messageId: number): Uint8Array | undefined;
  /** all of them, in id order */
  scan(): Iterable<[messageId: number, body: MessageBody]>;
  /** the ids of all of them, in order */
  ids(): Iterable<number>;
}

/** StoredMessage.contentHas: the rendering links somewhere (`has:link`) */
export const HAS_LINK = 1;
/** an inline image, or a link to an image file (`has:image`, with the uploaded images the message links) */
export const HAS_IMAGE = 2;

/** What a rendering holds, for the `has:` narrows. */
export function contentHas(renderedContent: string): number {
  let has = renderedContent.includes('<a ') ? HAS_LINK : 0;
  if (renderedContent.includes('<img ')) has |= HAS_IMAGE;
  else {
    for (const match of renderedContent.matchAll(/<a [^>]*href="([^"]*)"/g)) {
      if (isImageName(match[1]!.split(/[?#]/, 1)[0]!)) {
        has |= HAS_IMAGE;
        break;
      }
    }
  }
  return has;
}

/** A body as stored: by position, the edit history left out when empty (as for most messages). */
export type BodyRecord = [content: string, renderedContent: string, editHistory?: EditHistoryEntry[]];

export const bodyRecord = (body: MessageBody): BodyRecord =>
  body.editHistory.length ? [body.content, body.renderedContent, body.editHistory] : [body.content, body.renderedContent];

/** Shared by the bodies read without an edit history: replaced by an edit, never changed in place. */
const NO_EDITS: EditHistoryEntry[] = Object.freeze([]) as unknown as EditHistoryEntry[];

export const bodyFromRecord = (record: BodyRecord): MessageBody => ({ content: record[0], renderedContent: record[1], editHistory: record[2] ?? NO_EDITS });

/** BodyRecord's texts by position */
export const CONTENT = 0;
export const RENDERED_CONTENT = 1;

/** msgpack's headers of an array of two (a record without edit history) and of strings */
const ARRAY_OF_TWO = 0x92;
const FIXSTR = 0xa0;
const FIXSTR_MAX = 0xbf;
const STR8 = 0xd9;
const STR16 = 0xda;
const STR32 = 0xdb;

/** Where the string whose header is at `at` starts, -1 if there is none. */
function stringStart(bytes: Uint8Array, at: number): number {
  const header = bytes[at];
  if (header === undefined) return -1;
  if (header >= FIXSTR && header <= FIXSTR_MAX) return at + 1;
  if (header === STR8) return at + 2;
  if (header === STR16) return at + 3;
  if (header === STR32) return at + 5;
  return -1;
}

/** The byte length of the string whose header is at `at` (stringStart found one). */
function stringLength(bytes: Uint8Array, at: number): number {
  const header = bytes[at]!;
  if (header <= FIXSTR_MAX) return header - FIXSTR;
  if (header === STR8) return bytes[at + 1]!;
  if (header === STR16) return (bytes[at + 1]! << 8) | bytes[at + 2]!;
  return ((bytes[at + 1]! << 24) >>> 0) + ((bytes[at + 2]! << 16) | (bytes[at + 3]! << 8) | bytes[at + 4]!);
}

/**
 * Where a stored record's text (CONTENT or RENDERED_CONTENT) starts as UTF-8 in its bytes (msgpack, as
 * snapshots/codec.ts writes it), for a reader that copies the text without decoding the record; -1 for a
 * record with an edit history (which that reader needs decoded) or of another shape. recordTextEnd: its end.
 */
export function recordTextStart(bytes: Uint8Array, field: number): number {
  if (bytes[0] !== ARRAY_OF_TWO) return -1;
  let at = 1;
  for (let i = 0; i < field; i++) {
    const start = stringStart(bytes, at);
    if (start < 0) return -1;
    at = start + stringLength(bytes, at);
  }
  const start = stringStart(bytes, at);
  return start < 0 || start + stringLength(bytes, at) > bytes.length ? -1 : start;
}

export function recordTextEnd(bytes: Uint8Array, field: number): number {
  let at = 1;
  for (let i = 0; i < field; i++) at = stringStart(bytes, at) + stringLength(bytes, at);
  return stringStart(bytes, at) + stringLength(bytes, at);
}

/**
 * Bodies read back from the data directory that stay decoded, the most recently read first to stay: a page
 * of a busy topic read again and again costs one read per message once. About 1 KB each for a message of
 * a few hundred characters: a few MB of heap per organization. CHAT_MESSAGE_BODY_CACHE sets another size.
 * A body enters the cache when read a second time (second-use.ts): a read over a cold history leaves none.
 */
export const DEFAULT_BODY_CACHE = 4096;

/**
 * Bodies read ahead per turn of the event loop for a change that rewrites many (see readAhead): a read and
 * its decoding cost a few microseconds, so a slice holds the loop for a few milliseconds.
 */
export const READ_AHEAD_SLICE = 1000;

/** Bodies being read ahead for a change, and how to let go of those it did not take. */
export interface ReadAhead {
  /** reads the next slice; true once all are read */
  step: Step<true>;
  release(): void;
}

/**
 * A realm's message bodies. A body set by a change (a send, an edit, an import) stays on its message until
 * a snapshot has stored it, in the snapshot's own transaction, so that the snapshot and the bodies always
 * agree and the log after the snapshot holds every body that is not stored; then the message lets it go, and
 * reads go to the data directory.
 */
export class MessageBodies {
  /** null until the runtime attaches its data directory: every body is on its message then */
  private source: StoredBodies | null = null;
  private cacheLimit = DEFAULT_BODY_CACHE;
  private readonly cache = new Map<number, MessageBody>();
  /** the bodies read once lately: the next read of one caches it */
  private readOnce = new SecondUse(SECOND_USE_SPAN * DEFAULT_BODY_CACHE);
  /** stored bodies read ahead for a change about to rewrite them (readAhead), until it does */
  private readonly ahead = new Map<number, MessageBody>();
  /** messages whose body the next snapshot writes, or removes when the message is gone */
  unsaved = new Set<number>();

  /** how many read bodies stay decoded (CHAT_MESSAGE_BODY_CACHE) */
  get limit(): number {
    return this.cacheLimit;
  }

  /** how many read bodies are decoded now */
  get cached(): number {
    return this.cache.size;
  }

  attach(source: StoredBodies, cacheLimit: number): void {
    this.source = source;
    this.cacheLimit = cacheLimit;
    this.readOnce = new SecondUse(SECOND_USE_SPAN * cacheLimit);
  }

  /** Reads from where `other` reads (a store loaded for a realm started with another). */
  adopt(other: MessageBodies): void {
    this.source = other.source;
    this.cacheLimit = other.cacheLimit;
    this.readOnce = other.readOnce;
  }

  /** The message's body, kept in the cache when it had to be read and was read lately already. */
  of(message: StoredMessage): MessageBody {
    if (message.body) return message.body;
    const cached = this.cache.get(message.id);
    if (cached) {
      // Read again: it goes to the back of the eviction order.
      this.cache.delete(message.id);
      this.cache.set(message.id, cached);
      return cached;
    }
    const body = this.read(message.id);
    if (!this.readOnce.again(message.id)) return body;
    this.cache.set(message.id, body);
    if (this.cache.size > this.cacheLimit) this.cache.delete(this.cache.keys().next().value!);
    return body;
  }

  /**
   * What `of` gives, except for a body that would be read from the data directory and not kept (read once
   * lately: a cold read): then its stored record's bytes, valid until the next read, for a reader that copies
   * the text it needs from them at once (recordTextStart) instead of decoding the body.
   */
  ofOrRecord(message: StoredMessage): MessageBody | Uint8Array {
    if (message.body || this.source === null || this.cache.has(message.id) || this.readOnce.seen(message.id)) return this.of(message);
    this.readOnce.again(message.id);
    const bytes = this.source.readBytes(message.id);
    if (!bytes) throw new Error(`the body of message ${message.id} is not stored`);
    return bytes;
  }

  /** The message's body without caching it: for walks over many messages (a scan, an export, a rebuild). */
  peek(message: StoredMessage): MessageBody {
    return message.body ?? this.cache.get(message.id) ?? this.ahead.get(message.id) ?? this.read(message.id);
  }

  /**
   * Reads the stored bodies of `ids` ahead of a change that rewrites each of them (a topic move adds an entry
   * to every moved message's edit history), a slice per `step`: the reads are spread over turns of the event
   * loop (turns.ts) and the change, applied in one turn, reads none. A change that sets or drops one of these
   * bodies meanwhile replaces the copy read ahead, so the copies are always the stored bodies; `release`
   * lets go of those the change did not rewrite.
   */
  readAhead(byId: PagedMessages, ids: readonly number[]): ReadAhead {
    let next = 0;
    const taken: number[] = [];
    return {
      step: () => {
        const end = Math.min(ids.length, next + READ_AHEAD_SLICE);
        for (; next < end; next++) {
          const id = ids[next]!;
          const message = byId.get(id);
          if (!message || message.body || this.cache.has(id) || this.ahead.has(id)) continue;
          this.ahead.set(id, this.read(id));
          taken.push(id);
        }
        return next === ids.length ? true : undefined;
      },
      release: () => {
        for (const id of taken) this.ahead.delete(id);
      },
    };
  }

  /** The messages of `byId` (in id order) whose body is neither in memory nor stored: a damaged directory (verify). */
  *missing(byId: PagedMessages): Generator<number> {
    const stored = this.source?.ids()[Symbol.iterator]();
    let next = stored?.next();
    for (const message of byId.values()) {
      if (message.body) continue;
      while (next && !next.done && next.value < message.id) next = stored!.next();
      if (!next || next.done || next.value !== message.id) yield message.id;
    }
  }

  /**
   * Every message of `byId` (in id order) with its body: the stored ones read in one pass over the data
   * directory (a rebuild of the search index, an export), none of them cached.
   */
  *withBodies(byId: PagedMessages): Generator<[StoredMessage, MessageBody]> {
    const stored = this.source?.scan()[Symbol.iterator]();
    let next = stored?.next();
    for (const message of byId.values()) {
      if (message.body) {
        yield [message, message.body];
        continue;
      }
      while (next && !next.done && next.value[0] < message.id) next = stored!.next();
      yield [message, next && !next.done && next.value[0] === message.id ? next.value[1] : this.read(message.id)];
    }
  }

  /** A change gave the message this body. */
  set(message: StoredMessage, body: MessageBody): void {
    message.body = body;
    this.cache.delete(message.id);
    this.ahead.delete(message.id);
    this.unsaved.add(message.id);
  }

  /** The message was deleted: the next snapshot removes its body. */
  dropped(messageId: number): void {
    this.cache.delete(messageId);
    this.ahead.delete(messageId);
    this.unsaved.add(messageId);
  }

  /** For a snapshot: the messages whose body it writes; they count as saved from now on. */
  take(): Set<number> {
    const taken = this.unsaved;
    this.unsaved = new Set();
    return taken;
  }

  /**
   * After the snapshot that stored `stored` is durable: those bodies leave memory. One that a change replaced
   * since (or a reload, see Runtime.recover) is not the one stored, and stays.
   */
  saved(byId: PagedMessages, stored: ReadonlyMap<number, MessageBody>): void {
    for (const [id, body] of stored) {
      const message = byId.get(id);
      if (message?.body === body) message.body = null;
    }
  }

  /** After a snapshot that could not be written: its bodies are unsaved again. */
  restore(taken: ReadonlySet<number>): void {
    for (const id of taken) this.unsaved.add(id);
  }

  private read(messageId: number): MessageBody {
    const body = this.source?.read(messageId);
    // A message without its body in memory has it stored: anything else is a damaged data directory.
    if (!body) throw new Error(`the body of message ${messageId} is not stored`);
    return body;
  }
}
