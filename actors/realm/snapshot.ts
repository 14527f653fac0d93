import { bodyRecord, type BodyRecord } from './messages/bodies.ts';
import { chunkRecords, messageHead, MessageStoreLoader, type MessageChunkRecord, type MessageHeadRecord } from './messages/chunks.ts';
import type { MessageBody } from './messages/state.ts';
import { realmFromRecord, realmRecordWithoutMessages, type RealmRecord, type RealmState } from './state.ts';

/**
 * A realm is snapshotted as one 'realm' record (everything but its messages, and the message store's
 * counters) and one record of this kind per chunk of message ids, written in the same transaction. Only the
 * chunks changed since the last snapshot are written: a busy realm's periodic snapshot no longer re-encodes
 * its whole history, and a boot decodes many small records instead of one huge one.
 */
export const MESSAGE_CHUNK_KIND = 'messages';

/** `realm:chunk`, the chunk zero-padded so that the store (ordered by key) lists a realm's chunks in id order. */
const chunkRecordId = (realmId: number, chunk: number) => `${realmId}:${String(chunk).padStart(10, '0')}`;

export interface RealmSnapshot {
  realm: RealmRecord;
  /** chunk records to write, or null for one to remove (it holds nothing now) */
  chunks: [id: string, data: MessageChunkRecord | null][];
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
    chunks: chunks.map((chunk, i) => [chunkRecordId(state.realmId, chunk), records[i]!]),
    taken,
    bodies,
    takenBodies,
    storedBodies,
  };
}

/** After a snapshot that could not be written: its chunks and bodies are unsaved again. */
export function restoreUnsaved(state: RealmState, snapshot: Pick<RealmSnapshot, 'taken' | 'takenBodies'>): void {
  for (const chunk of snapshot.taken) state.messages.unsavedChunks.add(chunk);
  state.messages.bodies.restore(snapshot.takenBodies);
}

/** After the snapshot is durable: the bodies it stored leave memory, unless a change set them again since. */
export function bodiesSaved(state: RealmState, snapshot: Pick<RealmSnapshot, 'storedBodies'>): void {
  state.messages.bodies.saved(state.messages.byId, snapshot.storedBodies);
}

/**
 * Builds realms from their snapshot records, read in any order: each realm record as it comes, its message
 * chunks gathered as they come, the two joined in `finish`. A realm record of format 1 holds its messages
 * itself; they are all unsaved, so that the next snapshot writes them in chunks.
 */
export class RealmSnapshotLoader {
  private readonly messages = new Map<number, MessageStoreLoader>();
  private readonly heads: [RealmState, MessageHeadRecord][] = [];

  chunk(id: string, data: MessageChunkRecord): void {
    const realmId = Number(id.slice(0, id.indexOf(':')));
    let loader = this.messages.get(realmId);
    if (!loader) this.messages.set(realmId, (loader = new MessageStoreLoader()));
    loader.add(data);
  }

  realm(record: RealmRecord): RealmState {
    const state = realmFromRecord(record);
    if (record.messageHead && !record.messages) this.heads.push([state, record.messageHead]);
    return state;
  }

  /** Gives each realm read its messages, once every record has been read. */
  finish(): void {
    for (const [state, head] of this.heads) {
      const started = state.messages;
      state.messages = (this.messages.get(state.realmId) ?? new MessageStoreLoader()).finish(head);
      // The runtime attached the data directory to the store it started the realm with.
      state.messages.bodies.adopt(started.bodies);
    }
    this.heads.length = 0;
    this.messages.clear();
  }
}
