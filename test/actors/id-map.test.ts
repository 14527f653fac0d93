import t from 'tap';
import { IdMap } from '../../actors/realm/messages/id-map.ts';

t.test('an IdMap holds values by id, iterates in id order, and counts what it holds', async (t) => {
  const map = new IdMap<string>();
  map.set(5, 'five').set(2, 'two').set(9, 'nine');
  t.equal(map.size, 3);
  t.same([...map.keys()], [2, 5, 9], 'keys in id order, whatever order they came in');
  t.same([...map.values()], ['two', 'five', 'nine']);
  t.same([...map], [[2, 'two'], [5, 'five'], [9, 'nine']]);
  map.set(5, 'FIVE');
  t.equal(map.size, 3, 'replacing a value does not count it twice');
  t.equal(map.get(5), 'FIVE');
  t.ok(map.delete(2));
  t.notOk(map.delete(2), 'deleting an absent id');
  t.same([map.size, map.has(2), map.get(2), map.get(100), map.get(-1)], [2, false, undefined, undefined, undefined]);
  t.throws(() => map.set(-1, 'x'), RangeError, 'not an id');
  t.throws(() => map.set(1.5, 'x'), RangeError);
});
