import t from 'tap';
import { IdSet } from '../../actors/realm/messages/id-set.ts';
import { ID_SET, idSets, type KeySegmentRecord } from '../../actors/realm/messages/key-records.ts';
import { segmentOf } from '../../actors/realm/messages/lazy-map.ts';

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
      const segments = [...(records.get(key) ?? new Map<number, KeySegmentRecord>())].sort(([a], [b]) => a - b).map(([, record]) => record);
      return ID_SET.load(segments);
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
