import {
  chunkOf,
  conversationKey,
  emptyMessageStore,
  flagSet,
  keyIndexes,
  listOf,
  MESSAGE_CHUNK_SIZE,
  mentionedUsers,
  mentionSet,
  NO_MENTIONS,
  none,
  PERSONAL_FLAGS,
  setOf,
  topicKey,
  type KeyIndexCode,
  type EditHistoryEntry,
  type MessageRecipient,
  type MessageStore,
  type PersonalFlag,
  type Reaction,
  type StoredMessage,
} from './state.ts';
import type { IdList } from './id-list.ts';
import { DEFAULT_SEGMENT_BITS, SEGMENT_BITS } from './lazy-map.ts';
import { decode, decodeRange, encode } from '../../../snapshots/codec.ts';
import { contentHas } from './bodies.ts';
import { Int32Column } from './column-bytes.ts';

/** What a realm's snapshot record holds of its messages when they are written in chunk records. */
export interface MessageHeadRecord {
  /** MESSAGE_CHUNK_SIZE when it was written: the range of ids a chunk holds */
  chunkSize: number;
  nextId: number;
  recipientIds: [string, number][];
  nextRecipientId: number;
  /**
   * Every chunk of the realm has its index record (MessageIndexRecord), which holds the chunk's flags too:
   * a boot reads those and no chunk record. Absent: a snapshot written before, loaded from its chunk
   * records whole, and written again with its index records by the next snapshot.
   */
  indexed?: true | undefined;
  /**
   * Since format 5: the indexes, flags and mentions are stored per key (realm/snapshot.ts key records),
   * these are their keys, and a boot reads nothing else of the messages; index records hold no flags.
   */
  keys?: Record<KeyIndexCode, string[]>;
  /** with `keys`: how many messages the realm holds */
  count?: number;
  /** with `keys`: the key records' segments are of 2^segmentBits ids; absent: DEFAULT_SEGMENT_BITS (lazy-map.ts) */
  segmentBits?: number;
}

/**
 * A message in a chunk record: fields by position rather than by name (a message's keys were a third of its
 * encoded size), null for an absent or empty field, repeated strings and id lists by index into the chunk's
 * tables.
 */
export type MessageTuple = [
  id: number,
  senderId: number,
  /** the channel; 0 for a direct message */
  channelId: number,
  /** a channel message's topic (in `strings`), a direct message's participants (in `lists`) */
  place: number,
  recipientId: number,
  /** the lengths of the content and its rendering, which follow the previous message's in `text`; 0 without it */
  contentLength: number,
  renderedLength: number,
  isMeMessage: boolean,
  timestamp: number,
  /** in `strings` */
  client: number,
  /** null without `text` */
  editHistory: EditHistoryEntry[] | null,
  lastEditTimestamp: number | null,
  lastMovedTimestamp: number | null,
  reactions: Reaction[] | null,
  mentions: [userIds: number[], streamWildcard: boolean, topicWildcardUserIds: number[]] | null,
  /** in `lists` */
  holders: number,
  historicalUserIds: number[] | null,
  alertedUserIds: number[] | null,
  attachmentIds: number[] | null,
  /** StoredMessage.contentHas; absent in format 2, where it is found from `text` */
  contentHas?: number,
];

/** The messages and flags of MESSAGE_CHUNK_SIZE consecutive ids. */
export interface MessageChunkRecord {
  /**
   * Written by format 2 only: every message's content and rendered content, one after the other. Since
   * format 3 the bodies (content, rendering, edit history) are stored one per message beside the snapshot
   * records (MessageBodies), and a boot reads none of them.
   */
  text?: string;
  /** topics and client names, each written once */
  strings: string[];
  /** holder lists and direct conversations' participants, each written once */
  lists: number[][];
  /** in id order; before format 5 (since, `packed`) */
  messages?: MessageTuple[];
  /**
   * Since format 5: each message's tuple encoded on its own, one after the other, in id order, so that a read
   * decodes the few it needs rather than all 2,000 (the garbage of whole decodes made the collector's pauses
   * the slowest part of a cold read); `ids` and `ends` (each tuple's end in `packed`) are Int32Array bytes.
   */
  packed?: Uint8Array;
  ids?: Uint8Array;
  ends?: Uint8Array;
  /** per flag: [user, the ids of this chunk that carry it]; absent since the index records hold them */
  flags?: Record<PersonalFlag, [number, number[]][]>;
}

