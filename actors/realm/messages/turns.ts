/**
 * Work too long for one turn of the event loop, done a slice per turn. `step` does a bounded amount and
 * returns the result, or undefined while more remains.
 */
export type Step<T> = () => T | undefined;

interface Job {
  step: Step<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** when its first slice in turn ran (performance.now()), for the time a job takes */
  began?: number;
}

/** Waiting jobs by owner (a user), each owner's in order; owners take turns, one slice per turn in all. */
const waiting = new Map<string, Job[]>();
let scheduled = false;

/** Until jobs have been timed: about what a walk of 10,000,000 messages takes here (bench/README.md). */
const FIRST_ESTIMATE_MS = 1000;
/** Moving average of the time from a job's first turn to its answer: how soon its owner's line moves on. */
let averageMs = FIRST_ESTIMATE_MS;

/** Refused: the owner already has `limit` jobs in its line (the one running included). */
export class LineFull extends Error {
  constructor(
    readonly limit: number,
    /** about when the line's first job will be done: the time a job takes, on average */
    readonly retryAfterSeconds: number,
  ) {
    super(`${limit} jobs already wait in this line`);
  }
}

/** The jobs of `owner` in its line, the one running included. */
export const queuedOf = (owner: string) => waiting.get(owner)?.length ?? 0;

/**
 * Runs `step` until it answers, a slice per turn of the event loop, from the next turn on (the caller has
 * run the first slice, so that work fitting in one answers without a promise or a turn). One slice runs per
 * turn however many jobs wait, so other requests keep their latency; owners take turns and each owner's
 * jobs run one after another, so a client firing many slow narrows delays only its own. With `limit` jobs
 * of the owner's already in line, the answer is a LineFull refusal: each waiting job holds its request and
 * what the walk found so far, and a client's flood of them would otherwise grow without end.
 */
export function inTurns<T>(owner: string, step: Step<T>, limit = Infinity): Promise<T> {
  const jobs = waiting.get(owner);
  if (jobs && jobs.length >= limit) return Promise.reject(new LineFull(limit, averageMs / 1000));
  return new Promise<T>((resolve, reject) => {
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
  job.began ??= performance.now();
  let done = true;
  try {
    const result = job.step();
    if (result === undefined) done = false;
    else job.resolve(result);
  } catch (error) {
    job.reject(error);
  }
  if (done) {
    jobs.shift();
    averageMs = 0.9 * averageMs + 0.1 * (performance.now() - job.began);
  }
  // To the back of the line: the next turn is another owner's.
  if (jobs.length) waiting.set(owner, jobs);
  schedule();
}
