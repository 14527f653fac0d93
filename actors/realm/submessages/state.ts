/**
 * A submessage: data a widget (a poll, a todo list) attaches to its message. The first, of `msg_type`
 * "widget", is made with the message and says which widget it is; the others are the widget's events (a vote,
 * a new task), in the order they were added, which clients replay to build the widget's state.
 */
export interface Submessage {
  id: number;
  messageId: number;
  senderId: number;
  msgType: string;
  /** JSON text, as the client sent it */
  content: string;
}

/** Submessages by message, each message's in id order. Only messages with widgets have an entry. */
export interface SubmessageStore {
  byMessage: Map<number, Submessage[]>;
  nextId: number;
}

/** How a snapshot stores them; absent in snapshots written before submessages existed. */
export interface SubmessageStoreRecord {
  list: Submessage[];
  nextId: number;
}

export const emptySubmessageStore = (): SubmessageStore => ({ byMessage: new Map(), nextId: 1 });

export function submessageStoreToRecord(store: SubmessageStore): SubmessageStoreRecord {
  return { list: [...store.byMessage.values()].flat(), nextId: store.nextId };
}

export function submessageStoreFromRecord(record: SubmessageStoreRecord | undefined): SubmessageStore {
  const store = emptySubmessageStore();
  if (!record) return store;
  for (const submessage of record.list) addSubmessage(store, submessage);
  store.nextId = Math.max(store.nextId, record.nextId);
  return store;
}

export function addSubmessage(store: SubmessageStore, submessage: Submessage): void {
  const list = store.byMessage.get(submessage.messageId);
  if (list) list.push({ ...submessage });
  else store.byMessage.set(submessage.messageId, [{ ...submessage }]);
  store.nextId = Math.max(store.nextId, submessage.id + 1);
}
