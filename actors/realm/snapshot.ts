import { bodyRecord, type BodyRecord } from './messages/bodies.ts';
import {
  chunkRecords,
  IndexedStoreLoader,
  lazyStore,
  messageHead,
  MessageStoreLoader,
  type MessageChunkRecord,
  type MessageHeadRecord,
  type MessageIndexRecord,
} from './messages/chunks.ts';
import { ID_LIST, ID_SET, type KeySegmentRecord } from './messages/key-records.ts';
import { IdList } from './messages/id-list.ts';
import type { IdSet } from './messages/id-set.ts';
import { StoredIdSet } from './messages/stored-id-set.ts';
import type { LazyMap } from './messages/lazy-map.ts';
import type { ChunkColumns } from './messages/paged.ts';
import { Int32Column } from './messages/column-bytes.ts';
import { chunkRecordSlots } from './messages/chunk-slots.ts';
import { snapshotRecordOf } from '../../snapshots/records.ts';
import { keyIndexes, MESSAGE_CHUNK_SIZE, type KeyIndexCode, type MessageBody, type MessageStore } from './messages/state.ts';
import { channelSubscriptionRecords, loadSubscriptions, realmFromRecord, realmRecordWithoutMessages, type RealmRecord, type RealmState, type SubscriptionRecord } from './state.ts';

/**
 * A realm is snapshotted as one 'realm' record (everything but its messages, and the message store's
 * counters) and one record of this kind per chunk of message ids, written in the same transaction. Only the
 * chunks changed since the last snapshot are written: a busy realm's periodic snapshot no longer re-encodes
 * its whole history, and a boot decodes many small records instead of one huge one.
 */
export const MESSAGE_CHUNK_KIND = 'messages';

/** A chunk's index record (MessageIndexRecord), beside its chunk record under the same id: what a boot reads. */
export const MESSAGE_INDEX_KIND = 'message-index';

/**
 * One segment of one key of a per-key index (channel, topic, conversation, a user's flag or mentions): see
 * lazy-map.ts. Since format 5, what a boot reads of the messages is the realm record's head, which lists the
 * keys; a key's segments are read when it is first asked for.
 */
export const MESSAGE_KEY_KIND = 'message-keys';

/**
 * One channel's subscriptions (SubscriptionRecord: its members, and those who left it with the properties
 * they had), under `realm:channel`. Since format 6 the realm record holds none: a snapshot writes the
 * records of the channels whose subscriptions changed, not every subscription of the organization again (a
 * realm of 10,000 users in 21 channels took 0.3-0.6 s to encode, on the event loop, at every snapshot).
 */
export const CHANNEL_SUBSCRIPTIONS_KIND = 'subscriptions';

const subscriptionsRecordId = (realmId: number, channelId: number) => `${realmId}:${channelId}`;

/** `realm:chunk`, the chunk zero-padded so that the store (ordered by key) lists a realm's chunks in id order. */
export const chunkRecordId = (realmId: number, chunk: number) => `${realmId}:${String(chunk).padStart(10, '0')}`;

/** `realm:code:key:` then the segment, zero-padded (10 digits) so that a key's segments are listed in id order. */
const keyRecordPrefix = (realmId: number, code: KeyIndexCode, key: string) => `${realmId}:${code}:${key}:`;
const SEGMENT_DIGITS = 10;
const keyRecordId = (realmId: number, code: KeyIndexCode, key: string, segment: number) => keyRecordPrefix(realmId, code, key) + String(segment).padStart(SEGMENT_DIGITS, '0');

export interface RealmSnapshot {
  realm: RealmRecord;
  /** chunk, index, key and channel subscription records to write, or null for one to remove (it holds nothing now) */
  chunks: [kind: string, id: string, data: MessageChunkRecord | MessageIndexRecord | KeySegmentRecord | SubscriptionRecord[] | null][];
  /** the channels whose subscriptions this snapshot covers: unsaved again if it cannot be written */
  takenSubscriptions: Set<number>;
  /** the keys' segments this snapshot covers: held in memory until it is written, unsaved again if it cannot be */
  takenKeys: [LazyMap<string | number, unknown>, Map<string | number, Set<number>>][];
  /** the chunks this snapshot covers: to mark unsaved again if it cannot be written (restoreUnsaved) */
  taken: Set<number>;
  /** the message bodies to store, or null for one to remove (the message is gone) */
  bodies: [messageId: number, body: BodyRecord | null][];
  /** the messages whose bodies this snapshot covers: to mark unsaved again if it cannot be written */
  takenBodies: Set<number>;
  /** the bodies it stores, which leave memory once it is durable (bodiesSaved) */
  storedBodies: Map<number, MessageBody>;
}

