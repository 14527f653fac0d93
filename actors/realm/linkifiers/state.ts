import { compileLinkifier, type CompiledLinkifier } from './pattern.ts';

/** A pattern that turns matching text in messages and topics into links. */
export interface Linkifier {
  id: number;
  /** an RE2 regular expression (the original's dialect), checked when stored */
  pattern: string;
  /** an RFC 6570 template naming the pattern's groups */
  urlTemplate: string;
}

export interface LinkifierStore {
  /** in the order they are applied (new ones last; PATCH /realm/linkifiers reorders) */
  list: Linkifier[];
  nextId: number;
  /** the list compiled, in the same order: derived, rebuilt whenever the list changes and on load */
  compiled: CompiledLinkifier[];
}

export interface LinkifierStoreRecord {
  list: Linkifier[];
  nextId: number;
}

export const emptyLinkifierStore = (): LinkifierStore => ({ list: [], nextId: 1, compiled: [] });

export const linkifierStoreToRecord = (store: LinkifierStore): LinkifierStoreRecord => ({ list: store.list, nextId: store.nextId });

export function linkifierStoreFromRecord(record: LinkifierStoreRecord | undefined): LinkifierStore {
  // Snapshots written before linkifiers existed have none.
  if (!record) return emptyLinkifierStore();
  const store: LinkifierStore = { list: record.list.map((linkifier) => ({ ...linkifier })), nextId: record.nextId, compiled: [] };
  recompile(store);
  return store;
}

export function recompile(store: LinkifierStore): void {
  store.compiled = store.list.map(compileLinkifier).filter((compiled): compiled is CompiledLinkifier => compiled !== null);
}
