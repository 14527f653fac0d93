import { contentHas, MessageBodies } from './bodies.ts';
import { IdSet } from './id-set.ts';
import { IdList } from './id-list.ts';
import { idLists, idSets } from './key-records.ts';
import type { LazyMap } from './lazy-map.ts';
import { PagedMessages } from './paged.ts';
import { lowerBound } from './lower-bound.ts';

/** Where a message went: a channel's topic, or a direct conversation (participants sorted, sender included). */
export type MessageRecipient =
  | { kind: 'channel'; channelId: number; topic: string }
  | { kind: 'direct'; userIds: number[] };

export type ReactionType = 'unicode_emoji' | 'realm_emoji' | 'svc_extra_emoji';

export interface Reaction {
  emojiName: string;
  emojiCode: string;
  reactionType: ReactionType;
  userId: number;
}

/** One entry of a message's edit history; the optional fields say what the edit changed. */
export interface EditHistoryEntry {
  userId: number | null;
  timestamp: number;
  prevContent?: string;
  prevRenderedContent?: string;
  prevStream?: number;
  stream?: number;
  prevTopic?: string;
  topic?: string;
}

/** Who a message's rendering mentions, among the users who received it. */
export interface Mentions {
  /** mentioned by name or through a user group */
  userIds: number[];
  /** @**all**, @**everyone**, @**channel** in a channel message: every recipient */
  streamWildcard: boolean;
  /** @**topic**: the topic's participants */
  topicWildcardUserIds: number[];
}

/**
 * The bulky part of a message, which no hot path reads for more than a page of messages: kept in memory from
 * the change that sets it until a snapshot has stored it, then read back on demand (bodies.ts).
 */
export interface MessageBody {
  /** raw Markdown */
  content: string;
  renderedContent: string;
  /** newest first */
  editHistory: EditHistoryEntry[];
}

/**
 * A stored message. Its arrays and nested objects are replaced, never changed in place: messages loaded from
 * a snapshot share the empty ones and their holder, participant and recipient values (chunks.ts).
 */
export interface StoredMessage {
  id: number;
  senderId: number;
  recipient: MessageRecipient;
  /** the `recipient_id` of the API: one per channel and one per direct conversation */
  recipientId: number;
  /** in memory until a snapshot stored it; null: stored, read through MessageBodies (bodies.ts) */
  body: MessageBody | null;
  /** what the rendering holds, HAS_LINK and HAS_IMAGE bits (bodies.ts): `has:` narrows need not read the body */
  contentHas: number;
  isMeMessage: boolean;
  /** UNIX seconds */
  timestamp: number;
  client: string;
  lastEditTimestamp?: number;
  lastMovedTimestamp?: number;
  reactions: Reaction[];
  mentions: Mentions;
  /**
   * The users who hold the message in their history (the original's UserMessage rows), sorted: the
   * recipients when it was sent, and those who later starred or reacted to it (`historical`).
   */
  userIds: number[];
  /** of `userIds`, those who did not receive it when it was sent */
  historicalUserIds: number[];
  /** recipients one of whose alert words the message held when sent (`has_alert_word`); absent: none */
  alertedUserIds?: number[];
  /** the uploaded files its content links (attachments/), sorted ids; absent: none */
  attachmentIds?: number[];
}

/** Shared by every stored message that has none: frozen, as nothing may change them in place (StoredMessage). */
const NONE: readonly never[] = Object.freeze([]);
export const none = <T>() => NONE as unknown as T[];
export const NO_MENTIONS: Mentions = Object.freeze({ userIds: none<number>(), streamWildcard: false, topicWildcardUserIds: none<number>() });

/**
 * A new message's unread flags, not yet added to its recipients' unread sets: every user of `userIds` (a
 * holder list: never changed in place) but `skip` (the sender when it is read for them; else -1).
 */
export interface PendingUnread {
  id: number;
  userIds: readonly number[];
  skip: number;
}

/** A message whole, its body inline: as a send logs it and as an export or a snapshot of format 1 holds it. */
export type SentMessage = Omit<StoredMessage, 'body' | 'contentHas'> & MessageBody;

/** The flags a user may set and clear; `read` is kept as its inverse, the (sparse) unread set. */
export type PersonalFlag = 'unread' | 'starred' | 'collapsed';

/**
 * Every message of a realm, its indexes and the per-user flags. Indexes are sorted id lists, so a
 * narrow naming a channel, topic or conversation reads only that list. Each index is stored per key
 * (LazyMap): a boot reads none of them, a key's ids are read back when first asked for, an id list's by the
 * segments a lookup needs (IdList).
 */
