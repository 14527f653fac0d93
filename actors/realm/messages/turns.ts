/**
 * Work too long for one turn of the event loop, done a slice per turn. `step` does a bounded amount and
 * returns the result, or undefined while more remains.
 */
export type Step<T> = () => T | undefined;

interface Job {
  step: Step<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** Waiting jobs by owner (a user), each owner's in order; owners take turns, one slice per turn in all. */
const waiting = new Map<string, Job[]>();
let scheduled = false;

/**
 * Runs `step` until it answers, a slice per turn of the event loop, from the next turn on (the caller has
 * run the first slice, so that work fitting in one answers without a promise or a turn). One slice runs per
 * turn however many jobs wait, so other requests keep their latency; owners take turns and each owner's
 * jobs run one after another, so a client firing many slow narrows delays only its own.
 */
export function inTurns<T>(owner: string, step: Step<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const jobs = waiting.get(owner);
    const job = { step, resolve: resolve as (value: unknown) => void, reject };
    if (jobs) jobs.push(job);
    else waiting.set(owner, [job]);
    schedule();
  });
}

function schedule(): void {
  if (scheduled || waiting.size === 0) return;
  scheduled = true;
  setImmediate(turn);
}

function turn(): void {
  scheduled = false;
  const [owner, jobs] = waiting.entries().next().value!;
  waiting.delete(owner);
  const job = jobs[0]!;
  let done = true;
  try {
    const result = job.step();
    if (result === undefined) done = false;
    else job.resolve(result);
  } catch (error) {
    job.reject(error);
  }
  if (done) jobs.shift();
  // To the back of the line: the next turn is another owner's.
  if (jobs.length) waiting.set(owner, jobs);
  schedule();
}
