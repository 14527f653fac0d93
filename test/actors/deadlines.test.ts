import t from 'tap';
import { DeadlineTimer, type TimerApi } from '../../actors/deadlines.ts';

/** A hand-driven clock and setTimeout: `advance` moves time and runs the timer if its moment came. */
function fakeTime(start = 1_000_000) {
  let now = start;
  let armed: { at: number; callback: () => void; handle: number } | null = null;
  let handles = 0;
  const log: string[] = [];
  const timers: TimerApi = {
    setTimeout(callback, ms) {
      if (armed) throw new Error('a second timer armed while one is pending');
      armed = { at: now + ms, callback, handle: ++handles };
      log.push(`arm +${ms}`);
      return armed.handle;
    },
    clearTimeout(handle) {
      if (armed?.handle === handle) armed = null;
    },
  };
  return {
    clock: { now: () => now },
    timers,
    log,
    get armedAt() {
      return armed?.at ?? null;
    },
    advance(ms: number) {
      now += ms;
      if (armed && armed.at <= now) {
        const { callback } = armed;
        armed = null;
        callback();
      }
    },
  };
}

t.test('fires due keys in deadline order with one timer, re-armed as the earliest changes', async (t) => {
  const time = fakeTime();
  const fired: string[][] = [];
  const timer = new DeadlineTimer<string>(time.clock, (keys) => fired.push(keys), time.timers);
  timer.set('c', 1_000_300);
  timer.set('a', 1_000_100);
  timer.set('b', 1_000_200);
  t.equal(time.armedAt, null, 'nothing is armed before start');
  timer.start();
  t.equal(time.armedAt, 1_000_100, 'armed for the earliest');
  timer.set('d', 1_000_050);
  t.equal(time.armedAt, 1_000_050, 'a sooner deadline re-arms');
  timer.set('e', 1_000_400);
  t.equal(time.armedAt, 1_000_050, 'a later one does not');
  timer.delete('d');
  t.equal(time.armedAt, 1_000_100, 'removing the earliest re-arms for the next');
  time.advance(99);
  t.same(fired, []);
  time.advance(1);
  t.same(fired, [['a']]);
  t.equal(time.armedAt, 1_000_200);
  timer.set('e', 1_000_150);
  t.equal(time.armedAt, 1_000_150, 'moving a deadline earlier re-arms');
  time.advance(250);
  t.same(fired, [['a'], ['e', 'b', 'c']], 'everything due by now, earliest first');
  t.equal(timer.size, 0);
  t.equal(time.armedAt, null, 'nothing left, nothing armed');
});

t.test('start fires what is already due; stop disarms; a deadline beyond the timer range wakes early and re-arms', async (t) => {
  const time = fakeTime();
  const fired: number[] = [];
  const timer = new DeadlineTimer<number>(time.clock, (keys) => fired.push(...keys), time.timers);
  timer.set(1, 999_000);
  timer.set(2, 1_000_000 + 40 * 86_400_000);
  timer.start();
  t.equal(time.armedAt, 1_000_000, 'past deadlines go at once');
  time.advance(0);
  t.same(fired, [1]);
  t.equal(time.armedAt, 1_000_000 + 2 ** 31 - 1, 'a 40-day wait is cut to what setTimeout can hold');
  time.advance(2 ** 31 - 1);
  t.same(fired, [1], 'woke early: not due yet');
  t.equal(time.armedAt, 1_000_000 + 40 * 86_400_000, 'and re-armed for the rest');
  timer.stop();
  t.equal(time.armedAt, null);
  timer.set(3, 0);
  t.equal(time.armedAt, null, 'a stopped timer arms nothing');
  t.equal(timer.deadline(3), 0);
});

t.test('wake after the clock jumped fires what is due; keys changed by the callback are kept in step', async (t) => {
  const time = fakeTime();
  const timer: DeadlineTimer<string> = new DeadlineTimer<string>(time.clock, (keys) => {
    // A delivery that schedules the next one, as a handler may.
    if (keys.includes('first')) timer.set('second', time.clock.now() + 10);
  }, time.timers);
  timer.set('first', 1_000_000 + 3_600_000);
  timer.start();
  time.advance(0);
  t.equal(timer.size, 1);
  // The clock moved without the timer: as a test's clock does.
  (time.clock as { now: () => number }).now = () => 1_000_000 + 3_600_000;
  timer.wake();
  t.equal(timer.deadline('first'), undefined);
  t.equal(timer.deadline('second'), 1_000_000 + 3_600_010);
});

t.test('the heap stays ordered through many random sets and deletes', async (t) => {
  const time = fakeTime(0);
  const fired: number[] = [];
  const timer = new DeadlineTimer<number>(time.clock, (keys) => fired.push(...keys.map((key) => timer.deadline(key) ?? expected.get(key)!)), time.timers);
  const expected = new Map<number, number>();
  let seed = 7;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 2000; i++) {
    const key = Math.floor(random() * 300);
    if (random() < 0.2) {
      timer.delete(key);
      expected.delete(key);
    } else {
      const at = 1 + Math.floor(random() * 1_000_000);
      timer.set(key, at);
      expected.set(key, at);
    }
  }
  timer.start();
  time.advance(2_000_000);
  t.equal(fired.length, expected.size);
  t.same(fired, [...expected.values()].sort((a, b) => a - b), 'fired in deadline order');
});
