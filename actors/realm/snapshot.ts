import { bodyRecord, type BodyRecord } from './messages/bodies.ts';
import {
  chunkRecords,
  IndexedStoreLoader,
  messageHead,
  messagesOfChunk,
  MessageStoreLoader,
  type MessageChunkRecord,
  type MessageHeadRecord,
  type MessageIndexRecord,
} from './messages/chunks.ts';
import { MESSAGE_CHUNK_SIZE, type MessageBody } from './messages/state.ts';
import { realmFromRecord, realmRecordWithoutMessages, type RealmRecord, type RealmState } from './state.ts';

/**
 * A realm is snapshotted as one 'realm' record (everything but its messages, and the message store's
 * counters) and one record of this kind per chunk of message ids, written in the same transaction. Only the
 * chunks changed since the last snapshot are written: a busy realm's periodic snapshot no longer re-encodes
 * its whole history, and a boot decodes many small records instead of one huge one.
 */
export const MESSAGE_CHUNK_KIND = 'messages';

/** A chunk's index record (MessageIndexRecord), beside its chunk record under the same id: what a boot reads. */
export const MESSAGE_INDEX_KIND = 'message-index';

/** `realm:chunk`, the chunk zero-padded so that the store (ordered by key) lists a realm's chunks in id order. */
export const chunkRecordId = (realmId: number, chunk: number) => `${realmId}:${String(chunk).padStart(10, '0')}`;

export interface RealmSnapshot {
  realm: RealmRecord;
  /** chunk and index records to write, or null for one to remove (it holds nothing now) */
  chunks: [kind: string, id: string, data: MessageChunkRecord | MessageIndexRecord | null][];
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
  return {
    realm: { ...realmRecordWithoutMessages(state), messageHead: messageHead(store) },
    chunks: chunks.flatMap((chunk, i) => {
      const id = chunkRecordId(state.realmId, chunk);
      return [[MESSAGE_CHUNK_KIND, id, records[i]!.chunk], [MESSAGE_INDEX_KIND, id, records[i]!.index]] as const;
    }) as RealmSnapshot['chunks'],
    taken,
    bodies,
    takenBodies,
    storedBodies,
  };
}

/** After a snapshot that could not be written: its chunks and bodies are unsaved again. */
export function restoreUnsaved(state: RealmState, snapshot: Pick<RealmSnapshot, 'taken' | 'takenBodies'>): void {
  for (const chunk of snapshot.taken) state.messages.unsavedChunks.add(chunk);
  state.messages.byId.release(snapshot.taken);
  state.messages.bodies.restore(snapshot.takenBodies);
}

/** After the snapshot is durable: the bodies it stored leave memory, unless a change set them again since. */
export function bodiesSaved(state: RealmState, snapshot: Pick<RealmSnapshot, 'storedBodies' | 'taken'>): void {
  state.messages.bodies.saved(state.messages.byId, snapshot.storedBodies);
  state.messages.byId.release(snapshot.taken);
}

/**
 * The realm's messages page in from its chunk records in the data directory (`read` a snapshot record's
 * data, synchronously), `limit` chunks staying decoded.
 */
export function attachChunks(state: RealmState, read: (kind: string, id: string) => unknown, limit: number): void {
  const { realmId } = state;
  state.messages.byId.attach((chunk) => {
    const data = read(MESSAGE_CHUNK_KIND, chunkRecordId(realmId, chunk)) as MessageChunkRecord | undefined;
    return data ? messagesOfChunk(data, chunk * MESSAGE_CHUNK_SIZE) : () => undefined;
  }, limit);
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
    return state;
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

  /** Gives each realm read its messages, once every record has been read. */
  finish(): void {
    for (const [state, head] of this.heads) {
      const started = state.messages;
      const indexed = (this.indexed.get(state.realmId) ?? new IndexedStoreLoader()).finish(head);
      // Chunk records read whole hold flags only if written before the index records, which hold them since.
      state.messages = head.indexed ? indexed : (this.whole.get(state.realmId) ?? new MessageStoreLoader()).finish(head, indexed.flags);
      // The runtime attached the data directory to the store it started the realm with.
      state.messages.bodies.adopt(started.bodies);
      state.messages.byId.adopt(started.byId);
    }
    this.heads.length = 0;
    this.indexed.clear();
    this.whole.clear();
  }
}

const realmOfRecord = (id: string) => Number(id.slice(0, id.indexOf(':')));
