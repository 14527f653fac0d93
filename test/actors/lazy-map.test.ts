import t from 'tap';
import { IdSet } from '../../actors/realm/messages/id-set.ts';
import { IdList } from '../../actors/realm/messages/id-list.ts';
import { ID_LIST, ID_SET, idLists, idSets, type KeySegmentRecord } from '../../actors/realm/messages/key-records.ts';
import { SEGMENT_BITS, segmentOf } from '../../actors/realm/messages/lazy-map.ts';
import { StoredIdSet } from '../../actors/realm/messages/stored-id-set.ts';

// A per-key index with a cache of one key, its segments kept as a snapshot writes them (realm/snapshot.ts
// does the same against the data directory): what is written, read back after eviction, must be the value.

/** Segments by key, as the snapshot writer leaves them. */
function segmentStore() {
  const records = new Map<string, Map<number, KeySegmentRecord>>();
  const loads: string[] = [];
  return {
    loads,
    load: (key: string) => {
      loads.push(key);
      const stored = records.get(key) ?? new Map<number, KeySegmentRecord>();
      return new StoredIdSet([...stored.keys()].sort((a, b) => a - b), (segment) => ID_SET.read(stored.get(segment)));
    },
    /** Writes what a snapshot would: each dirty segment of each key, from the value in memory. */
    write(index: ReturnType<typeof idSets>, taken: Map<number, Set<number>>) {
      for (const [key, segments] of taken) {
        const value = index.peek(key);
        let stored = records.get(String(key));
        if (!stored) records.set(String(key), (stored = new Map()));
        for (const segment of segments) {
          const record = value && ID_SET.segment(value, segment);
          if (record) stored.set(segment, record);
          else stored.delete(segment);
        }
      }
    },
  };
}

t.test('a changed key stays in memory until its snapshot is written; evicted, it reads back what was written', async (t) => {
  const store = segmentStore();
  const index = idSets();
  index.attach(store.load, 1);
  const far = 3 << 17;
  for (const user of [1, 2, 3]) {
    const set = new IdSet([user, far + user]);
    index.set(user, set);
  }
  t.equal(index.residentKeys, 3, 'changed keys stay, whatever the limit');
  const taken = index.takeDirty();
  t.same([...taken.get(1)!].sort(), [segmentOf(1), segmentOf(far)], 'every segment of a value set whole is written');
  index.get(2)!.add(10);
  t.equal(index.residentKeys, 3, 'held while its snapshot is written');
  store.write(index, taken);
  index.release(taken);
  t.equal(index.residentKeys, 1, 'released: the clean keys go');
  t.ok(index.peek(2), 'the key changed since stays');

  // The write of the change to key 2 fails: its segments are unsaved again, and it stays until written.
  const failed = index.takeDirty();
  index.restore(failed);
  t.ok(index.changed, 'unsaved again after a failed write');
  index.get(1);
  index.get(3);
  t.ok(index.peek(2), 'an unsaved key is never evicted');
  const second = index.takeDirty();
  store.write(index, second);
  index.release(second);
  index.get(1);
  index.get(3);
  t.notOk(index.peek(2), 'written, it may go');
  t.same([...index.get(2)!], [2, 10, far + 2], 'and reads back with its change');
  t.same([...index.keys()].sort(), [1, 2, 3], 'every key is listed without reading it');
  t.equal(index.size, 3);
});

t.test("a set's changes are told once per segment per snapshot; one evicted is no longer the key's", async (t) => {
  const store = segmentStore();
  const index = idSets();
  index.attach(store.load, 1);
  const set = new IdSet();
  index.set(7, set);
  const first = index.takeDirty();
  store.write(index, first);
  index.release(first);
  for (let id = 1; id < 1000; id++) set.add(id);
  set.add(5 << 17);
  const taken = index.takeDirty();
  t.same([...taken.get(7)!].sort((a, b) => a - b), [0, 5], 'the two segments changed');
  store.write(index, taken);
  index.release(taken);
  index.known(['8']);
  index.get(8);
  t.notOk(index.peek(7), 'evicted for another key');
  set.add(2000);
  t.notOk(index.changed, 'a change to the evicted value marks nothing');
  t.same(index.get(7)!.size, 1000, 'the key reads back what was written');
});