/**
 * What a boot reads of a chunk: enough to build the store's indexes and flags, and the columns the hot
 * paths read without the messages (PagedMessages), by message in id order. Its columns are the bytes of an
 * Int32Array (Uint32Array for the timestamps; little-endian, as every platform Node runs on here), which
 * decode with one copy rather than number by number: 20 bytes a message.
 */
export interface MessageIndexRecord {
  ids: Uint8Array;
  senders: Uint8Array;
  timestamps: Uint8Array;
  /** the channel; 0 for a direct message */
  channels: Uint8Array;
  /** a channel message's topic (in `topics`), a direct message's participants (in `participants`) */
  places: Uint8Array;
  topics: string[];
  participants: number[][];
  /** format 4: [message, user] pairs one after the other: the users whose flags include a mention (mentionedUsers) */
  mentioned?: Uint8Array;
  /** format 4: per flag: [user, the runs of ids of this chunk that carry it, as [from, to) pairs]; since, stored per user */
  flags?: Record<PersonalFlag, [number, Uint8Array][]>;
}

/** A column's bytes for a record (msgpack stores them as they are). */
const bytesOf = (values: Int32Array | Uint32Array) => new Uint8Array(values.buffer, values.byteOffset, values.byteLength);

/** A column read back: copied, as the decoded bytes may sit at any offset of the record. */
const int32s = (bytes: Uint8Array) => new Int32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
const uint32s = (bytes: Uint8Array) => new Uint32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));

export function messageHead(store: MessageStore): MessageHeadRecord {
  const keys = {} as Record<KeyIndexCode, string[]>;
  for (const [code, index] of keyIndexes(store)) {
    keys[code] = [];
    for (const key of index.keys()) {
      // A set emptied stays in memory as its key's value; it is not listed.
      const value = index.peek(key as never) as IdList | { size: number } | undefined;
      if (value === undefined || ('isEmpty' in value ? !value.isEmpty : value.size !== 0)) keys[code].push(String(key));
    }
  }
  return {
    chunkSize: MESSAGE_CHUNK_SIZE,
    nextId: store.nextId,
    recipientIds: [...store.recipientIds],
    nextRecipientId: store.nextRecipientId,
    indexed: true,
    keys,
    count: store.byId.size,
    // Written only for a size other than the default (tests), so that a default head is as before.
    ...(SEGMENT_BITS !== DEFAULT_SEGMENT_BITS ? { segmentBits: SEGMENT_BITS } : {}),
  };
}

// ---- writing ----------------------------------------------------------------------------------------------

class ChunkWriter {
  readonly record: MessageChunkRecord = { strings: [], lists: [] };
  private readonly tuples: MessageTuple[] = [];
  /** the index record's columns, made bytes by `finish` */
  private readonly index = {
    ids: [] as number[], senders: [] as number[], timestamps: [] as number[], channels: [] as number[], places: [] as number[],
    topics: [] as string[], participants: [] as number[][],
  };
  private readonly topicIndex = new Map<string, number>();
  private readonly indexParticipants = new Map<string, number>();
  private readonly stringIndex = new Map<string, number>();
  /** holder lists are shared by identity (apply.ts sharedHolders) */
  private readonly listIndex = new Map<readonly number[], number>();
  /** participants are equal lists, not the same one */
  private readonly participantsIndex = new Map<string, number>();

  private string(value: string): number {
    let index = this.stringIndex.get(value);
    if (index === undefined) this.stringIndex.set(value, (index = this.record.strings.push(value) - 1));
    return index;
  }

