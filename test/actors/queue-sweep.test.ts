import t from 'tap';
import { Later } from '../../actors/later.ts';
import type { BufferedEvent } from '../../actors/queue/buffer.ts';
import { DEFAULT_QUEUE_LIMITS } from '../../actors/queue/limits.ts';
import { QueueRegistry, type Queue, type QueueSubscriber } from '../../actors/queue/registry.ts';
import type { QueueSpec } from '../../actors/queue/spec.ts';
import type { ApiEvent } from '../../actors/events.ts';

// The sweep visits only the queues whose heartbeat or idle collection may have come (queue/sweep-slots.ts),
// not every queue every second: at the sizes an organization reaches (its limit is 20,000 queues), every
// queue must still get its heartbeat and its collection on time, and none before.

const HEARTBEAT_MS = 50_000;
const SWEEP_MS = 1_000;

const spec = (idleTimeoutMs: number, eventTypes: string[] | null = ['message']): QueueSpec => ({
  eventTypes, allPublicStreams: false, narrow: [], capabilities: {}, applyMarkdown: true, clientExtavatar: true, idleTimeoutMs,
});

function setup() {
  const clock = { now: 1_000_000 };
  const expired = new Map<string, number>();
  const queues = new QueueRegistry({
    timings: { heartbeatMs: HEARTBEAT_MS, idleTimeoutMs: 600_000, sweepMs: SWEEP_MS },
    limits: { ...DEFAULT_QUEUE_LIMITS, perRealm: 100_000 },
    now: () => clock.now,
    onExpired: (queue) => expired.set(queue.id, clock.now),
  });
  let opened = 0;
  const open = (idleTimeoutMs: number, eventTypes?: string[] | null) =>
    queues.open({ queueId: `q${opened}`, realmId: 1, userId: opened++ % 1000, spec: spec(idleTimeoutMs, eventTypes), createdAt: clock.now });
  /** Moves the clock a sweep at a time, sweeping after each step, as the sweep timer does. */
  const run = (ms: number) => {
    for (let step = 0; step < ms; step += SWEEP_MS) {
      clock.now += SWEEP_MS;
      queues.sweep();
    }
  };
  return { clock, queues, expired, open, run };
}

t.test('25,000 idle queues are each collected at the first sweep after their lifespan, none before', async (t) => {
  const { clock, queues, expired, open, run } = setup();
  const started = clock.now;
  const lifespans = new Map<string, number>();
  for (let i = 0; i < 25_000; i++) {
    const lifespan = 60_000 + (i % 97) * 1_000;
    lifespans.set(open(lifespan).id, lifespan);
  }
  // A fifth of them are polled half a minute in: their lifespan counts from that poll.
  run(30_000);
  const polledAt = clock.now;
  const polled = new Set<string>();
  let i = 0;
  for (const id of lifespans.keys()) {
    if (i++ % 5 !== 0) continue;
    queues.poll(queues.find(id)!, undefined, true);
    polled.add(id);
  }
  run(200_000);
  t.equal(expired.size, 25_000, 'every queue collected');
  t.equal(queues.size, 0, 'none left');
  let early = 0;
  let late = 0;
  for (const [id, lifespan] of lifespans) {
    const due = (polled.has(id) ? polledAt : started) + lifespan;
    const at = expired.get(id)!;
    if (at < due) early++;
    if (at >= due + SWEEP_MS) late++;
  }
  t.equal(early, 0, 'no queue collected before its lifespan');
  t.equal(late, 0, 'no queue collected later than the first sweep after it');
});

