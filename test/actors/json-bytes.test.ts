import t from 'tap';
import { JsonBytes } from '../../actors/wire/json-bytes.ts';

/** JSON text of about `bytes` bytes, different for each `mark`, with a character of two bytes and one of three. */
function largeText(bytes: number, mark: string): string {
  const items: string[] = [];
  for (let size = 2; size < bytes; size += 40) items.push(JSON.stringify({ mark, n: items.length, s: 'é€' }));
  return `[${items.join(',')}]`;
}

t.test('large answers one after another: the buffer let go serves the next writer, and each answer is whole', async (t) => {
  const first = largeText(3_000_000, 'a');
  const second = largeText(2_500_000, 'b');
  const a = new JsonBytes();
  a.rawParts(['{"list":', first, '}']);
  t.equal(Buffer.from(a.written()).toString(), `{"list":${first}}`);
  const sentA = a.written();
  a.clear();
  // The next large answer is written where the first was (kept once let go), and the first writer goes on with
  // memory of its own: what each writes from now on is its own.
  const b = new JsonBytes();
  b.rawParts(['{"other":', second, '}']);
  t.equal(sentA.buffer, b.written().buffer, 'the memory let go is written again');
  a.raw('"small"');
  t.equal(Buffer.from(b.written()).toString(), `{"other":${second}}`, 'whole, and untouched by the first writer');
  t.equal(Buffer.from(a.written()).toString(), '"small"');
  // Parts reserved at once, then another large text after them: the buffer grows, keeping what was written.
  b.clear();
  b.rawParts(['[', second.slice(1, -1)]);
  b.raw(',');
  b.raw(first.slice(1));
  t.equal(Buffer.from(b.written()).toString(), `[${second.slice(1, -1)},${first.slice(1)}`);
});
