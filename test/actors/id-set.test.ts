import t from 'tap';
import { IdSet } from '../../actors/realm/messages/id-set.ts';
import { random } from '../helpers/random.ts';

const ascending = (set: Iterable<number>) => [...set].sort((a, b) => a - b);

t.test('an IdSet agrees with a Set through random adds and deletes, sparse and dense', async (t) => {
  for (const [seed, range] of [[1, 100], [2, 5_000], [3, 300_000]] as const) {
    const next = random(seed);
    const ids = new IdSet();
    const reference = new Set<number>();
    for (let step = 0; step < 20_000; step++) {
      const id = 1 + Math.floor(next() * range);
      // Deletes are rarer than adds, so that blocks fill up into bitmaps and empty out again.
      if (next() < 0.35) {
        const [got, expected] = [ids.delete(id), reference.delete(id)];
        if (got !== expected) t.fail(`seed ${seed} step ${step}: delete ${id} said ${got}`);
      } else {
        ids.add(id);
        reference.add(id);
      }
      if (ids.size !== reference.size) t.fail(`seed ${seed} step ${step}: size ${ids.size}, expected ${reference.size}`);
    }
    t.equal(ids.size, reference.size, `seed ${seed}: same size`);
    t.same([...ids], ascending(reference), `seed ${seed}: same ids, iterated in ascending order`);
    for (let id = 0; id <= Math.min(range, 20_000); id++) if (ids.has(id) !== reference.has(id)) t.fail(`seed ${seed}: has(${id})`);
  }
});

t.test('a block turns into a bitmap and back to nothing; iteration is ascending across blocks', async (t) => {
  const ids = new IdSet([5000, 3, 2047, 1024]);
  t.same([...ids], [3, 1024, 2047, 5000], 'blocks iterate in id order, whatever order they were made in');
  for (let id = 1024; id < 2048; id++) ids.add(id);
  t.equal(ids.size, 1026, 'a full block');
  t.ok(ids.has(1500) && !ids.has(2048) && !ids.has(1023));
  let deleted = 0;
  for (let id = 1024; id < 2048; id++) if (ids.delete(id)) deleted++;
  t.equal(deleted, 1024, 'every id of the block deleted');
  t.same([...ids], [3, 5000], 'the emptied block is gone');
  t.equal(ids.delete(1500), false, 'deleting an absent id');
  t.same([...new IdSet()], [], 'an empty set');
});

t.test('addRange adds runs of ids, over lists, bitmaps and block edges, as add would one by one', async (t) => {
  const runs: [number, number][] = [[0, 5], [3, 40], [1000, 3100], [5000, 5001], [2040, 2060], [7000, 7020], [7019, 9000], [20_000, 20_000]];
  const ids = new IdSet([6, 1, 2500, 7010]);
  const reference = new Set([6, 1, 2500, 7010]);
  for (const [from, to] of runs) {
    ids.addRange(from, to);
    for (let id = from; id < to; id++) reference.add(id);
  }
  t.equal(ids.size, reference.size, 'the count');
  t.same([...ids], [...reference].sort((a, b) => a - b), 'the ids, ascending');
  for (let id = 0; id < 10_000; id += 7) if (ids.has(id) !== reference.has(id)) t.fail(`has(${id})`);
  ids.delete(1500);
  t.equal(ids.size, reference.size - 1, 'a bitmap made by addRange counts its ids for delete');
});

t.test('idsFrom reads the ids beyond any bound, nearest first, in either direction', async (t) => {
  const next = random(4);
  const ids = new IdSet();
  // Sparse blocks (lists), dense ones (bitmaps), and a last id at the top of the id range.
  for (let step = 0; step < 3000; step++) ids.add(1 + Math.floor(next() * 200_000));
  ids.addRange(50_000, 53_500);
  ids.add(2 ** 31 - 1);
  const all = [...ids];
  const bounds = [-5, 0, 1, 1023, 1024, 50_000, 50_001, 51_200, 53_499, 53_500, 199_999, 2 ** 31 - 1, 2 ** 31, 1e16, ...all.filter((_, i) => i % 97 === 0)];
  for (const from of bounds) {
    const below = [...ids.idsFrom(from, true)];
    const above = [...ids.idsFrom(from, false)];
    if (JSON.stringify(below) !== JSON.stringify(all.filter((id) => id < from).reverse())) t.fail(`below ${from}`);
    if (JSON.stringify(above) !== JSON.stringify(all.filter((id) => id > from))) t.fail(`above ${from}`);
  }
  t.same([...ids.idsFrom(1e16, true)].slice(0, 3), [2 ** 31 - 1, ...all.slice(-3, -1).reverse()], 'from "newest" down');
  t.same([...new IdSet().idsFrom(10, true)], [], 'an empty set');
});

t.test('runs over a range agree with the ids, across lists, bitmaps, full words and the range ends; every change is told', async (t) => {
  const naiveRuns = (ids: number[], from: number, to: number) => {
    const out: number[] = [];
    for (const id of ids) {
      if (id < from || id >= to) continue;
      if (out.length > 0 && out[out.length - 1] === id) out[out.length - 1] = id + 1;
      else out.push(id, id + 1);
    }
    return out;
  };
  const next = random(7);
  const ids = new IdSet();
  const told: number[] = [];
  ids.onChange = (id) => told.push(id);
  ids.addRange(100, 70_000);
  for (let step = 0; step < 5_000; step++) ids.delete(100 + Math.floor(next() * 70_000));
  for (let step = 0; step < 2_000; step++) ids.add(80_000 + Math.floor(next() * 200_000));
  t.ok(told.some((id) => id >= 80_000) && told.includes(69_999), 'adds, deletes and both ends of a range were told');
  const all = [...ids];
  for (const [from, to] of [[0, 300_000], [100, 70_000], [1_000, 1_030], [65_536, 131_072], [69_990, 80_500], [5, 6]] as const) {
    t.same(ids.runs(from, to), naiveRuns(all, from, to), `runs in [${from}, ${to})`);
  }
});
