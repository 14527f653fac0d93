import { IdSet } from './id-set.ts';
import { IdList } from './id-list.ts';
import { LazyMap, SEGMENT_SIZE, type ValueKind } from './lazy-map.ts';
import { StoredSegment } from './stored-segment.ts';

/**
 * One segment of a key's ids (lazy-map.ts) as a snapshot stores it: the ids themselves, or as runs of
 * consecutive ids ([from, to) pairs, unread messages come in runs), whichever is shorter; the bytes of an
 * Int32Array (little-endian), which decode with one copy.
 */
export interface KeySegmentRecord {
  ids?: Uint8Array;
  runs?: Uint8Array;
}

const bytesOf = (values: Int32Array) => new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
const int32s = (bytes: Uint8Array) => new Int32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));

/** The record of the ids in runs ([from, to) pairs), null if there are none. */
function runsRecord(runs: readonly number[]): KeySegmentRecord | null {
  if (runs.length === 0) return null;
  let count = 0;
  for (let i = 0; i < runs.length; i += 2) count += runs[i + 1]! - runs[i]!;
  if (runs.length < count) return { runs: bytesOf(Int32Array.from(runs)) };
  const ids = new Int32Array(count);
  let at = 0;
  for (let i = 0; i < runs.length; i += 2) for (let id = runs[i]!; id < runs[i + 1]!; id++) ids[at++] = id;
  return { ids: bytesOf(ids) };
}

/** A segment record read in place (stored-segment.ts); none: no ids. */
function storedSegment(record: KeySegmentRecord | undefined): StoredSegment {
  // Written by runsRecord: one of the two.
  if (record?.runs) return StoredSegment.ofRuns(int32s(record.runs));
  if (record?.ids) return StoredSegment.ofIds(int32s(record.ids));
  return StoredSegment.EMPTY;
}

const segmentRange = (segment: number): [number, number] => [segment * SEGMENT_SIZE, (segment + 1) * SEGMENT_SIZE];

/** A sorted id list (a channel's, topic's or conversation's messages), kept by segment. */
export const ID_LIST: ValueKind<IdList> & {
  segment(list: IdList, segment: number): KeySegmentRecord | null;
  read(record: KeySegmentRecord | undefined): StoredSegment;
} = {
  ids: (list) => list,
  watch(list, changed) {
    list.onChange = changed;
  },
  segments: (list) => list.segmentNumbers(),
  bind(list, source) {
    list.source = source;
    list.residentTo(source);
  },
  drop: (list, segment) => list.drop(segment),
  segment(list, segment) {
    const ids = list.segmentIds(segment);
    if (ids === null) return null;
    const runs: number[] = [];
    for (let at = 0; at < ids.length; at++) {
      const id = ids[at]!;
      if (runs.length > 0 && runs[runs.length - 1] === id) runs[runs.length - 1] = id + 1;
      else runs.push(id, id + 1);
    }
    return runsRecord(runs);
  },
  // Read in place: a window decodes only the ids it walks, a change the whole segment (id-list.ts).
  read: storedSegment,
};

/** A set of ids (a user's flag or mentions), which reports its own changes. */
export const ID_SET: ValueKind<IdSet> & {
  segment(set: IdSet, segment: number): KeySegmentRecord | null;
  read(record: KeySegmentRecord | undefined): StoredSegment;
} = {
  ids: (set) => set,
  watch(set, changed) {
    set.onChange = changed;
  },
  segment(set, segment) {
    const [from, to] = segmentRange(segment);
    return runsRecord(set.runs(from, to));
  },
  read: storedSegment,
};

export const idLists = <K extends string | number>(parse: (key: string) => K) => new LazyMap<K, IdList>(parse, ID_LIST);
export const idSets = () => new LazyMap<number, IdSet>(Number, ID_SET);
