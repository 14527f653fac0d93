import type { BodyWrite, LogRecord, SnapshotRecord } from '../snapshots/records.ts';

/** The narrow view of the data directory that the actors need; snapshots/store.ts implements it. */
export interface Persistence {
  lastSeq(): number;
  snapshotSeq(): number;
  wasCleanShutdown(): boolean;
  append(record: LogRecord): Promise<void>;
  readLog(afterSeq: number): Iterable<LogRecord>;
  /** the records after `afterSeq` up to the snapshot's position that the log archive still keeps, in order (Store.readKept) */
  readKept(afterSeq: number): Iterable<LogRecord>;
  /** after readLog: a record at the very end that could not be read (a write cut short), if any */
  readonly tornTail: { seq: number; error: string } | null;
  discardTornTail(): Promise<void>;
  /** every snapshot record but those of the kinds in `skipKinds` */
  readSnapshots(skipKinds?: readonly string[]): Iterable<SnapshotRecord>;
  /** one snapshot record; synchronous (memory-mapped) */
  readSnapshot(kind: string, id: string): SnapshotRecord | undefined;
  /** one snapshot record as its bytes (snapshotRecordOf decodes them), valid until the next read of the store */
  readSnapshotBytes(kind: string, id: string): Uint8Array | undefined;
  /** the snapshot records of `kind` whose id starts with `idPrefix`, in key order */
  readSnapshotsOf(kind: string, idPrefix: string): Iterable<SnapshotRecord>;
  /** the ids of those records, without reading them: how an id list's stored segments are found (realm/snapshot.ts) */
  readSnapshotIdsOf(kind: string, idPrefix: string): Iterable<string>;
  /** `bodies` are written in the snapshot's transaction */
  writeSnapshots(seq: number, records: SnapshotRecord[], deleted: [string, string][], clean?: boolean, bodies?: readonly BodyWrite[]): Promise<void>;
  /** a message body a snapshot stored, decoded; synchronous (memory-mapped) */
  readBody(realmId: number, messageId: number): unknown;
  /** a message body a snapshot stored, as its bytes (not decoded), valid until the next read of the store */
  readBodyBytes(realmId: number, messageId: number): Uint8Array | undefined;
  /** the ids of the realm's messages that have a body stored, in order */
  readBodyIds(realmId: number): Iterable<number>;
  /** every message body stored for the realm, in id order */
  readBodies(realmId: number): Iterable<[messageId: number, body: unknown]>;
}

export type { BodyWrite, LogRecord, SnapshotRecord };