t.test('held polls get their heartbeat 45-55 s after they started, again after each new poll', async (t) => {
  const { clock, queues, expired, open, run } = setup();
  type Held = { queue: Queue; startedAt: number; answers: { at: number; events: readonly BufferedEvent[] }[] };
  const held: Held[] = [];
  const hold = (entry: Held) => {
    entry.startedAt = clock.now;
    // Acknowledging what it was last answered, as a client does.
    const last = entry.answers.at(-1)?.events.at(-1)?.id;
    const answer = queues.poll(entry.queue, last, false);
    if (!(answer instanceof Later)) throw new Error('the poll was answered at once');
    answer.listen((events) => entry.answers.push({ at: clock.now, events }));
  };
  for (let i = 0; i < 2_000; i++) {
    held.push({ queue: open(600_000), startedAt: 0, answers: [] });
    hold(held.at(-1)!);
    // Polls held over the first ten seconds.
    if (i % 200 === 199) run(SWEEP_MS);
  }
  // A queue whose lifespan is shorter than the heartbeat: not collected while its poll is held.
  const short: Held = { queue: open(5_000), startedAt: 0, answers: [] };
  hold(short);
  let outOfWindow = 0;
  let wrongEvent = 0;
  // Each client polls again as soon as it is answered, twice.
  for (let round = 0; round < 2; round++) {
    const heard = held.map((entry) => entry.answers.length);
    const startedAt = held.map((entry) => entry.startedAt);
    run(60_000);
    held.forEach((entry, i) => {
      const answer = entry.answers[heard[i]!];
      if (!answer) {
        outOfWindow++;
        return;
      }
      const after = answer.at - startedAt[i]!;
      if (after < 0.9 * HEARTBEAT_MS || after >= 1.1 * HEARTBEAT_MS + SWEEP_MS) outOfWindow++;
      if (answer.events.length !== 1 || !answer.events[0]!.payload.body.includes('"type":"heartbeat"')) wrongEvent++;
      hold(entry);
    });
  }
  t.equal(outOfWindow, 0, 'every heartbeat came 45-55 s after its poll started (to the sweep)');
  t.equal(wrongEvent, 0, 'each answer is the one heartbeat');
  t.equal(short.answers.length, 1, 'the short-lived queue got its heartbeat while held');
  t.ok(expired.has(short.queue.id), 'and was collected once nothing held it');
  t.notOk([...expired.keys()].some((id) => id !== short.queue.id), 'no other queue was collected');
});

t.test("an attached subscriber's heartbeat counts from its last push", async (t) => {
  const { clock, queues, open, run } = setup();
  const pushes: { at: number; body: string }[] = [];
  const subscriber: QueueSubscriber = {
    push: (events, first) => {
      for (const event of events.slice(first)) pushes.push({ at: clock.now, body: event.payload.body });
    },
    evict: () => {},
  };
  const queue = open(600_000, null);
  queues.attach(queue, -1, subscriber);
  run(30_000);
  queues.deliver([queue], { type: 'alert_words', alert_words: ['sweep'] } as ApiEvent);
  // The push comes from a setImmediate (the registry's wake).
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(pushes.length, 1, 'the event was pushed');
  const pushedAt = pushes[0]!.at;
  run(70_000);
  const heartbeats = pushes.filter((push) => push.body.includes('"type":"heartbeat"'));
  t.ok(heartbeats.length >= 1, 'a heartbeat came');
  const after = heartbeats[0]!.at - pushedAt;
  t.ok(after >= 0.9 * HEARTBEAT_MS && after < 1.1 * HEARTBEAT_MS + SWEEP_MS, `45-55 s after the push (${after} ms)`);
});

t.test('queues removed are never swept again, and new ones take their places on their own schedule', async (t) => {
  const { clock, queues, expired, open, run } = setup();
  const first = Array.from({ length: 10_000 }, () => open(60_000));
  for (const queue of first) queues.remove(queue, 'queue.delete');
  const openedAt = clock.now;
  const second = Array.from({ length: 10_000 }, (_, i) => open(60_000 + (i % 10) * 1_000));
  run(59_000);
  t.equal(expired.size, 0, 'nothing collected before the lifespan');
  run(20_000);
  t.equal(expired.size, 10_000, 'every new queue collected');
  t.notOk(first.some((queue) => expired.has(queue.id)), 'no removed queue reported again');
  const late = second.filter((queue, i) => expired.get(queue.id)! >= openedAt + 60_000 + (i % 10) * 1_000 + SWEEP_MS);
  t.equal(late.length, 0, 'each on time');
});