  private list(value: number[]): number {
    let index = this.listIndex.get(value);
    if (index === undefined) this.listIndex.set(value, (index = this.record.lists.push(value) - 1));
    return index;
  }

  private participants(value: number[]): number {
    const key = value.join(',');
    let index = this.participantsIndex.get(key);
    if (index === undefined) this.participantsIndex.set(key, (index = this.list(value)));
    return index;
  }

  private indexPlace(recipient: MessageRecipient): number {
    const [table, values, key] =
      recipient.kind === 'channel'
        ? [this.topicIndex, this.index.topics as unknown[], recipient.topic]
        : [this.indexParticipants, this.index.participants as unknown[], recipient.userIds.join(',')];
    let index = table.get(key);
    if (index === undefined) table.set(key, (index = values.push(recipient.kind === 'channel' ? recipient.topic : recipient.userIds) - 1));
    return index;
  }

  message(message: StoredMessage): void {
    const { recipient, mentions } = message;
    const index = this.index;
    index.ids.push(message.id);
    index.senders.push(message.senderId);
    index.timestamps.push(message.timestamp);
    index.channels.push(recipient.kind === 'channel' ? recipient.channelId : 0);
    index.places.push(this.indexPlace(recipient));
    const mentioned = mentions.userIds.length > 0 || mentions.streamWildcard || mentions.topicWildcardUserIds.length > 0;
    this.tuples.push([
      message.id,
      message.senderId,
      recipient.kind === 'channel' ? recipient.channelId : 0,
      recipient.kind === 'channel' ? this.string(recipient.topic) : this.participants(recipient.userIds),
      message.recipientId,
      0,
      0,
      message.isMeMessage,
      message.timestamp,
      this.string(message.client),
      null,
      message.lastEditTimestamp ?? null,
      message.lastMovedTimestamp ?? null,
      message.reactions.length ? message.reactions : null,
      mentioned ? [mentions.userIds, mentions.streamWildcard, mentions.topicWildcardUserIds] : null,
      this.list(message.userIds),
      message.historicalUserIds.length ? message.historicalUserIds : null,
      message.alertedUserIds ?? null,
      message.attachmentIds ?? null,
      message.contentHas,
    ]);
  }

  private packed(): MessageChunkRecord {
    const parts = this.tuples.map((tuple) => encode(tuple));
    const ends = new Int32Array(parts.length);
    let end = 0;
    parts.forEach((part, i) => (ends[i] = end += part.length));
    return { ...this.record, packed: Buffer.concat(parts, end), ids: bytesOf(Int32Array.from(this.index.ids)), ends: bytesOf(ends) };
  }

  /** null for a record that holds nothing: the stored one, if there is one, goes. */
  finish(): ChunkRecords {
    const index = this.index;
    const empty = this.tuples.length === 0;
    return {
      chunk: empty ? null : this.packed(),
      index: empty
        ? null
        : {
            ids: bytesOf(Int32Array.from(index.ids)),
            senders: bytesOf(Int32Array.from(index.senders)),
            timestamps: bytesOf(Uint32Array.from(index.timestamps)),
            channels: bytesOf(Int32Array.from(index.channels)),
            places: bytesOf(Int32Array.from(index.places)),
            topics: index.topics,
            participants: index.participants,
          },
    };
  }
}

/** A chunk's two records: its messages, and what a boot reads of them. */
export interface ChunkRecords {
  chunk: MessageChunkRecord | null;
  index: MessageIndexRecord | null;
}

/**
 * The records of the given chunks, in the order given. The records share the messages' arrays: they must be
 * encoded before the messages change again (the store encodes snapshot records as it is handed them).
 */
