/** Callers waiting for a position (of the log stream) to be reached, each for at most a given time. */
export class PositionWaiters {
  private position = 0;
  private readonly waiting: { at: number; resolve(reached: boolean): void }[] = [];

  reached(position: number): void {
    this.position = position;
    if (this.waiting.length === 0) return;
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      const waiter = this.waiting[i]!;
      if (waiter.at <= position) {
        this.waiting.splice(i, 1);
        waiter.resolve(true);
      }
    }
  }

  /** Resolves true once `at` is reached, false after `ms` without. */
  wait(at: number, ms: number): Promise<boolean> {
    if (this.position >= at) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        at,
        resolve: (reached: boolean) => {
          clearTimeout(timer);
          resolve(reached);
        },
      };
      const timer = setTimeout(() => {
        const index = this.waiting.indexOf(waiter);
        if (index >= 0) this.waiting.splice(index, 1);
        resolve(false);
      }, ms);
      this.waiting.push(waiter);
    });
  }
}
