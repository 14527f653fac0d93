import type { IndexOp } from '../snapshots/index-ops.ts';

export type { IndexOp };

/**
 * The narrow view of the full-text index that the actors need; snapshots/search-index.ts implements it.
 * `query` is an FTS5 expression (see realm/messages/search-query.ts). Reads run off the event loop.
 */
export interface SearchIndex {
  /** the last log position whose message changes the index holds */
  position(): number;
  /** applies `ops` and records `seq` as the position, in one transaction, now (boot) */
  write(seq: number, ops: readonly IndexOp[]): void;
  /** the same, off the event loop (serving): done before any search asked for later */
  post(seq: number, ops: readonly IndexOp[]): void;
  /** removes every message and records position 0, now (boot, before the index is built again) */
  clear(): void;
  /** resolves once every write posted before is done */
  settled(): Promise<void>;
  /** matching ids of the realm below `bound` (newest first) or above it (oldest first), at most `limit` */
  search(realmId: number, query: string, direction: 'before' | 'after', bound: number, limit: number): Promise<number[]>;
  /** which of `ids` match */
  matching(realmId: number, query: string, ids: readonly number[]): Promise<Set<number>>;
  close(): Promise<void>;
}