export interface MessageStore {
  /** paged from the snapshot's chunk records: ask it for the messages needed, never walk it on a hot path */
  byId: PagedMessages;
  nextId: number;
  /** channel -> ids */
  byChannel: LazyMap<number, IdList>;
  /** topicKey(channel, topic) -> ids */
  byTopic: LazyMap<string, IdList>;
  /** conversationKey(participants) -> ids */
  byConversation: LazyMap<string, IdList>;
  /** user -> keys of the direct conversations they are part of */
  conversationsOf: Map<number, Set<string>>;
  /** recipientKey -> recipient id, assigned on first use */
  recipientIds: Map<string, number>;
  nextRecipientId: number;
  /** user -> message ids carrying the flag (persisted); reading it first adds the pending unread flags (addUnread) */
  readonly flags: Record<PersonalFlag, LazyMap<number, IdSet>>;
  /** the sets `flags` gives, without the pending unread flags: read them through `flags` */
  readonly flagSets: Record<PersonalFlag, LazyMap<number, IdSet>>;
  /** new messages not yet in their recipients' unread sets, in the order they came (addUnread) */
  pendingUnread: PendingUnread[];
  /** their recipients, summed */
  pendingUnreadFlags: number;
  /** user -> ids of messages mentioning them, directly, through a group or a wildcard (derived from the messages, stored as the flags are) */
  mentionedOf: LazyMap<number, IdSet>;
  /**
   * The chunks (see MESSAGE_CHUNK_SIZE) whose snapshot record no longer matches the messages and flags in
   * memory: those the next snapshot writes. Persistence bookkeeping, never persisted itself.
   */
  unsavedChunks: Set<number>;
  /** the messages' bodies: those not stored yet, and the way to read the stored ones */
  bodies: MessageBodies;
}

/**
 * What a snapshot stores: messages and flags as arrays; indexes are rebuilt. Holder lists shared by several
 * messages are written once, in `holderLists`, and a message names its list by index.
 */
export interface MessageStoreRecord {
  messages: (Omit<SentMessage, 'userIds'> & { userIds: number[] | number })[];
  holderLists?: number[][];
  nextId: number;
  recipientIds: [string, number][];
  nextRecipientId: number;
  flags: Record<PersonalFlag, [number, number[]][]>;
}

export const PERSONAL_FLAGS: readonly PersonalFlag[] = ['unread', 'starred', 'collapsed'];

import { chunkOf } from './chunk-size.ts';

export { chunkOf, MESSAGE_CHUNK_SIZE } from './chunk-size.ts';

/** Notes that the message's chunk (its record and its flags) must be written by the next snapshot. */
export function markUnsaved(store: MessageStore, messageId: number): void {
  store.unsavedChunks.add(chunkOf(messageId));
  store.byId.keepChunk(chunkOf(messageId));
}

export const topicKey = (channelId: number, topic: string) => `${channelId}\u0000${topic.toLowerCase()}`;
export const conversationKey = (userIds: readonly number[]) => [...userIds].sort((a, b) => a - b).join(',');

export function recipientKey(recipient: MessageRecipient): string {
  return recipient.kind === 'channel' ? `c${recipient.channelId}` : `d${conversationKey(recipient.userIds)}`;
}

export function emptyMessageStore(): MessageStore {
  const store: MessageStore = {
    byId: new PagedMessages(),
    nextId: 1,
    byChannel: idLists(Number),
    byTopic: idLists(String),
    byConversation: idLists(String),
    conversationsOf: new Map(),
    recipientIds: new Map(),
    nextRecipientId: 1,
    get flags() {
      if (this.pendingUnread.length > 0) addPendingUnread(this);
      return this.flagSets;
    },
    flagSets: { unread: idSets(), starred: idSets(), collapsed: idSets() },
    pendingUnread: [],
    pendingUnreadFlags: 0,
    mentionedOf: idSets(),
    unsavedChunks: new Set(),
    bodies: new MessageBodies(),
  };
  store.byId.unsaved = () => store.unsavedChunks;
  return store;
}

export function messageStoreToRecord(store: MessageStore): MessageStoreRecord {
  const flags = {} as MessageStoreRecord['flags'];
  for (const flag of PERSONAL_FLAGS) {
    flags[flag] = [];
    for (const [userId, ids] of store.flags[flag]) if (ids.size) flags[flag].push([userId, [...ids]]);
    // By user: the order keys are read back in (LazyMap) is no order of the data.
    flags[flag].sort(([a], [b]) => a - b);
  }
  const holderLists: number[][] = [];
  const listIndex = new Map<number[], number>();
  const messages = [...store.bodies.withBodies(store.byId)].map(([{ body: _body, contentHas: _has, ...message }, body]) => {
    let index = listIndex.get(message.userIds);
    if (index === undefined) listIndex.set(message.userIds, (index = holderLists.push(message.userIds) - 1));
    return { ...message, ...body, userIds: index };
  });
  return {
    messages,
    holderLists,
    nextId: store.nextId,
    recipientIds: [...store.recipientIds],
    nextRecipientId: store.nextRecipientId,
    flags,
  };
}