export function chunkRecords(store: MessageStore, chunks: readonly number[]): ChunkRecords[] {
  const writers = new Map<number, ChunkWriter>();
  for (const chunk of chunks) {
    const writer = new ChunkWriter();
    writers.set(chunk, writer);
    const end = (chunk + 1) * MESSAGE_CHUNK_SIZE;
    for (let id = chunk * MESSAGE_CHUNK_SIZE; id < end; id++) {
      const message = store.byId.get(id);
      if (message) writer.message(message);
    }
  }
  return chunks.map((chunk) => writers.get(chunk)!.finish());
}

// ---- loading ----------------------------------------------------------------------------------------------


/** A recipient of a chunk, shared by its messages, and the index lists its messages go to. */
interface Place {
  recipient: MessageRecipient;
  /** byTopic or byConversation */
  ids: IdList;
  /** byChannel; null for direct messages */
  channelIds: IdList | null;
}

/** Every message tuple of a chunk record, in id order, whichever its format. */
export function chunkTuples(chunk: MessageChunkRecord): MessageTuple[] {
  if (!chunk.packed || !chunk.ends) return chunk.messages ?? [];
  const { packed } = chunk;
  const ends = int32s(chunk.ends);
  return Array.from(ends, (end, i) => decode<MessageTuple>(packed.subarray(i === 0 ? 0 : ends[i - 1]!, end)));
}

/**
 * A chunk record's messages as a page-in reads them (PagedMessages): each built when first asked for, by its
 * position in the chunk (`base` is the chunk's first id); those of one recipient share its value. Bodies are
 * stored apart (format 3 on); a chunk of format 2 is never paged (it is loaded whole, see MessageStoreLoader).
 */
export function messagesOfChunk(chunk: MessageChunkRecord, base: number): (position: number) => StoredMessage | undefined {
  const { strings, lists } = chunk;
  let tupleAt: (position: number) => MessageTuple | undefined;
  if (chunk.packed && chunk.ids && chunk.ends) {
    // Read in place: a cold read pages in a few chunks and builds a few of their messages (column-bytes.ts).
    const { packed } = chunk;
    const ids = new Int32Column(chunk.ids);
    const ends = new Int32Column(chunk.ends);
    tupleAt = (position) => {
      // A chunk without deletions holds its ids at their positions.
      const i = position < ids.length && ids.at(position) === base + position ? position : ids.indexOf(base + position);
      return i < 0 ? undefined : decodeRange<MessageTuple>(packed, i === 0 ? 0 : ends.at(i - 1), ends.at(i));
    };
  } else {
    const at = new Int16Array(MESSAGE_CHUNK_SIZE).fill(-1);
    const messages = chunk.messages ?? [];
    for (let i = 0; i < messages.length; i++) at[messages[i]![0] - base] = i;
    tupleAt = (position) => messages[at[position] ?? -1];
  }
  const recipients = new Map<number, MessageRecipient[]>();
  return (position) => {
    const tuple = tupleAt(position);
    if (tuple === undefined) return undefined;
    const channelId = tuple[2];
    const place = tuple[3];
    let ofChannel = recipients.get(channelId);
    if (ofChannel === undefined) recipients.set(channelId, (ofChannel = []));
    const recipient = (ofChannel[place] ??=
      channelId === 0 ? { kind: 'direct', userIds: lists[place]! } : { kind: 'channel', channelId, topic: strings[place]! });
    return messageOfTuple(tuple, recipient, strings, lists);
  };
}

function messageOfTuple(tuple: MessageTuple, recipient: MessageRecipient, strings: readonly string[], lists: readonly number[][]): StoredMessage {
  const mentions = tuple[14];
  const message: StoredMessage = {
    id: tuple[0],
    senderId: tuple[1],
    recipient,
    recipientId: tuple[4],
    body: null,
    contentHas: tuple[19] ?? 0,
    isMeMessage: tuple[7],
    mentions: mentions === null ? NO_MENTIONS : { userIds: mentions[0], streamWildcard: mentions[1], topicWildcardUserIds: mentions[2] },
    timestamp: tuple[8],
    client: strings[tuple[9]]!,
    reactions: tuple[13] ?? none(),
    userIds: lists[tuple[15]]!,
    historicalUserIds: tuple[16] ?? none(),
  };
  if (tuple[11] !== null) message.lastEditTimestamp = tuple[11];
  if (tuple[12] !== null) message.lastMovedTimestamp = tuple[12];
  if (tuple[17] !== null) message.alertedUserIds = tuple[17];
  if (tuple[18] !== null) message.attachmentIds = tuple[18];
  return message;
}

