import { chunkOf, MESSAGE_CHUNK_SIZE } from './chunk-size.ts';
import type { Int32Column } from './column-bytes.ts';
import { SECOND_USE_SPAN, SecondUse } from './second-use.ts';
import type { StoredMessage } from './state.ts';

/**
 * Reads a chunk back from the data directory (its snapshot record): the message at each position (id less
 * the chunk's first id) is built when first asked for, so that a page of 50 does not build 2,000 objects.
 */
export type ChunkSource = (chunk: number) => (position: number) => StoredMessage | undefined;

/**
 * What the data directory holds of a chunk's columns (its index record): its ids, their senders and
 * timestamps (unsigned), read in place: valid until the next read of the data directory.
 */
export interface ChunkColumns {
  ids: Int32Column;
  senders: Int32Column;
  timestamps: Int32Column;
}

export type ColumnSource = (chunk: number) => ChunkColumns | undefined;

/** A decoded chunk: the messages built so far by position, and how to build the others (null: all built). */
interface Page {
  chunk: number;
  messages: (StoredMessage | undefined)[];
  build: ((position: number) => StoredMessage | undefined) | null;
}

/**
 * Chunks of messages read back from the data directory that stay decoded, the most recently read first to
 * stay: 32 chunks are 64,000 messages, about 10 MB of heap per organization. CHAT_MESSAGE_CHUNK_CACHE sets
 * another size.
 */
export const DEFAULT_CHUNK_CACHE = 32;

/**
 * Chunks decoded lately and not kept (read once so far), by chunk modulo their number: the few a window reads
 * (one to a few consecutive chunks, each asked for once per message by the narrow and again by the view) stay
 * for that read and the next few, and are garbage a young-generation collection frees. Kept in the cache
 * instead, each page (its record's tables and the messages built, about 17 KB of heap) outlived two
 * scavenges, was promoted and evicted from the old generation 32 chunks later: most of what a cold read
 * left for the collector (bench/README.md, "Cold reads without promotion"). No more than the cache holds
 * (CHAT_MESSAGE_CHUNK_CACHE): a cache of one chunk keeps one recent page.
 */
const RECENT_CHUNKS = 8;

/**
 * What stays resident of one chunk's messages, by position: whether each exists, its sender and timestamp
 * (UNIX seconds, for the activity of a channel: channels/activity.ts). Per chunk rather than one column for
 * the whole history: a column sized to 50,000,000 ids is 450 MB, and growing it for the next send copied it
 * all in one turn.
 */
interface ColumnBlock {
  present: Uint8Array;
  senders: Int32Array;
  timestamps: Uint32Array;
}

function columnBlock(): ColumnBlock {
  return { present: new Uint8Array(MESSAGE_CHUNK_SIZE), senders: new Int32Array(MESSAGE_CHUNK_SIZE), timestamps: new Uint32Array(MESSAGE_CHUNK_SIZE) };
}

/**
 * A realm's messages by id, with the API of IdMap, paged by chunk (MESSAGE_CHUNK_SIZE ids): a chunk is
 * decoded from its snapshot record when a message of it is first asked for, and a cache keeps the most
 * recently used of those read again (a chunk read once is soon garbage, RECENT_CHUNKS). A chunk changed
 * since the last snapshot, or whose snapshot is still being written (`hold`), stays in memory: its record
 * would not have the change. What a boot and the hot paths need of every message stays resident in typed
 * columns per chunk, outside the V8 heap: whether it exists, its sender and its timestamp (9 bytes a
 * message; timestamps are kept to the second, past 1970).
 *
 * Messages are objects changed in place by apply.ts, which marks their chunk unsaved before it reads them
 * (markUnsaved, which keeps the chunk's page: `keepChunk`), so that a chunk it changes stays. Any other
 * holder of a message only reads it: an evicted chunk's messages are as its record has them, and a holder
 * keeps a valid, if no longer shared, object.
 */
