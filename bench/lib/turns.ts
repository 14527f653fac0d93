/**
 * Starts watching the event loop: the returned call stops and gives the longest time in ms between two turns
 * (callbacks scheduled back to back with setImmediate), which is how long the work meanwhile held the loop.
 */
export function watchTurns(): () => number {
  let longest = 0;
  let last = performance.now();
  let watching = true;
  const watch = () => {
    const now = performance.now();
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
