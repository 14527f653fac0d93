/** The process's CPU time in ms (all its threads): a clock for watchTurns that other processes do not move. */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * Starts watching the event loop: the returned call stops and gives the longest time in ms between two turns
 * (callbacks scheduled back to back with setImmediate), which is how long the work meanwhile held the loop;
 * by `clock` (cpuMs: the CPU spent meanwhile, what a loaded machine does not stretch).
 */
export function watchTurns(clock: () => number = () => performance.now()): () => number {
  let longest = 0;
  let last = clock();
  let watching = true;
  const watch = () => {
    const now = clock();
    longest = Math.max(longest, now - last);
    last = now;
    if (watching) setImmediate(watch);
  };
  setImmediate(watch);
  return () => {
    watching = false;
    watch();
    return longest;
  };
}
