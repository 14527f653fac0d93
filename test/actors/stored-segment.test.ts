import t, { type Test } from 'tap';
import { IdList } from '../../actors/realm/messages/id-list.ts';
import { IdSet } from '../../actors/realm/messages/id-set.ts';
import { ID_LIST, ID_SET, type KeySegmentRecord } from '../../actors/realm/messages/key-records.ts';
import { SEGMENT_SIZE, segmentOf } from '../../actors/realm/messages/lazy-map.ts';
import { lowerBound } from '../../actors/realm/messages/lower-bound.ts';
import { StoredIdSet } from '../../actors/realm/messages/stored-id-set.ts';
import { StoredSegment } from '../../actors/realm/messages/stored-segment.ts';

// A stored segment read in place (stored-segment.ts), and the id lists and sets that read windows and parts
// of one without decoding it whole, against plain sorted arrays: the same ids, before and after changes.

/** A fixed pseudo-random sequence, the same every run. */
function randomness(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 48271) % 2147483647) / 2147483647;
}

/**
 * Sorted ids within segments 0 to `segments` - 1: runs of consecutive ids (a channel that holds most
 * messages, unread messages) and lone ids (a topic among many), so that records of both kinds are written.
 */
function someIds(random: () => number, segments: number): number[] {
  const ids = new Set<number>();
  for (let segment = 0; segment < segments; segment++) {
    const base = segment * SEGMENT_SIZE;
    if (segment % 2 === 0) {
      for (let run = 0; run < 20; run++) {
        const from = base + Math.floor(random() * (SEGMENT_SIZE - 600));
        for (let id = from; id < from + 1 + Math.floor(random() * 500); id++) ids.add(id);
      }
    } else {
      for (let k = 0; k < 300; k++) ids.add(base + Math.floor(random() * SEGMENT_SIZE));
    }
  }
  return [...ids].sort((a, b) => a - b);
}

const runsOf = (ids: readonly number[]) => {
  const runs: number[] = [];
  for (const id of ids) {
    if (runs.length > 0 && runs[runs.length - 1] === id) runs[runs.length - 1] = id + 1;
    else runs.push(id, id + 1);
  }
  return runs;
};

t.test('a stored segment of ids or of runs answers positions, lookups, slices and runs as its ids would', async (t) => {
  const random = randomness(7);
  const ids = someIds(random, 2).filter((id) => segmentOf(id) === 0);
  const sparse = someIds(random, 2).filter((id) => segmentOf(id) === 1);
  const cases: [string, number[], StoredSegment][] = [
    ['runs', ids, StoredSegment.ofRuns(Int32Array.from(runsOf(ids)))],
    ['ids', sparse, StoredSegment.ofIds(Int32Array.from(sparse))],
    ['one run', [5, 6, 7, 8], StoredSegment.ofRuns(Int32Array.from([5, 9]))],
  ];
  for (const [kind, expected, stored] of cases) {
    t.equal(stored.length, expected.length, `${kind}: length`);
    t.same(stored.toArray(), expected, `${kind}: every id`);
    t.ok(expected.every((id, i) => stored.idAt(i) === id), `${kind}: the id at each position`);
    const probes = [-1, 0, expected[0]! - 1, expected[expected.length - 1]! + 1, 2 ** 31 - 1];
    for (let k = 0; k < 500; k++) probes.push(Math.floor(random() * (expected[expected.length - 1]! + 10)));
    t.ok(probes.every((id) => stored.lowerBound(id) === lowerBound(expected, id)), `${kind}: lowerBound`);
    t.ok(probes.every((id) => stored.has(id) === expected.includes(id)), `${kind}: has`);
    let slices = true;
    for (let k = 0; k < 200; k++) {
      const from = Math.floor(random() * expected.length);
      const to = from + Math.floor(random() * (expected.length - from + 1));
      if (JSON.stringify(stored.slice(from, to)) !== JSON.stringify(expected.slice(from, to))) slices = false;
    }
    t.ok(slices, `${kind}: slices`);
    let runs = true;
    for (let k = 0; k < 200; k++) {
      const from = Math.floor(random() * (expected[expected.length - 1]! + 2));
      const to = from + Math.floor(random() * 3000);
      if (JSON.stringify(Array.from(stored.runs(from, to))) !== JSON.stringify(runsOf(expected.filter((id) => id >= from && id < to)))) runs = false;
    }
    t.ok(runs, `${kind}: runs within a range`);
    t.same(Array.from(stored.runs()), runsOf(expected), `${kind}: every run`);
  }
});

