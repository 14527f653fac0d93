import t from 'tap';
import { readForm } from '../src/http/form.ts';

/** Pieces of form bodies: plain text, what is decoded (`+`, escapes) and what does not decode (stray `%`, bytes that are not UTF-8). */
const PIECES = [
  'a', 'content', 'Bench', 'x1', '42', 'é', '日本語', '😀', '+', '++', '%20', '%2B', '%26', '%3D', '%25', '%C3%A9', '%c3%a9', '%E6%97%A5',
  '%F0%9F%98%80', '%', '%2', '%zz', '%%', '%G0', '%C3', '%C3%28', '%E9', '%ED%A0%80', '%F4%90%80%80', '%C0%AF', '%EF%BB%BF', '%00',
  '%7F', '%FF', '=', '==', '&', '&&', '?', ';', '#', '/', '\u00a0', '%2', '%EF%BF%BE',
];

function generator(seed: number) {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  return (): string => {
    let out = next() < 0.2 ? '?' : '';
    const length = Math.floor(next() * 12);
    for (let i = 0; i < length; i++) out += PIECES[Math.floor(next() * PIECES.length)]!;
    return out;
  };
}

const byUrlSearchParams = (text: string) => {
  const values = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(text)) values.set(name, value);
  return values;
};

t.test('a form-urlencoded body is read as URLSearchParams reads it', async (t) => {
  const next = generator(17);
  let differing = 0;
  let first = '';
  for (let i = 0; i < 30000; i++) {
    // As a request's body arrives: bytes, decoded as UTF-8.
    const body = Buffer.from(next(), 'utf8');
    const text = body.toString('utf8');
    const read = readForm('', 'application/x-www-form-urlencoded', body) as Map<string, string>;
    if (JSON.stringify([...read]) !== JSON.stringify([...byUrlSearchParams(text)])) {
      differing++;
      first ||= text;
    }
  }
  t.equal(differing, 0, `bodies read otherwise than URLSearchParams reads them (the first: ${JSON.stringify(first)})`);
});

t.test('the body wins over the query string, and later names over earlier ones', async (t) => {
  const read = readForm('?to=1&content=a+b&x=%zz', 'application/x-www-form-urlencoded', Buffer.from('content=c%20d&to=2&to=3')) as Map<string, string>;
  t.same([...read], [['to', '3'], ['content', 'c d'], ['x', '%zz']]);
});