t.test('an id list reads only the segments asked for; clean ones leave memory past the bound, changed ones stay until written', async (t) => {
  const records = new Map<string, Map<number, KeySegmentRecord>>();
  const reads: string[] = [];
  const index = idLists(String);
  const stored = (key: string) => records.get(key) ?? new Map<number, KeySegmentRecord>();
  const write = (taken: Map<string, Set<number>>) => {
    for (const [key, segments] of taken) {
      const value = index.peek(key);
      if (!records.has(key)) records.set(key, new Map());
      for (const segment of segments) {
        const record = value && ID_LIST.segment(value, segment);
        if (record) records.get(key)!.set(segment, record);
        else records.get(key)!.delete(segment);
      }
    }
  };
  const size = 2 ** SEGMENT_BITS;
  // Ten segments of a hundred ids each, written as a snapshot would.
  const list = new IdList();
  for (let segment = 0; segment < 10; segment++) for (let i = 0; i < 100; i++) list.add(segment * size + i * 3);
  index.set('c', list);
  index.set('d', new IdList([1]));
  const first = index.takeDirty();
  write(first);
  index.release(first);
  index.attach(
    (key) => IdList.stored([...stored(key).keys()].sort((a, b) => a - b)),
    1,
    (key, segment) => {
      reads.push(`${key}:${segment}`);
      return ID_LIST.read(stored(key).get(segment));
    },
    250,
  );
  index.get('d');
  t.notOk(index.peek('c'), 'another key read: the list left memory');
  const cold = index.get('c')!;
  t.equal(cold.residentSegments, 0, 'a key is read as its segments, none of them yet');
  const walked: number[] = [];
  for (const id of cold.idsFrom(5 * size + 10, true)) if (walked.push(id) === 3) break;
  t.same(walked, [5 * size + 9, 5 * size + 6, 5 * size + 3], 'a walk down from an anchor');
  t.same(reads, ['c:5'], 'reads the one segment');
  t.equal(cold.last(), 9 * size + 297, 'the newest id');
  t.ok(cold.has(2 * size + 30) && !cold.has(2 * size + 31), 'has');
  t.equal(reads.length, 3, 'each lookup read its own segment');
  cold.add(9 * size + 300);
  cold.delete(2 * size + 30);
  t.same([...cold].length, 1000, 'a walk of the whole list reads every segment');
  t.ok(index.residentSegments.ids <= 250 + 100 + 2 * 101, `past the bound the clean segments went (${JSON.stringify(index.residentSegments)})`);
  t.ok(cold.segmentIds(9) !== null && cold.segmentIds(2) !== null, 'the changed segments stay');
  const taken = index.takeDirty();
  t.same([...taken.get('c')!].sort(), [2, 9], 'only the changed segments are written');
  write(taken);
  index.release(taken);
  t.ok(index.residentSegments.ids <= 250 + 100, 'written, they may go too');
  const again = IdList.stored([...stored('c').keys()].sort((a, b) => a - b));
  again.source = { read: (segment) => ID_LIST.read(stored('c').get(segment)), used: () => {} };
  t.same([...again], [...cold], 'the segments read back hold the changes');
  t.equal(again.sizeBound, 1000, 'counted exactly once every segment was read');
  t.same(again.newestRun((id) => id >= 8 * size + 150), { count: 150 + 1, oldest: 8 * size + 150 }, 'counts the newest from the remembered segments');
});

t.test('a stored id set reads only the segments a lookup reaches, and tells no change for what it reads', async (t) => {
  const size = 2 ** SEGMENT_BITS;
  // Segments 0, 3 and 7: runs of unread messages, as a snapshot stores them.
  const whole = new IdSet();
  for (const segment of [0, 3, 7]) whole.addRange(segment * size + 10, segment * size + 20).add(segment * size + 100);
  const reads: number[] = [];
  const stored = () => new StoredIdSet([0, 3, 7], (segment) => {
    reads.push(segment);
    return ID_SET.read(ID_SET.segment(whole, segment) ?? undefined);
  });
  const set = stored();
  const changes: number[] = [];
  set.onChange = (id) => changes.push(id);
  t.notOk(set.isEmpty, 'not empty, nothing read');
  t.equal(set.sizeBound, 3 * size, 'a segment not read counts as full');
  t.ok(set.has(3 * size + 15) && !set.has(3 * size + 25), 'has');
  t.same(reads, [3], "reads the id's segment only (the part of it that holds the id)");
  const newest: number[] = [];
  for (const id of set.idsFrom(Infinity, true)) if (newest.push(id) === 12) break;
  t.same(newest, [7 * size + 100, ...Array.from({ length: 10 }, (_, i) => 7 * size + 19 - i), 3 * size + 100], 'a walk from the newest reads on as it goes');
  t.same(reads, [3, 7], 'and reads the newest segment (the one a lookup read a part of is read whole from the same read)');
  set.add(8 * size + 1);
  set.delete(7 * size + 100);
  t.same(changes, [8 * size + 1, 7 * size + 100], 'what it read is no change; what changed is');
  const oldest: number[] = [];
  for (const id of set.idsFrom(-1, false)) if (oldest.push(id) === 2) break;
  t.same(oldest, [10, 11], 'a walk from the oldest');
  t.equal(set.size, 3 * 11 - 1 + 1, 'the size reads everything');
  t.same([...set], [...whole].filter((id) => id !== 7 * size + 100).concat(8 * size + 1), 'every id, in order');
  t.same(stored().runs(3 * size, 4 * size), whole.runs(3 * size, 4 * size), "a segment's runs, as written");
});
