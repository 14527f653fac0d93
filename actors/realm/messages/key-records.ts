import { IdSet } from './id-set.ts';
import { IdList } from './id-list.ts';
import { LazyMap, SEGMENT_SIZE, type ValueKind } from './lazy-map.ts';

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

/** The ids a segment record holds, ascending. */
function* idsOf(record: KeySegmentRecord): IterableIterator<number> {
  if (record.ids) yield* int32s(record.ids);
  if (record.runs) {
    const runs = int32s(record.runs);
    for (let i = 0; i < runs.length; i += 2) for (let id = runs[i]!; id < runs[i + 1]!; id++) yield id;
  }
}

const segmentRange = (segment: number): [number, number] => [segment * SEGMENT_SIZE, (segment + 1) * SEGMENT_SIZE];

/** A sorted id list (a channel's, topic's or conversation's messages), kept by segment. */
export const ID_LIST: ValueKind<IdList> & {
  segment(list: IdList, segment: number): KeySegmentRecord | null;
  read(record: KeySegmentRecord | undefined): number[];
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
  // A plain array, as a list built in memory holds: the hot walks read both kinds by index, and an array and
  // a typed array read by the same code cost a window of 50 about a sixth more (bench/README.md). Made at its
  // length and filled, not pushed to nor Array.from: 0.7 ms for a segment of 131,072 ids against 2.4-2.8
  // pushed and 4 through Array.from (every cold window of a big channel reads one).
  read(record) {
    if (!record) return [];
    // Written by runsRecord: one of the two.
    if (record.ids && !record.runs) {
      const stored = int32s(record.ids);
      const ids = new Array<number>(stored.length);
      for (let i = 0; i < stored.length; i++) ids[i] = stored[i]!;
      return ids;
    }
    if (record.ids || !record.runs) return [...idsOf(record)];
    // A channel that holds most messages is a few runs: expanded without a generator.
    const runs = int32s(record.runs);
    let count = 0;
    for (let i = 0; i < runs.length; i += 2) count += runs[i + 1]! - runs[i]!;
    const ids = new Array<number>(count);
    let at = 0;
    for (let i = 0; i < runs.length; i += 2) for (let id = runs[i]!; id < runs[i + 1]!; id++) ids[at++] = id;
    return ids;
  },
};

/** A set of ids (a user's flag or mentions), which reports its own changes. */
export const ID_SET: ValueKind<IdSet> & {
  segment(set: IdSet, segment: number): KeySegmentRecord | null;
  runs(record: KeySegmentRecord | undefined): ArrayLike<number>;
} = {
  ids: (set) => set,
  watch(set, changed) {
    set.onChange = changed;
  },
  segment(set, segment) {
    const [from, to] = segmentRange(segment);
    return runsRecord(set.runs(from, to));
  },
  runs(record) {
    if (!record) return [];
    if (record.runs && !record.ids) return int32s(record.runs);
    const runs: number[] = [];
    for (const id of idsOf(record)) {
      if (runs.length > 0 && runs[runs.length - 1] === id) runs[runs.length - 1] = id + 1;
      else runs.push(id, id + 1);
    }
    return runs;
  },
};

export const idLists = <K extends string | number>(parse: (key: string) => K) => new LazyMap<K, IdList>(parse, ID_LIST);
export const idSets = () => new LazyMap<number, IdSet>(Number, ID_SET);