export class PagedMessages implements Iterable<[number, StoredMessage]> {
  /** by chunk; none for a chunk without a message known yet */
  private blocks: (ColumnBlock | undefined)[] = [];
  private count = 0;
  /** one past the highest id ever present */
  private end = 0;
  /** decoded chunks, least recently used first */
  private readonly resident = new Map<number, Page>();
  private lastUsed = -1;
  /** pages read once lately, by chunk modulo their number (RECENT_CHUNKS, see there) */
  private recent: (Page | undefined)[] = new Array<Page | undefined>(RECENT_CHUNKS).fill(undefined);
  /** the chunks read once lately: the next read of one, once it left `recent`, keeps it */
  private readOnce = new SecondUse(SECOND_USE_SPAN * DEFAULT_CHUNK_CACHE);
  private source: ChunkSource | null = null;
  private columnSource: ColumnSource | null = null;
  /** chunks below this one may have columns in the data directory not read yet (a boot reads none, `restore`) */
  private lazyChunks = 0;
  /** per chunk below lazyChunks: 1 once its columns are in memory */
  private columnsRead = new Uint8Array(0);
  private limit = DEFAULT_CHUNK_CACHE;
  /** chunks whose snapshot is being written, with how many snapshots hold them */
  private readonly held = new Map<number, number>();
  /** chunks that must stay: changed since the last snapshot (MessageStore.unsavedChunks) */
  unsaved: () => ReadonlySet<number> = () => new Set();

  get size(): number {
    return this.count;
  }

  /** how many chunks are kept decoded in memory (beside the few read once lately) */
  get residentChunks(): number {
    return this.resident.size;
  }

  /**
   * Pages chunks in from `source` from now on; `limit` chunks stay decoded (CHAT_MESSAGE_CHUNK_CACHE). The
   * columns of a store restored lazily are read through `columns`.
   */
  attach(source: ChunkSource, limit: number, columns: ColumnSource | null = null): void {
    this.source = source;
    this.columnSource = columns;
    this.limit = limit;
    this.readOnce = new SecondUse(SECOND_USE_SPAN * limit);
    this.recent = new Array<Page | undefined>(Math.max(1, Math.min(RECENT_CHUNKS, limit))).fill(undefined);
    this.trim();
  }

  /** Reads from where `other` reads (a store loaded for a realm started with another). */
  adopt(other: PagedMessages): void {
    if (other.source) this.attach(other.source, other.limit, other.columnSource);
  }

  /**
   * A store of `count` messages below `end`, its columns left in the data directory: each chunk's are read
   * when one of its ids is first asked about, and then stay (9 bytes a message, outside the heap).
   */
  restore(count: number, end: number): void {
    this.count = count;
    this.end = end;
    this.lazyChunks = Math.ceil(end / MESSAGE_CHUNK_SIZE);
    this.columnsRead = new Uint8Array(this.lazyChunks);
    // Sized up front: a first read of the newest chunk would otherwise leave a gap that turns the array into
    // a dictionary.
    if (this.blocks.length < this.lazyChunks) this.blocks = Object.assign(new Array<ColumnBlock | undefined>(this.lazyChunks), this.blocks);
  }

  has(id: number): boolean {
    return this.blockOf(id)?.present[id % MESSAGE_CHUNK_SIZE] === 1;
  }

  get(id: number): StoredMessage | undefined {
    if (!this.has(id)) return undefined;
    return message(this.chunk(chunkOf(id)), id % MESSAGE_CHUNK_SIZE);
  }

  /** The message if its chunk is decoded, without reading it: for what may do without (sharing a holder list). */
  ifResident(id: number): StoredMessage | undefined {
    if (!this.has(id)) return undefined;
    const page = this.recentPage(chunkOf(id)) ?? this.resident.get(chunkOf(id));
    return page && message(page, id % MESSAGE_CHUNK_SIZE);
  }