/** An id list written by segment as a snapshot does, read back as a boot does: its segments as stored. */
function storedList(records: Map<number, KeySegmentRecord>, weights?: Map<number, number>): IdList {
  const list = IdList.stored([...records.keys()].sort((a, b) => a - b));
  list.source = { read: (segment) => ID_LIST.read(records.get(segment)), used: (segment, ids) => weights?.set(segment, ids) };
  return list;
}

function write(list: IdList, records: Map<number, KeySegmentRecord>, segments: Iterable<number>): void {
  for (const segment of segments) {
    const record = ID_LIST.segment(list, segment);
    if (record) records.set(segment, record);
    else records.delete(segment);
  }
}

/** What a window walks (query.ts): `count` ids from `from`, asking a segment for a few at a time. */
function walk(list: IdList, from: number, down: boolean, count: number, ask: number): number[] {
  const out: number[] = [];
  let last = from;
  for (let at = list.segmentFrom(last, down); at >= 0 && at < list.segmentCount && out.length < count; ) {
    const [ids, start, more] = list.near(at, last, down, ask);
    for (let i = start; i >= 0 && i < ids.length && out.length < count; i += down ? -1 : 1) out.push((last = ids[i]!));
    if (!more) at += down ? -1 : 1;
  }
  return out;
}

/** The same answers from the list read by segment and from the sorted array of what it should hold. */
function compare(t: Test, list: IdList, expected: readonly number[], random: () => number, what: string): void {
  const top = expected[expected.length - 1]! + 5;
  let windows = true;
  let lookups = true;
  for (let k = 0; k < 150; k++) {
    const anchor = Math.floor(random() * top);
    const ask = 1 + Math.floor(random() * 60);
    const count = Math.floor(random() * 400);
    const at = lowerBound(expected, anchor);
    const below = expected.slice(Math.max(0, at - count), at).reverse();
    const above = expected.slice(expected[at] === anchor ? at + 1 : at, (expected[at] === anchor ? at + 1 : at) + count);
    if (JSON.stringify(walk(list, anchor, true, count, ask)) !== JSON.stringify(below)) windows = false;
    if (JSON.stringify(walk(list, anchor, false, count, ask)) !== JSON.stringify(above)) windows = false;
    const taken: number[] = [];
    for (const id of list.idsFrom(anchor, true)) if (taken.push(id) >= count) break;
    if (count > 0 && JSON.stringify(taken) !== JSON.stringify(below)) windows = false;
    if (list.has(anchor) !== (expected[at] === anchor)) lookups = false;
  }
  t.ok(windows, `${what}: windows up and down from anchors, asked for a few ids at a time, and idsFrom`);
  t.ok(lookups, `${what}: has`);
  t.equal(list.first(), expected[0], `${what}: first`);
  t.equal(list.last(), expected[expected.length - 1], `${what}: last`);
  const since = expected[Math.floor(expected.length * 0.7)]!;
  const recent = expected.filter((id) => id >= since);
  t.same(list.newestRun((id) => id >= since), { count: recent.length, oldest: recent[0] }, `${what}: newestRun`);
}