/** The records of a realm's snapshot; its messages' unsaved chunks count as saved from now on. */
export function realmSnapshot(state: RealmState): RealmSnapshot {
  const store = state.messages;
  const taken = store.unsavedChunks;
  store.unsavedChunks = new Set();
  const chunks = [...taken].sort((a, b) => a - b);
  const records = chunkRecords(store, chunks);
  // Their records are written when the transaction commits: until then, a chunk read back would lack the changes.
  store.byId.hold(taken);
  const takenBodies = store.bodies.take();
  const bodies: RealmSnapshot['bodies'] = [];
  const storedBodies = new Map<number, MessageBody>();
  for (const id of takenBodies) {
    // A body set since the last snapshot is still on its message.
    const body = store.byId.get(id)?.body ?? null;
    bodies.push([id, body && bodyRecord(body)]);
    if (body) storedBodies.set(id, body);
  }
  const written: RealmSnapshot['chunks'] = chunks.flatMap((chunk, i) => {
    const id = chunkRecordId(state.realmId, chunk);
    return [[MESSAGE_CHUNK_KIND, id, records[i]!.chunk], [MESSAGE_INDEX_KIND, id, records[i]!.index]] as const;
  });
  const takenKeys: RealmSnapshot['takenKeys'] = [];
  for (const [code, index] of keyIndexes(store)) {
    const dirty = index.takeDirty();
    if (dirty.size === 0) continue;
    takenKeys.push([index as LazyMap<string | number, unknown>, dirty]);
    for (const [key, segments] of dirty) {
      // Held since takeDirty: a dirty key is in memory, or was deleted.
      const value = index.peek(key as never) as IdList | IdSet | undefined;
      for (const segment of segments) {
        const record = value === undefined ? null : value instanceof IdList ? ID_LIST.segment(value, segment) : ID_SET.segment(value, segment);
        written.push([MESSAGE_KEY_KIND, keyRecordId(state.realmId, code, String(key), segment), record]);
      }
    }
  }
  const takenSubscriptions = state.unsavedSubscriptions;
  state.unsavedSubscriptions = new Set();
  for (const [channelId, records] of channelSubscriptionRecords(state, takenSubscriptions)) {
    written.push([CHANNEL_SUBSCRIPTIONS_KIND, subscriptionsRecordId(state.realmId, channelId), records.length > 0 ? records : null]);
  }
  return {
    realm: { ...realmRecordWithoutMessages(state, true), messageHead: messageHead(store) },
    chunks: written,
    takenSubscriptions,
    takenKeys,
    taken,
    bodies,
    takenBodies,
    storedBodies,
  };
}

/** After a snapshot that could not be written: its chunks, keys and bodies are unsaved again. */
export function restoreUnsaved(state: RealmState, snapshot: Pick<RealmSnapshot, 'taken' | 'takenBodies' | 'takenKeys' | 'takenSubscriptions'>): void {
  for (const chunk of snapshot.taken) state.messages.unsavedChunks.add(chunk);
  for (const channelId of snapshot.takenSubscriptions) state.unsavedSubscriptions.add(channelId);
  state.messages.byId.release(snapshot.taken);
  for (const [index, taken] of snapshot.takenKeys) index.restore(taken);
  state.messages.bodies.restore(snapshot.takenBodies);
}

/** After the snapshot is durable: the bodies it stored leave memory, unless a change set them again since. */
export function bodiesSaved(state: RealmState, snapshot: Pick<RealmSnapshot, 'storedBodies' | 'taken' | 'takenKeys'>): void {
  state.messages.bodies.saved(state.messages.byId, snapshot.storedBodies);
  state.messages.byId.release(snapshot.taken);
  for (const [index, taken] of snapshot.takenKeys) index.release(taken);
}

/**
 * How the realm's messages read the data directory: one snapshot record's data; the same record as stored,
 * valid until the next read (Persistence.readSnapshotBytes); and the ids of those of a kind whose id starts
 * with a prefix, without reading them (all synchronous).
 */
