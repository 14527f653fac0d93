/**
 * A value that arrives later, for held long-polls. A fan-out holds thousands of polls at once; a Promise
 * chain through a request's layers (queue, route, dispatch, front end) costs each held poll a promise, a
 * reaction and a closure per layer, all kept alive while it is held (the collector copies them and promotes
 * them to the old generation: at 10,000 held polls that was most of a fan-out's CPU), and a microtask per
 * layer when it is answered. A Later is settled once, has at most one listener or one mapped Later after
 * it, and passes the value on synchronously: whoever settles it runs the whole chain, so no step may throw.
 */
export class Later<T> {
  private settled = false;
  private value: T | undefined = undefined;
  private listener: ((value: T) => void) | null = null;
  /** the Later that `map` made from this one, and how it is made (one object per step, no closure) */
  private next: Later<unknown> | null = null;
  private transform: ((value: never) => unknown) | null = null;

  settle(value: T): void {
    if (this.settled) return;
    this.settled = true;
    const { listener, next } = this;
    this.listener = null;
    this.next = null;
    if (listener) listener(value);
    else if (next) next.settle(next.transform!(value as never));
    else this.value = value;
  }

  /** The one listener: called with the value when it is settled (at once if it already is). */
  listen(listener: (value: T) => void): void {
    if (this.settled) listener(this.value as T);
    else this.listener = listener;
  }

  /** A Later of the value transformed (in place of a listener); `transform` must not throw (see above). */
  map<U>(transform: (value: T) => U): Later<U> {
    const out = new Later<U>();
    if (this.settled) {
      out.settle(transform(this.value as T));
      return out;
    }
    out.transform = transform as (value: never) => unknown;
    this.next = out as Later<unknown>;
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
