/** A custom emoji of the realm; the image lives in the data directory (src/emoji-images.ts), the facts here. */
export interface RealmEmoji {
  id: number;
  /** lower-case letters, digits, `-` and `_`, written `:name:` in messages */
  name: string;
  /** the image's file name in the realm's emoji folder */
  fileName: string;
  /** a still (first frame) of an animated image, in the folder's `still/`; null for a still image */
  stillFileName: string | null;
  /** null when the uploader is unknown (as in imported realms of the original) */
  authorId: number | null;
  /** deactivated emoji stay listed, and shown where they were used, but cannot be used anew */
  deactivated: boolean;
}

export interface EmojiStore {
  byId: Map<number, RealmEmoji>;
  nextId: number;
  /** index: name -> id of the active emoji of that name (at most one); rebuilt on load */
  activeByName: Map<string, number>;
}

export interface EmojiStoreRecord {
  emoji: RealmEmoji[];
  nextId: number;
}

export const emptyEmojiStore = (): EmojiStore => ({ byId: new Map(), nextId: 1, activeByName: new Map() });

export const emojiStoreToRecord = (store: EmojiStore): EmojiStoreRecord => ({ emoji: [...store.byId.values()], nextId: store.nextId });

export function emojiStoreFromRecord(record: EmojiStoreRecord | undefined): EmojiStore {
  const store = emptyEmojiStore();
  // Snapshots written before custom emoji existed have none.
  if (!record) return store;
  for (const emoji of record.emoji) addEmoji(store, { ...emoji });
  store.nextId = Math.max(store.nextId, record.nextId);
  return store;
}

export function addEmoji(store: EmojiStore, emoji: RealmEmoji): void {
  store.byId.set(emoji.id, emoji);
  if (!emoji.deactivated) store.activeByName.set(emoji.name, emoji.id);
  store.nextId = Math.max(store.nextId, emoji.id + 1);
}

/** The active emoji of that name, if any. */
export function activeEmoji(store: EmojiStore, name: string): RealmEmoji | undefined {
  const id = store.activeByName.get(name);
  return id === undefined ? undefined : store.byId.get(id);
}