t.test('an id list read by segment answers as the ids it holds, without decoding a segment a window reads, before and after changes and a restart', async (t) => {
  const random = randomness(11);
  const expected = someIds(random, 6);
  const records = new Map<number, KeySegmentRecord>();
  write(new IdList(expected), records, [0, 1, 2, 3, 4, 5]);
  t.ok([...records.values()].some((record) => record.runs) && [...records.values()].some((record) => record.ids), 'records of runs and of ids');

  const weights = new Map<number, number>();
  const list = storedList(records, weights);
  t.same(walk(list, 2 * SEGMENT_SIZE + SEGMENT_SIZE / 2, true, 3, 3), expected.filter((id) => id < 2 * SEGMENT_SIZE + SEGMENT_SIZE / 2).slice(-3).reverse(), 'a window');
  const inSegment = expected.filter((id) => segmentOf(id) === 2).length;
  t.ok(weights.get(2)! < inSegment / 4, `the window left its segment as stored: it weighs ${weights.get(2)} in the index's bound, not ${inSegment} ids`);
  compare(t, list, expected, random, 'read by segment');

  // Changes in every segment: sends, deletions, a topic moved away and one moved in.
  const reference = new Set(expected);
  let agreed = true;
  for (let k = 0; k < 60; k++) {
    const sends = k % 2 === 0;
    const current = [...reference];
    const id = sends ? Math.floor(random() * 6 * SEGMENT_SIZE) : current[Math.floor(random() * current.length)]!;
    if ((sends ? list.add(id) : list.delete(id)) !== (sends ? !reference.has(id) : true)) agreed = false;
    if (sends) reference.add(id);
    else reference.delete(id);
  }
  t.ok(agreed, 'adds and deletes answer as the ids say');
  const moved = new Set([...reference].filter((_, i) => i % 7 === 0));
  list.deleteAll(moved);
  for (const id of moved) reference.delete(id);
  const movedIn = Array.from({ length: 300 }, (_, i) => 3 * SEGMENT_SIZE + 17 * i).filter((id) => !reference.has(id));
  list.mergeSorted(movedIn);
  for (const id of movedIn) reference.add(id);
  const now = [...reference].sort((a, b) => a - b);
  t.same([...list], now, 'a walk of the whole list after the changes');
  compare(t, list, now, random, 'changed');

  write(list, records, [0, 1, 2, 3, 4, 5]);
  compare(t, storedList(records), now, random, 'written and read back');
});

t.test("a stored id set's lookup reads the part of a segment that holds the id, and a change the whole segment", async (t) => {
  const random = randomness(5);
  const ids = someIds(random, 4);
  const whole = new IdSet(ids);
  const records = new Map<number, KeySegmentRecord>();
  for (let segment = 0; segment < 4; segment++) records.set(segment, ID_SET.segment(whole, segment)!);
  let reads = 0;
  const set = new StoredIdSet([0, 1, 2, 3], (segment) => {
    reads++;
    return ID_SET.read(records.get(segment));
  });
  const changes: number[] = [];
  set.onChange = (id) => changes.push(id);
  const part = SEGMENT_SIZE / 16;
  const agrees = (from: number, to: number) => {
    let same = true;
    for (let id = from; id < to; id++) if (set.has(id) !== whole.has(id)) same = false;
    return same;
  };
  t.ok(agrees(0, part), 'lookups in a sixteenth of a segment answer as the whole set');
  t.same([reads, set.pendingSegments], [1, 4], 'from one read of its record, the segment not read whole');
  t.ok(agrees(5 * part, 6 * part), 'lookups in another part of it');
  t.same([reads, set.pendingSegments], [1, 4], 'from the same read');
  t.ok(agrees(SEGMENT_SIZE, SEGMENT_SIZE + part), 'lookups in the next segment');
  t.same([reads, set.pendingSegments], [2, 4], 'read its record');
  t.ok(agrees(9 * part, 10 * part), 'lookups in a third part of the first segment, its record no longer at hand');
  t.same([reads, set.pendingSegments], [3, 3], 'read it whole');
  let lookups = true;
  for (let k = 0; k < 2000; k++) {
    const id = Math.floor(random() * 4 * SEGMENT_SIZE);
    if (set.has(id) !== whole.has(id)) lookups = false;
  }
  for (const id of ids.filter((_, i) => i % 13 === 0)) if (!set.has(id)) lookups = false;
  t.ok(lookups, 'lookups anywhere answer as the whole set');
  t.same(changes, [], 'what it read is no change');

  set.delete(ids[1]!);
  set.add(2 * SEGMENT_SIZE + 5);
  t.same(changes, [ids[1], 2 * SEGMENT_SIZE + 5], 'changes are told');
  t.ok(set.pendingSegments <= 2, 'a change reads its segment whole');
  const expected = [...whole].filter((id) => id !== ids[1]).concat(whole.has(2 * SEGMENT_SIZE + 5) ? [] : [2 * SEGMENT_SIZE + 5]).sort((a, b) => a - b);
  const walked: number[] = [];
  for (const id of set.idsFrom(Infinity, true)) walked.push(id);
  t.same(walked.reverse(), expected, 'a walk after lookups and changes finds every id once');
  t.equal(set.size, expected.length, 'and the size');
  t.same(set.runs(SEGMENT_SIZE, 2 * SEGMENT_SIZE), runsOf(expected.filter((id) => segmentOf(id) === 1)), "a segment's runs, to be written");
});