export function messageStoreFromRecord(record: MessageStoreRecord | undefined): MessageStore {
  const store = emptyMessageStore();
  // A snapshot written before messages existed has none.
  if (!record) return store;
  store.nextId = record.nextId;
  store.nextRecipientId = record.nextRecipientId;
  for (const [key, id] of record.recipientIds) store.recipientIds.set(key, id);
  // Records list messages in id order (the order IdMap iterates), so every index array stays sorted.
  const lists = record.holderLists ?? [];
  for (const { content, renderedContent, editHistory, ...message } of record.messages) {
    // The decoded record is this store's own: its values are taken as they are, not copied.
    if (typeof message.userIds === 'number') message.userIds = lists[message.userIds]!;
    indexMessage(store, { ...message, body: { content, renderedContent, editHistory }, contentHas: contentHas(renderedContent) } as StoredMessage);
    store.bodies.unsaved.add(message.id);
  }
  for (const flag of PERSONAL_FLAGS) {
    for (const [userId, ids] of record.flags[flag] ?? []) store.flags[flag].set(userId, new IdSet(ids));
  }
  // Built from one whole record (a snapshot of format 1, an export): no chunk of it is stored yet.
  for (const id of store.byId.keys()) markUnsaved(store, id);
  for (const flag of PERSONAL_FLAGS) for (const ids of store.flags[flag].values()) for (const id of ids) markUnsaved(store, id);
  return store;
}

/** Adds a message to the store and to every index. */
export function indexMessage(store: MessageStore, message: StoredMessage): void {
  store.byId.set(message.id, message);
  addToIndexes(store, message);
  for (const userId of mentionedUsers(message)) mentionSet(store, userId).add(message.id);
}

/** Adds the id to the key's list, which tells the index that the next snapshot writes it. */
function addTo<K extends string | number>(map: LazyMap<K, IdList>, key: K, id: number): void {
  listOf(map, key).add(id);
}

export function addToIndexes(store: MessageStore, message: StoredMessage): void {
  const { recipient } = message;
  if (recipient.kind === 'channel') {
    addTo(store.byChannel, recipient.channelId, message.id);
    addTo(store.byTopic, topicKey(recipient.channelId, recipient.topic), message.id);
  } else {
    const key = conversationKey(recipient.userIds);
    addTo(store.byConversation, key, message.id);
    for (const userId of recipient.userIds) setOf(store.conversationsOf, userId).add(key);
  }
}

export function removeFromIndexes(store: MessageStore, message: StoredMessage): void {
  const { recipient } = message;
  if (recipient.kind === 'channel') {
    removeSorted(store.byChannel, recipient.channelId, message.id);
    removeSorted(store.byTopic, topicKey(recipient.channelId, recipient.topic), message.id);
  } else {
    removeSorted(store.byConversation, conversationKey(recipient.userIds), message.id);
  }
}

/** Every user whose flags on the message include a mention of any kind. */
export function mentionedUsers(message: StoredMessage): Set<number> {
  const out = new Set<number>();
  const { mentions } = message;
  for (const userId of mentions.userIds) if (hasSorted(message.userIds, userId)) out.add(userId);
  for (const userId of mentions.topicWildcardUserIds) if (hasSorted(message.userIds, userId)) out.add(userId);
  if (mentions.streamWildcard) for (const userId of message.userIds) if (!message.historicalUserIds.includes(userId)) out.add(userId);
  return out;
}

/**
 * How many unread flags (recipients summed over the messages) may wait before they are added (addUnread):
 * 65,536 are added in about 1-3 ms, one turn of the event loop (a channel of 1,000's 65 messages). Each
 * recipient's set is then reached once for all of them rather than once per message.
 */
const PENDING_UNREAD_FLAGS = 65_536;
/** and how many messages, however few their recipients: the list stays a few tens of KB */
const PENDING_UNREAD_MESSAGES = 1024;

/**
 * Notes a new message unread for its holders but `skip`. The ids are added to their unread sets when the
 * flags are next read (`store.flags`: a query, a flag change, a snapshot), for every pending message at
 * once, rather than to each recipient's set as it is sent: after an idle wait, a send to a channel of
 * 1,000 found each of their sets out of the processor's caches, 0.1-0.25 ms of the send (bench/README.md,
 * "Eighth pass"). Its own flags need not add them (pendingUnread).
 */
export function addUnread(store: MessageStore, id: number, userIds: readonly number[], skip: number): void {
  store.pendingUnread.push({ id, userIds, skip });
  store.pendingUnreadFlags += userIds.length;
  if (store.pendingUnreadFlags >= PENDING_UNREAD_FLAGS || store.pendingUnread.length >= PENDING_UNREAD_MESSAGES) addPendingUnread(store);
}

