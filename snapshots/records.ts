import { decode, FORMAT_VERSION } from './codec.ts';

/** One entry of the write-ahead log: the changes of one decided command, in order. */
export interface LogRecord<C = unknown> {
  v: number;
  seq: number;
  /** wall-clock milliseconds when the entry was appended */
  at: number;
  /** the organization the changes belong to */
  realmId: number;
  /** set when the changes are a user actor's personal changes (or its event queue's), absent for realm changes */
  userId?: number;
  /** 'queue': the changes are registrations and removals of the user's event queues (a registration and the evictions it caused share one) */
  scope?: 'queue';
  changes: C[];
}

/** The persisted state of one actor, covering every log entry up to and including `seq`. */
export interface SnapshotRecord<D = unknown> {
  v: number;
  seq: number;
  kind: string;
  id: string;
  data: D;
}

/**
 * A message's body as a snapshot stores it, beside its records (see Store.writeSnapshots); `body` null
 * removes the stored one (the message was deleted).
 */
export interface BodyWrite<B = unknown> {
  realmId: number;
  messageId: number;
  body: B | null;
}

export class UnsupportedFormatError extends Error {
  constructor(what: string, version: unknown) {
    super(`${what} has format version ${String(version)}; this server reads up to ${FORMAT_VERSION}`);
  }
}

/** Checks a decoded record's version; the place where older formats get upgraded when there are any. */
export function checkVersion<T extends { v: number }>(what: string, record: T): T {
  if (typeof record.v !== 'number' || record.v > FORMAT_VERSION || record.v < 1) {
    throw new UnsupportedFormatError(what, record.v);
  }
  return record;
}

/** A snapshot record decoded from its stored bytes, its format checked. */
export function snapshotRecordOf(bytes: Uint8Array): SnapshotRecord {
  return checkVersion('snapshot', decode<SnapshotRecord>(bytes));
}