  /** The message's sender, without reading its chunk. */
  senderOf(id: number): number | undefined {
    return this.has(id) ? this.blocks[chunkOf(id)]!.senders[id % MESSAGE_CHUNK_SIZE] : undefined;
  }

  /** The message's timestamp (UNIX seconds), without reading its chunk. */
  timestampOf(id: number): number | undefined {
    return this.has(id) ? this.blocks[chunkOf(id)]!.timestamps[id % MESSAGE_CHUNK_SIZE] : undefined;
  }

  set(id: number, message: StoredMessage): this {
    if (!Number.isSafeInteger(id) || id < 0) throw new RangeError(`not a message id: ${id}`);
    this.blockOf(id);
    this.chunk(chunkOf(id), true).messages[id % MESSAGE_CHUNK_SIZE] = message;
    this.note(id, message.senderId, message.timestamp);
    return this;
  }

  /** A message a snapshot stored, known from its chunk's index (a boot), its chunk left on disk. */
  stored(id: number, senderId: number, timestamp: number): void {
    this.note(id, senderId, timestamp);
  }

  delete(id: number): boolean {
    if (!this.has(id)) return false;
    this.chunk(chunkOf(id), true).messages[id % MESSAGE_CHUNK_SIZE] = undefined;
    this.blocks[chunkOf(id)]!.present[id % MESSAGE_CHUNK_SIZE] = 0;
    this.count--;
    return true;
  }

  /** Keeps the chunks in memory until `release`: a snapshot of them is being written. */
  hold(chunks: Iterable<number>): void {
    for (const chunk of chunks) this.held.set(chunk, (this.held.get(chunk) ?? 0) + 1);
  }

  release(chunks: Iterable<number>): void {
    for (const chunk of chunks) {
      const holds = this.held.get(chunk) ?? 0;
      if (holds <= 1) this.held.delete(chunk);
      else this.held.set(chunk, holds - 1);
    }
    this.trim();
  }

  *keys(): IterableIterator<number> {
    const chunks = Math.ceil(this.end / MESSAGE_CHUNK_SIZE);
    for (let chunk = 0; chunk < chunks; chunk++) {
      const present = this.blockOf(chunk * MESSAGE_CHUNK_SIZE)?.present;
      if (present === undefined) continue;
      for (let position = 0; position < MESSAGE_CHUNK_SIZE; position++) if (present[position] === 1) yield chunk * MESSAGE_CHUNK_SIZE + position;
    }
  }

  /** Every message in id order; chunks not in memory are decoded one at a time and not kept (a walk over all). */
  *entries(): IterableIterator<[number, StoredMessage]> {
    const chunks = Math.ceil(this.end / MESSAGE_CHUNK_SIZE);
    for (let chunk = 0; chunk < chunks; chunk++) yield* this.chunkEntries(chunk);
  }

  /**
   * The chunk's messages in id order, decoded and not kept if it is not in memory: to be read through in one
   * turn, as a change meanwhile would alter the chunk's kept page rather than this one.
   */
  *chunkEntries(chunk: number): IterableIterator<[number, StoredMessage]> {
    const base = chunk * MESSAGE_CHUNK_SIZE;
    const present = this.blockOf(base)?.present;
    if (present === undefined || present.indexOf(1) < 0) return;
    const page = this.recentPage(chunk) ?? this.resident.get(chunk) ?? this.decoded(chunk);
    for (let position = 0; position < MESSAGE_CHUNK_SIZE; position++) {
      if (present[position] !== 1) continue;
      const found = message(page, position);
      if (found) yield [base + position, found];
    }
  }

  *values(): IterableIterator<StoredMessage> {
    for (const [, message] of this.entries()) yield message;
  }

  [Symbol.iterator](): IterableIterator<[number, StoredMessage]> {
    return this.entries();
  }

