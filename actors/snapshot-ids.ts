import type { Persistence } from './persistence.ts';

/** A store that lists snapshot records' ids without reading the records (snapshots/store.ts, the replicated store). */
interface ListsSnapshotIds {
  readSnapshotIdsOf(kind: string, idPrefix: string): Iterable<string>;
}

/**
 * The ids of the snapshot records of `kind` whose id starts with `idPrefix`, in key order: how an id list's
 * stored segments are found (realm/snapshot.ts). Listed without reading the records where the store can
 * (Persistence does not name it yet), else read.
 */
export function* snapshotIds(store: Persistence, kind: string, idPrefix: string): Generator<string> {
  const lists = store as Persistence & Partial<ListsSnapshotIds>;
  if (typeof lists.readSnapshotIdsOf === 'function') {
    yield* lists.readSnapshotIdsOf(kind, idPrefix);
    return;
  }
  for (const record of store.readSnapshotsOf(kind, idPrefix)) yield record.id;
}
