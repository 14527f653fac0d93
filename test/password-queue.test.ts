import t from 'tap';
import { PasswordQueue } from '../src/password-queue.ts';

/** A hash that finishes when the test says so, recording when it started. */
function controlled(started: string[], name: string) {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { run: () => (started.push(name), done.then(() => name)), finish: () => finish() };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

t.test('hashes run a few at a time, users first, and callers without credentials wait in a bounded line', async (t) => {
  const queue = new PasswordQueue(1, 2);
  const started: string[] = [];
  const a = controlled(started, 'a');
  const b = controlled(started, 'b');
  const c = controlled(started, 'c');
  const u = controlled(started, 'user');
  const results = [queue.run('anonymous', a.run), queue.run('anonymous', b.run), queue.run('anonymous', c.run)];
  const refused = await queue.run('anonymous', async () => 'd').then(() => null, (error: { status: number; code: string; headers: Record<string, string> }) => error);
  t.match(refused, { status: 429, code: 'RATE_LIMIT_HIT' }, 'a fourth anonymous caller finds the line full');
  t.match(refused?.headers['Retry-After'], /^[1-9]\d*$/, 'and is told when to come back');
  const user = queue.run('user', u.run);
  t.same(started, ['a'], 'one at a time');
  t.equal(queue.queued, 3, 'three waiting (a user is never refused)');

  a.finish();
  await turn();
  t.same(started, ['a', 'user'], 'the user goes before the callers without credentials waiting');
  u.finish();
  await turn();
  b.finish();
  await turn();
  c.finish();
  t.same(await Promise.all([...results, user]), ['a', 'b', 'c', 'user']);
  t.same(started, ['a', 'user', 'b', 'c']);
  t.equal(queue.queued, 0);
});

t.test('a hash that fails frees its turn', async (t) => {
  const queue = new PasswordQueue(1, 4);
  const failing = queue.run('anonymous', () => Promise.reject(new Error('scrypt failed')));
  const next = queue.run('anonymous', async () => 'next');
  await t.rejects(failing, /scrypt failed/, 'the caller gets the error');
  t.equal(await next, 'next', 'the next hash runs');
});
