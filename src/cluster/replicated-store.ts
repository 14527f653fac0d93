import type { BodyWrite, LogRecord, Persistence, SnapshotRecord } from '../../actors/persistence.ts';

/** Appends one record to the cluster's stream, right after the stream position given; resolves with its own. */
export type StreamAppend = (record: LogRecord, afterStreamSeq: number) => Promise<number>;

/**
 * The data directory as the runtime sees it in a cluster. At a replica, appends (of the primary's records,
 * Runtime.follow) go to the local log only. At the primary, each record goes to the cluster's stream first,
 * with the stream position it must follow (so that a deposed primary's appends are refused), and to the
 * local log once the stream has stored it: the local log never holds what the cluster does not, and a write
 * is acknowledged once both hold it. The records of one group commit are published at once (pipelined, one
 * round trip for all), and reach LMDB in order.
 */
export class ReplicatedStore implements Persistence {
  private publish: StreamAppend | null = null;
  /** the stream position the next record must follow */
  private streamSeq = 0;
  /** resolves once the previous record was handed to LMDB (not written: its commit may still be in flight) */
  private handedOn: Promise<unknown> = Promise.resolve();
  /** why appends are refused: a deposed primary's first refused append stops all the later ones */
  private fenced: Error | null = null;
  /**
   * The last record the stream stored for this primary: every stream position up to `streamSeq` holds a
   * record of log position `seq` or before (what the stream may drop once a snapshot holds `seq`).
   */
  stored: { seq: number; streamSeq: number } = { seq: 0, streamSeq: 0 };

  constructor(
    private readonly local: Persistence,
    /** told of every record the stream stored (its stream position) */
    private readonly onStored: (streamSeq: number) => void,
  ) {}

  /** This node became the primary, the stream's last position being `streamSeq`: appends go through the stream. */
  lead(publish: StreamAppend, streamSeq: number, logSeq: number): void {
    this.publish = publish;
    this.streamSeq = streamSeq;
    this.stored = { seq: logSeq, streamSeq };
    this.fenced = null;
  }

  get leading(): boolean {
    return this.publish !== null && this.fenced === null;
  }

  append(record: LogRecord): Promise<void> {
    if (this.publish === null) return this.local.append(record);
    if (this.fenced) return Promise.reject(this.fenced);
    const stored = this.publish(record, this.streamSeq++);
    const previous = this.handedOn;
    // The wrapper keeps `await` from waiting for the LMDB commit itself: only for it to be handed on.
    const handed = Promise.all([stored, previous]).then(([streamSeq]) => {
      this.stored = { seq: record.seq, streamSeq };
      this.onStored(streamSeq);
      return { written: this.local.append(record) };
    });
    this.handedOn = handed.catch(() => undefined);
    return handed.then(
      ({ written }) => written,
      (error: unknown) => {
        this.fenced ??= error instanceof Error ? error : new Error(String(error));
        throw this.fenced;
      },
    );
  }

  lastSeq(): number {
    return this.local.lastSeq();
  }
  snapshotSeq(): number {
    return this.local.snapshotSeq();
  }
  wasCleanShutdown(): boolean {
    return this.local.wasCleanShutdown();
  }
  readLog(afterSeq: number): Iterable<LogRecord> {
    return this.local.readLog(afterSeq);
  }
  readKept(afterSeq: number): Iterable<LogRecord> {
    return this.local.readKept(afterSeq);
  }
  get tornTail(): { seq: number; error: string } | null {
    return this.local.tornTail;
  }
  discardTornTail(): Promise<void> {
    return this.local.discardTornTail();
  }
  readSnapshots(skipKinds?: readonly string[]): Iterable<SnapshotRecord> {
    return this.local.readSnapshots(skipKinds);
  }
  readSnapshot(kind: string, id: string): SnapshotRecord | undefined {
    return this.local.readSnapshot(kind, id);
  }
  readSnapshotBytes(kind: string, id: string): Uint8Array | undefined {
    return this.local.readSnapshotBytes(kind, id);
  }
  readSnapshotsOf(kind: string, idPrefix: string): Iterable<SnapshotRecord> {
    return this.local.readSnapshotsOf(kind, idPrefix);
  }
  readSnapshotIdsOf(kind: string, idPrefix: string): Iterable<string> {
    return this.local.readSnapshotIdsOf(kind, idPrefix);
  }
  writeSnapshots(
    seq: number,
    records: SnapshotRecord[],
    deleted: [string, string][],
    clean?: boolean,
    bodies?: readonly BodyWrite[],
  ): Promise<void> {
    return this.local.writeSnapshots(seq, records, deleted, clean, bodies);
  }
  readBody(realmId: number, messageId: number): unknown {
    return this.local.readBody(realmId, messageId);
  }
  readBodyBytes(realmId: number, messageId: number): Uint8Array | undefined {
    return this.local.readBodyBytes(realmId, messageId);
  }
  readBodyIds(realmId: number): Iterable<number> {
    return this.local.readBodyIds(realmId);
  }
  readBodies(realmId: number): Iterable<[messageId: number, body: unknown]> {
    return this.local.readBodies(realmId);
  }
}