/**
 * Builds a message store from the chunks' index records (MessageIndexRecord) alone: its indexes, flags and
 * columns, every chunk left on disk until a message of it is asked for. Records are expected in id order
 * (the store lists them so, see realm/snapshot.ts); an id list keeps its ids in order whatever the order.
 */
export class IndexedStoreLoader {
  private readonly store = emptyMessageStore();

  add(index: MessageIndexRecord): void {
    const store = this.store;
    const { topics, participants, flags } = index;
    const ids = int32s(index.ids);
    const senders = int32s(index.senders);
    const timestamps = uint32s(index.timestamps);
    const channels = int32s(index.channels);
    const places = int32s(index.places);
    const mentioned = index.mentioned ? int32s(index.mentioned) : new Int32Array(0);
    // The chunk's index lists, by channel and topic index, and by participants index (channel 0).
    const lists = new Map<number, [ids: IdList, channelIds: IdList | null][]>();
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      const channelId = channels[i]!;
      const place = places[i]!;
      let ofChannel = lists.get(channelId);
      if (ofChannel === undefined) lists.set(channelId, (ofChannel = []));
      let where = ofChannel[place];
      if (where === undefined) {
        if (channelId === 0) {
          const userIds = participants[place]!;
          const key = conversationKey(userIds);
          for (const userId of userIds) setOf(store.conversationsOf, userId).add(key);
          where = ofChannel[place] = [listOf(store.byConversation, key), null];
        } else {
          where = ofChannel[place] = [listOf(store.byTopic, topicKey(channelId, topics[place]!)), listOf(store.byChannel, channelId)];
        }
      }
      store.byId.stored(id, senders[i]!, timestamps[i]!);
      where[0].add(id);
      where[1]?.add(id);
    }
    for (let i = 0; i < mentioned.length; i += 2) mentionSet(store, mentioned[i + 1]!).add(mentioned[i]!);
    for (const flag of PERSONAL_FLAGS) {
      for (const [userId, bytes] of flags?.[flag] ?? []) {
        const set = flagSet(store, flag, userId);
        const runs = int32s(bytes);
        for (let i = 0; i < runs.length; i += 2) set.addRange(runs[i]!, runs[i + 1]!);
      }
    }
  }

  finish(head: MessageHeadRecord): MessageStore {
    return finishStore(this.store, head);
  }
}

function addFlags(store: MessageStore, flags: NonNullable<MessageChunkRecord['flags']>): void {
  for (const flag of PERSONAL_FLAGS) {
    for (const [userId, ids] of flags[flag] ?? []) {
      const set = flagSet(store, flag, userId);
      for (const id of ids) set.add(id);
    }
  }
}

/** A store loaded whole (a snapshot before format 5): every key of it is written by the next snapshot. */
function finishStore(store: MessageStore, head: MessageHeadRecord): MessageStore {
  store.nextId = head.nextId;
  store.nextRecipientId = head.nextRecipientId;
  for (const [key, id] of head.recipientIds) store.recipientIds.set(key, id);
  for (const [, index] of keyIndexes(store)) index.markAll();
  return store;
}

/**
 * The store of a snapshot of format 5 (MessageHeadRecord.keys): its keys known, every value read when first
 * asked for (attachKeys in realm/snapshot.ts), the messages' columns read by chunk (PagedMessages). Reads
 * nothing of the history.
 */
