import t from 'tap';
import { Later } from '../../actors/later.ts';

t.test('a mapped chain passes the value through every step synchronously, once', async (t) => {
  const seen: string[] = [];
  const source = new Later<string>();
  const end = source.map((json) => `"events":${json}`).map((fields) => `{${fields}}`);
  end.listen((body) => seen.push(body));
  t.same(seen, [], 'nothing before it is settled');
  source.settle('[1]');
  t.same(seen, ['{"events":[1]}'], 'settling the source runs the whole chain before returning');
  source.settle('[2]');
  t.same(seen, ['{"events":[1]}'], 'a second settle is ignored');
});

t.test('a listener or a step added after the value is there gets it at once', async (t) => {
  const later = new Later<number>();
  later.settle(41);
  let got: number | null = null;
  later.listen((value) => (got = value));
  t.equal(got, 41);
  const mapped = new Later<number>();
  mapped.settle(1);
  let next: number | null = null;
  mapped.map((value) => value + 1).listen((value) => (next = value));
  t.equal(next, 2);
});

t.test('await and Promise.resolve take it as a promise', async (t) => {
  const later = new Later<string>();
  setImmediate(() => later.settle('done'));
  t.equal(await later, 'done');
  const settled = new Later<number>();
  settled.settle(7);
  t.equal(await Promise.resolve(settled.map((value) => value * 2)), 14);
});
