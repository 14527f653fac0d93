/**
 * A value that arrives later, for held long-polls. A fan-out holds thousands of polls at once; a Promise
 * chain through a request's layers (queue, route, dispatch, front end) costs each held poll a promise, a
 * reaction and a closure per layer, all kept alive while it is held (the collector copies them and promotes
 * them to the old generation: at 10,000 held polls that was most of a fan-out's CPU), and a microtask per
 * layer when it is answered. A Later is settled once, has at most one listener or one mapped Later after
 * it, and passes the value on synchronously: whoever settles it runs the whole chain, so no step may throw.
 *
 * A step or a listener may take one argument besides the value (`map(fn, arg)`, `listen(fn, arg)`): with a
 * function made once at module level, a held poll's step is then the one Later, without a closure and the
 * context object a closure keeps.
 */
export class Later<T> {
  private settled = false;
  /** the value once settled with nothing after it; before, the argument of the listener if there is one */
  private value: unknown = undefined;
  /** what takes the value: the Later that `map` made from this one, or the listener */
  private after: Later<unknown> | ((value: T, arg: never) => void) | null = null;
  /** how this Later's value is made from the one before it, and its argument (see `map`) */
  private transform: ((value: never, arg: never) => unknown) | null = null;
  private arg: unknown = undefined;

  settle(value: T): void {
    if (this.settled) return;
    this.settled = true;
    const after = this.after;
    this.after = null;
    if (after === null) {
      this.value = value;
    } else if (typeof after === 'function') {
      const arg = this.value;
      this.value = undefined;
      after(value, arg as never);
    } else {
      after.settle(after.transform!(value as never, after.arg as never));
    }
  }

  /** The one listener: called with the value (and `arg`) when it is settled (at once if it already is). */
  listen(listener: (value: T) => void): void;
  listen<A>(listener: (value: T, arg: A) => void, arg: A): void;
  listen<A>(listener: (value: T, arg: A) => void, arg?: A): void {
    if (this.settled) {
      listener(this.value as T, arg as A);
      return;
    }
    this.after = listener as (value: T, arg: never) => void;
    this.value = arg;
  }

  /** A Later of the value transformed (in place of a listener); `transform` must not throw (see above). */
  map<U>(transform: (value: T) => U): Later<U>;
  map<U, A>(transform: (value: T, arg: A) => U, arg: A): Later<U>;
  map<U, A>(transform: (value: T, arg: A) => U, arg?: A): Later<U> {
    const out = new Later<U>();
    if (this.settled) {
      out.settle(transform(this.value as T, arg as A));
      return out;
    }
    out.transform = transform as (value: never, arg: never) => unknown;
    out.arg = arg;
    this.after = out as Later<unknown>;
    return out;
  }

  /** As a promise, for callers off the hot path. */
  promise(): Promise<T> {
    return new Promise((resolve) => this.listen(resolve));
  }

  /** Thenable, so that `await` and Promise.resolve take it as they take a promise (through one). */
  then<A = T, B = never>(
    onFulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.promise().then(onFulfilled, onRejected);
  }
}