export function lazyStore(head: MessageHeadRecord & { keys: NonNullable<MessageHeadRecord['keys']> }): MessageStore {
  // A key record's segment is found by number: read with another size, a list would miss its ids.
  const bits = head.segmentBits ?? DEFAULT_SEGMENT_BITS;
  if (bits !== SEGMENT_BITS) throw new Error(`the data directory's message indexes are in segments of 2^${bits} ids, not 2^${SEGMENT_BITS} (CHAT_MESSAGE_SEGMENT_BITS)`);
  const store = emptyMessageStore();
  store.nextId = head.nextId;
  store.nextRecipientId = head.nextRecipientId;
  for (const [key, id] of head.recipientIds) store.recipientIds.set(key, id);
  for (const [code, index] of keyIndexes(store)) index.known(head.keys[code] ?? []);
  for (const key of head.keys.d ?? []) for (const userId of key.split(',')) setOf(store.conversationsOf, Number(userId)).add(key);
  store.byId.restore(head.count ?? 0, head.nextId);
  return store;
}

/**
 * Builds a message store from chunk records whole (a snapshot written before the index records), indexes
 * included, in one pass over the messages; every chunk is unsaved, so that the next snapshot writes it with
 * its index record. Chunks are expected in id order; an id list keeps its ids in order whatever the order.
 */
export class MessageStoreLoader {
  private readonly store = emptyMessageStore();

  add(chunk: MessageChunkRecord): void {
    const { text, strings, lists, flags } = chunk;
    const messages = chunkTuples(chunk);
    let at = 0;
    const store = this.store;
    // The chunk's places, by channel and topic index, and by participants index (0 for direct messages).
    const places = new Map<number, Place[]>();
    for (const tuple of messages) {
      const id = tuple[0];
      const channelId = tuple[2];
      const place = tuple[3];
      let ofChannel = places.get(channelId);
      if (ofChannel === undefined) places.set(channelId, (ofChannel = []));
      let where = ofChannel[place];
      if (where === undefined) ofChannel[place] = where = this.place(channelId, channelId === 0 ? lists[place]! : strings[place]!);
      const message = messageOfTuple(tuple, where.recipient, strings, lists);
      if (text !== undefined) {
        // Format 2: the body is in the chunk. It stays in memory until the next snapshot stores it apart.
        const content = text.slice(at, (at += tuple[5]));
        message.body = { content, renderedContent: text.slice(at, (at += tuple[6])), editHistory: tuple[10] ?? none() };
        message.contentHas = contentHas(message.body.renderedContent);
        store.bodies.unsaved.add(id);
      }
      store.byId.set(id, message);
      store.unsavedChunks.add(chunkOf(id));
      where.ids.add(id);
      where.channelIds?.add(id);
      if (tuple[14] !== null) for (const userId of mentionedUsers(message)) mentionSet(store, userId).add(id);
    }
    if (flags) {
      addFlags(store, flags);
      for (const flag of PERSONAL_FLAGS) for (const [, ids] of flags[flag]) for (const id of ids) store.unsavedChunks.add(chunkOf(id));
    }
  }

  private place(channelId: number, to: string | number[]): Place {
    const store = this.store;
    if (typeof to === 'string') {
      return {
        recipient: { kind: 'channel', channelId, topic: to },
        ids: listOf(store.byTopic, topicKey(channelId, to)),
        channelIds: listOf(store.byChannel, channelId),
      };
    }
    const key = conversationKey(to);
    for (const userId of to) setOf(store.conversationsOf, userId).add(key);
    return { recipient: { kind: 'direct', userIds: to }, ids: listOf(store.byConversation, key), channelIds: null };
  }

  /** The store, with the head's counters and `flags` besides the chunks' own; every chunk of it unsaved. */
  finish(head: MessageHeadRecord, flags: MessageStore['flags']): MessageStore {
    for (const flag of PERSONAL_FLAGS) {
      for (const [userId, ids] of flags[flag]) {
        const set = flagSet(this.store, flag, userId);
        for (const id of ids) {
          set.add(id);
          this.store.unsavedChunks.add(chunkOf(id));
        }
      }
    }
    return finishStore(this.store, head);
  }
}