export interface RecordReader {
  read(kind: string, id: string): unknown;
  readBytes(kind: string, id: string): Uint8Array | undefined;
  readIds(kind: string, idPrefix: string): Iterable<string>;
}

/**
 * The realm's messages page in from its chunk records in the data directory, `limit` chunks staying
 * decoded, and its per-key indexes from their key records, `keyLimit` keys per index staying in memory; an
 * id list's key is read as the list of its segments, and a segment when a lookup needs it, those of
 * `segmentLimit` ids per index staying in memory.
 */
export function attachChunks(state: RealmState, reader: RecordReader, limit: number, keyLimit: number, segmentLimit: number): void {
  const { realmId } = state;
  const store = state.messages;
  store.byId.attach(
    (chunk) => chunkRecordSlots.messagesOf(() => reader.readBytes(MESSAGE_CHUNK_KIND, chunkRecordId(realmId, chunk)), chunk * MESSAGE_CHUNK_SIZE),
    limit,
    (chunk) => {
      // Read in place: the columns are copied into the store's own at once (PagedMessages.blockOf).
      const bytes = reader.readBytes(MESSAGE_INDEX_KIND, chunkRecordId(realmId, chunk));
      return bytes && indexColumns(snapshotRecordOf(bytes).data as MessageIndexRecord);
    },
  );
  for (const [code, index] of keyIndexes(store)) {
    // The prefix of key `a` is the start of key `a:...`'s too: a segment of this key has only the segment after it.
    const ofKey = (prefix: string, id: string) => id.length === prefix.length + SEGMENT_DIGITS;
    if (code === 'c' || code === 't' || code === 'd') {
      const segments = (key: string) => {
        const prefix = keyRecordPrefix(realmId, code, key);
        const found: number[] = [];
        for (const id of reader.readIds(MESSAGE_KEY_KIND, prefix)) if (ofKey(prefix, id)) found.push(Number(id.slice(prefix.length)));
        return IdList.stored(found);
      };
      const read = (key: string, segment: number) => ID_LIST.read(reader.read(MESSAGE_KEY_KIND, keyRecordId(realmId, code, key, segment)) as KeySegmentRecord | undefined);
      (index as LazyMap<string | number, IdList>).attach(segments, keyLimit, read, segmentLimit);
      continue;
    }
    // A set is read by segment too, as a lookup reaches it (StoredIdSet; a lookup alone reads a part of one); it stays whole once read, a bitmap.
    // These are per user: a send reads a set per recipient, so that with fewer in memory than the organization
    // has users, a channel of them all would read again at each send, after a snapshot, those let go since.
    const userLimit = () => Math.max(keyLimit, state.users.size);
    const load = (key: string) => {
      const prefix = keyRecordPrefix(realmId, code, key);
      const found: number[] = [];
      for (const id of reader.readIds(MESSAGE_KEY_KIND, prefix)) if (ofKey(prefix, id)) found.push(Number(id.slice(prefix.length)));
      return new StoredIdSet(found, (segment) => ID_SET.read(reader.read(MESSAGE_KEY_KIND, keyRecordId(realmId, code, key, segment)) as KeySegmentRecord | undefined));
    };
    (index as LazyMap<string | number, IdSet>).attach(load, userLimit);
  }
}

/** Every per-key index reads from where the other store's do (a store loaded for a realm started with another). */
function adoptKeys(store: RealmState['messages'], other: RealmState['messages']): void {
  const others = keyIndexes(other);
  keyIndexes(store).forEach(([, index], i) => (index as LazyMap<string | number, unknown>).adopt(others[i]![1] as LazyMap<string | number, unknown>));
}

/**
 * Builds realms from their snapshot records, read in any order: each realm record as it comes, its chunks'
 * index records gathered as they come, the two joined in `finish`. Chunk records are not read (the messages
 * page in later), but for a realm whose snapshot predates the index records (`needsChunks`): its chunks are
 * read whole, and all unsaved, so that the next snapshot writes their index records. A realm record of
 * format 1 holds its messages itself; they are all unsaved too.
 */