  /** The columns of the id's chunk, read first if they are still in the data directory only. */
  private blockOf(id: number): ColumnBlock | undefined {
    const chunk = chunkOf(id);
    if (chunk >= 0 && chunk < this.lazyChunks && this.columnsRead[chunk] !== 1) {
      this.columnsRead[chunk] = 1;
      const columns = this.columnSource?.(chunk);
      if (columns) {
        const block = (this.blocks[chunk] ??= columnBlock());
        const { ids, senders, timestamps } = columns;
        const base = chunk * MESSAGE_CHUNK_SIZE;
        for (let i = 0; i < ids.length; i++) {
          const position = ids.at(i) - base;
          block.present[position] = 1;
          block.senders[position] = senders.at(i);
          block.timestamps[position] = timestamps.unsignedAt(i);
        }
      }
    }
    return this.blocks[chunk];
  }

  private note(id: number, senderId: number, timestamp: number): void {
    const block = (this.blocks[chunkOf(id)] ??= columnBlock());
    const position = id % MESSAGE_CHUNK_SIZE;
    if (block.present[position] !== 1) this.count++;
    block.present[position] = 1;
    if (id >= this.end) this.end = id + 1;
    block.senders[position] = senderId;
    block.timestamps[position] = timestamp;
  }

  /**
   * A change is about to alter messages of the chunk in place (markUnsaved): a page of it read once lately is
   * kept from now on, the same page, so that a message handed out from it is the one the change alters.
   */
  keepChunk(chunk: number): void {
    const page = this.recentPage(chunk);
    if (page === undefined) return;
    this.recent[chunk % this.recent.length] = undefined;
    this.admit(page);
  }

  /**
   * The chunk's messages by position, decoded now if they were not. A chunk read once lately stays among the
   * recent ones only; the cache keeps it from its next read on, or at once if it is to stay (`keep`: a change
   * sets or drops a message of it), is unsaved or held, or has no record to be read from again.
   */
  private chunk(chunk: number, keep = false): Page {
    // A recent page has no change of its own: a change keeps its chunk's page first (keepChunk).
    let page = this.recentPage(chunk);
    if (page !== undefined && !keep) return page;
    if (page !== undefined) {
      this.keepChunk(chunk);
      return page;
    }
    page = this.resident.get(chunk);
    if (page !== undefined) {
      if (chunk !== this.lastUsed) {
        // Used again: to the back of the eviction order.
        this.resident.delete(chunk);
        this.resident.set(chunk, page);
      }
      this.lastUsed = chunk;
      return page;
    }
    page = this.decoded(chunk);
    const stays = keep || this.source === null || this.unsaved().has(chunk) || this.held.has(chunk);
    if (!stays && !this.readOnce.again(chunk)) return (this.recent[chunk % this.recent.length] = page);
    return this.admit(page);
  }

  private admit(page: Page): Page {
    this.resident.set(page.chunk, page);
    this.lastUsed = page.chunk;
    if (this.resident.size > this.limit) this.trim();
    return page;
  }

  private recentPage(chunk: number): Page | undefined {
    const page = this.recent[chunk % this.recent.length];
    return page?.chunk === chunk ? page : undefined;
  }

  private decoded(chunk: number): Page {
    // Filled as messages are built: a page a cold read decodes holds the few it asked for, not 2,000 slots
    // (16 KB a page, most of what cold reads left for the collector).
    return { chunk, messages: [], build: this.source?.(chunk) ?? null };
  }

  private trim(): void {
    if (this.source === null) return;
    const unsaved = this.unsaved();
    for (const chunk of this.resident.keys()) {
      if (this.resident.size <= this.limit) break;
      // The chunk just read stays, whatever the limit.
      if (chunk === this.lastUsed || unsaved.has(chunk) || this.held.has(chunk)) continue;
      this.resident.delete(chunk);
    }
  }
}

/**
 * The message at the position of a decoded chunk, built from its record if it was not yet. Only for a
 * present id (PagedMessages.present): a deleted message's position is empty, and nothing builds it again.
 */
function message(page: Page, position: number): StoredMessage | undefined {
  return (page.messages[position] ??= page.build?.(position));
}
