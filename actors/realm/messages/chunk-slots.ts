import { snapshotRecordOf } from '../../../snapshots/records.ts';
import { messagesOfChunk, type MessageChunkRecord } from './chunks.ts';
import type { StoredMessage } from './state.ts';

/** A chunk record as stored (its snapshot record's bytes), valid until the next read of the data directory. */
export type ChunkRecordBytes = () => Uint8Array | undefined;

/** How many chunk records stay loaded: the few a window reads at once (a topic's 50 messages span 2 to 4). */
export const CHUNK_SLOTS = 8;

/** A slot's buffer to begin with: a chunk record of 2,000 messages is about 80 KB. */
const SLOT_BYTES = 128 * 1024;

/** A slot grown past this for an unusually large record is made small again by the next ordinary one. */
const MAX_KEPT_BYTES = 1024 * 1024;

const NOTHING = (): StoredMessage | undefined => undefined;

interface Slot {
  /** a Buffer, as lmdb-js's reads are: msgpackr decodes a Buffer's strings faster (latin1Slice) */
  bytes: Buffer;
  /** the load it holds, by number; 0: none */
  load: number;
  /** when last used, for reuse: the least recently used slot takes the next load */
  used: number;
  build: (position: number) => StoredMessage | undefined;
}

/**
 * Chunk records read back for their messages, held as their bytes in a few buffers kept for the life of the
 * process. Read as lmdb-js's `get` reads them, each was copied into a buffer of its own (about 80 KB outside
 * the heap), kept by its page for as long as the page lived: a cold read of a topic allocated some 260 KB
 * of them, which brought V8's young-generation collections ("external memory pressure") every 60-odd reads
 * and, promoted with the pages, its major collections (bench/README.md, "Cold reads: the chunks' bytes").
 * Now a record is copied from lmdb-js's shared read buffer into a slot, and decoded there; a page keeps the
 * number of its load, and reads its record again when its slot has since taken another.
 *
 * A page reading its record again may find a newer one (a snapshot wrote its chunk since): its messages not
 * built yet are unchanged, since a change builds the message it changes on that page, which then stays until
 * a snapshot has written it (paged.ts); what differs is how the record encodes them, and each load decodes
 * its own tables.
 */
export class ChunkRecordSlots {
  private readonly slots: Slot[] = [];
  private loads = 0;
  private uses = 0;

  constructor(private readonly count = CHUNK_SLOTS) {}

  /**
   * A chunk's messages by position (see messagesOfChunk), its record (`read`) loaded now into a slot; nothing
   * for a chunk without a record. `base` is the chunk's first id.
   */
  messagesOf(read: ChunkRecordBytes, base: number): (position: number) => StoredMessage | undefined {
    let load = this.load(read, base);
    if (load === 0) return NOTHING;
    return (position) => {
      let slot = this.holding(load);
      if (slot === undefined) {
        load = this.load(read, base);
        // No record any more (0): no slot holds it, whatever slot a failed load left empty.
        slot = load === 0 ? undefined : this.holding(load);
        if (slot === undefined) return undefined;
      }
      slot.used = ++this.uses;
      return slot.build(position);
    };
  }

  private holding(load: number): Slot | undefined {
    for (const slot of this.slots) if (slot.load === load) return slot;
    return undefined;
  }

  /** Loads the record into the least recently used slot: the load's number, 0 if there is no record. */
  private load(read: ChunkRecordBytes, base: number): number {
    const stored = read();
    if (stored === undefined) return 0;
    const slot = this.slotFor(stored.length);
    slot.bytes.set(stored);
    const record = snapshotRecordOf(slot.bytes.subarray(0, stored.length)).data as MessageChunkRecord;
    slot.load = ++this.loads;
    slot.used = ++this.uses;
    slot.build = messagesOfChunk(record, base);
    return slot.load;
  }

  private slotFor(length: number): Slot {
    let slot: Slot | undefined;
    if (this.slots.length < this.count) {
      slot = { bytes: Buffer.alloc(0), load: 0, used: 0, build: NOTHING };
      this.slots.push(slot);
    } else {
      slot = this.slots[0]!;
      for (const other of this.slots) if (other.used < slot.used) slot = other;
    }
    if (length > slot.bytes.length || (slot.bytes.length > MAX_KEPT_BYTES && length <= SLOT_BYTES)) {
      slot.bytes = Buffer.allocUnsafeSlow(Math.max(SLOT_BYTES, length + (length >> 2)));
    }
    // Nothing built from the load it held is used again: its pages read their record anew.
    slot.load = 0;
    slot.build = NOTHING;
    return slot;
  }
}

/** The process's slots, shared by every realm: a few hundred KB, whatever the number of realms. */
export const chunkRecordSlots = new ChunkRecordSlots();