export class RealmSnapshotLoader {
  private readonly indexed = new Map<number, IndexedStoreLoader>();
  private readonly whole = new Map<number, MessageStoreLoader>();
  private readonly heads: [RealmState, MessageHeadRecord][] = [];
  /** the realms read whose subscriptions are in records of their own (format 6), and those records as they come */
  private readonly subscriptionsApart = new Map<number, RealmState>();
  private readonly subscriptionRecords: [realmId: number, records: SubscriptionRecord[]][] = [];

  index(id: string, data: MessageIndexRecord): void {
    const realmId = realmOfRecord(id);
    let loader = this.indexed.get(realmId);
    if (!loader) this.indexed.set(realmId, (loader = new IndexedStoreLoader()));
    loader.add(data);
  }

  chunk(id: string, data: MessageChunkRecord): void {
    const realmId = realmOfRecord(id);
    let loader = this.whole.get(realmId);
    if (!loader) this.whole.set(realmId, (loader = new MessageStoreLoader()));
    loader.add(data);
  }

  realm(record: RealmRecord): RealmState {
    const state = realmFromRecord(record);
    if (record.messageHead && !record.messages) this.heads.push([state, record.messageHead]);
    if (record.subscriptionsApart) this.subscriptionsApart.set(state.realmId, state);
    return state;
  }

  /** A channel's subscription record (CHANNEL_SUBSCRIPTIONS_KIND). */
  subscriptions(id: string, records: SubscriptionRecord[]): void {
    this.subscriptionRecords.push([realmOfRecord(id), records]);
  }

  /** The realms whose snapshot predates the key records (format 4 and before), as the prefix of their ids: their index records are read. */
  needsIndex(): string[] {
    return this.heads.filter(([, head]) => head.keys === undefined).map(([state]) => `${state.realmId}:`);
  }

  /**
   * The realms whose chunk records must be read whole, as the prefix of their ids: those whose snapshot has
   * no index records (MessageHeadRecord.indexed), and those whose first chunk record (`firstChunk`) still
   * holds its messages' text (format 2), which only a whole load brings back into memory.
   */
  needsChunks(firstChunk: (idPrefix: string) => MessageChunkRecord | undefined): string[] {
    const prefixes: string[] = [];
    for (const [state, head] of this.heads) {
      const prefix = `${state.realmId}:`;
      if (head.indexed && firstChunk(prefix)?.text === undefined) continue;
      head.indexed = undefined;
      prefixes.push(prefix);
    }
    return prefixes;
  }

  /** Gives each realm read its subscriptions and its messages, once every record has been read. */
  finish(): void {
    // A realm record of format 5 or before held its subscriptions, all marked unsaved as they were read, so
    // that the boot's snapshot writes them per channel; those read from their own records are saved.
    for (const [realmId, records] of this.subscriptionRecords) {
      const state = this.subscriptionsApart.get(realmId);
      if (state) loadSubscriptions(state, records);
    }
    for (const state of this.subscriptionsApart.values()) state.unsavedSubscriptions.clear();
    this.subscriptionsApart.clear();
    this.subscriptionRecords.length = 0;
    for (const [state, head] of this.heads) {
      const started = state.messages;
      const { keys } = head;
      let indexed: MessageStore;
      if (keys) {
        indexed = lazyStore({ ...head, keys });
        adoptKeys(indexed, started);
      } else indexed = (this.indexed.get(state.realmId) ?? new IndexedStoreLoader()).finish(head);
      // Chunk records read whole hold flags only if written before the index records, which hold them since
      // (and the key records since format 5).
      state.messages = head.indexed ? indexed : (this.whole.get(state.realmId) ?? new MessageStoreLoader()).finish(head, indexed.flags);
      // The runtime attached the data directory to the store it started the realm with.
      state.messages.bodies.adopt(started.bodies);
      state.messages.byId.adopt(started.byId);
      if (state.messages !== indexed || !keys) adoptKeys(state.messages, started);
    }
    this.heads.length = 0;
    this.indexed.clear();
    this.whole.clear();
  }
}

const realmOfRecord = (id: string) => Number(id.slice(0, id.indexOf(':')));

/** A chunk's columns from its index record, read in place. */
function indexColumns(index: MessageIndexRecord): ChunkColumns {
  return { ids: new Int32Column(index.ids), senders: new Int32Column(index.senders), timestamps: new Int32Column(index.timestamps) };
}