/**
 * Whether the message is unread for the user while its unread flags are pending, else undefined (read the
 * sets). A message pending has no other flag yet: setting one reads the sets, which adds the pending first.
 */
export function pendingUnread(store: MessageStore, messageId: number, userId: number): boolean | undefined {
  const pending = store.pendingUnread;
  // Ids ascending, newest last: an event's flags are asked of the message just sent, a fetch's of older ones.
  // (An id not found is read from the sets, which is right too.)
  if (pending.length === 0 || messageId < pending[0]!.id) return undefined;
  for (let i = pending.length - 1; i >= 0; i--) {
    const entry = pending[i]!;
    if (entry.id === messageId) return entry.skip !== userId && hasSorted(entry.userIds, userId);
    if (entry.id < messageId) return undefined;
  }
  return undefined;
}

/**
 * Adds the pending unread flags to the sets: each recipient's set once per run of messages sharing their
 * holder list, their ids added as ranges of consecutive ids (a channel's messages mostly are).
 */
function addPendingUnread(store: MessageStore): void {
  const pending = store.pendingUnread;
  store.pendingUnread = [];
  store.pendingUnreadFlags = 0;
  const unread = store.flagSets.unread;
  for (let start = 0; start < pending.length; ) {
    const { userIds } = pending[start]!;
    let end = start + 1;
    while (end < pending.length && pending[end]!.userIds === userIds) end++;
    for (let u = 0; u < userIds.length; u++) {
      const userId = userIds[u]!;
      let set: IdSet | null = null;
      let from = -1;
      let to = -1;
      for (let i = start; i < end; i++) {
        const { id, skip } = pending[i]!;
        if (skip === userId) continue;
        if (id === to) {
          to++;
          continue;
        }
        if (from >= 0) (set ??= idSetOf(unread, userId)).addRange(from, to);
        from = id;
        to = id + 1;
      }
      if (from >= 0) (set ??= idSetOf(unread, userId)).addRange(from, to);
    }
    start = end;
  }
}

export function flagSet(store: MessageStore, flag: PersonalFlag, userId: number): IdSet {
  return idSetOf(store.flags[flag], userId);
}

/** The ids of the messages that mention the user, made if there were none. */
export function mentionSet(store: MessageStore, userId: number): IdSet {
  return idSetOf(store.mentionedOf, userId);
}

function idSetOf(map: LazyMap<number, IdSet>, userId: number): IdSet {
  let set = map.get(userId);
  if (!set) map.set(userId, (set = new IdSet()));
  return set;
}

/** Every per-key index of the store, by the code its stored records carry (realm/snapshot.ts). */
export function keyIndexes(store: MessageStore) {
  return [
    ['c', store.byChannel],
    ['t', store.byTopic],
    ['d', store.byConversation],
    ['u', store.flags.unread],
    ['s', store.flags.starred],
    ['o', store.flags.collapsed],
    ['m', store.mentionedOf],
  ] as const;
}

export type KeyIndexCode = ReturnType<typeof keyIndexes>[number][0];

// ---- sorted number arrays ---------------------------------------------------------------------------------

export { lowerBound };

export function sameList(a: readonly number[], b: readonly number[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  // A loop, not `every`: asked on each send, without a closure to allocate.
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export const hasSorted = (list: readonly number[], value: number) => list[lowerBound(list, value)] === value;

export function insertSorted(list: number[], value: number): void {
  // Messages arrive in id order: appending is the common case.
  if (list.length === 0 || list[list.length - 1]! < value) {
    list.push(value);
    return;
  }
  const at = lowerBound(list, value);
  if (list[at] !== value) list.splice(at, 0, value);
}

function removeSorted<K extends string | number>(map: LazyMap<K, IdList>, key: K, value: number): void {
  const list = map.get(key);
  if (!list) return;
  list.delete(value);
  if (list.isEmpty) map.delete(key);
}

/** The list's oldest id not in `gone`, or null: its segments are read from the oldest only as far as that. */
export function firstIdNotIn(list: IdList | undefined, gone: ReadonlySet<number>): number | null {
  if (list) for (const id of list) if (!gone.has(id)) return id;
  return null;
}

export function listOf<K>(map: Map<K, IdList>, key: K): IdList {
  let list = map.get(key);
  if (!list) map.set(key, (list = new IdList()));
  return list;
}

export function setOf<K, V>(map: Map<K, Set<V>>, key: K): Set<V> {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  return set;
}

/** Whether a per-key index changed since the last snapshot (a store loaded whole has all its keys to write). */
export const messageKeysChanged = (store: MessageStore) => keyIndexes(store).some(([, index]) => index.changed);
