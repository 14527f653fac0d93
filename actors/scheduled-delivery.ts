import { DeadlineTimer, type TimerApi } from './deadlines.ts';
import type { Runtime } from './runtime.ts';
import type { UserChange } from './user/changes.ts';
import type { UserState } from './user/state.ts';

type Key = string;
const keyOf = (realmId: number, userId: number, id: number): Key => `${realmId}:${userId}:${id}`;

function parseKey(key: Key): [realmId: number, userId: number, id: number] {
  const [realmId, userId, id] = key.split(':').map(Number);
  return [realmId!, userId!, id!];
}

/**
 * The timer service of scheduled messages: every pending scheduled message of every user has its deadline
 * (`deliverAt`, in the user's state) in one DeadlineTimer, fed at boot from the recovered states (so a
 * message that fell due while the server was down goes at once) and kept in step with every change the
 * runtime applies. Due messages are handed to Runtime.deliverScheduled, which sends or marks them failed.
 */
export class ScheduledDeliveries {
  private readonly timer: DeadlineTimer<Key>;
  private onError: (error: unknown, key: Key) => void = () => {};

  constructor(
    private readonly runtime: Runtime,
    timers?: TimerApi,
  ) {
    this.timer = new DeadlineTimer(runtime.clock, (keys) => this.deliver(keys), timers);
  }

  /** After recovery: tracks every pending message of every user and starts the timer. */
  start(onError: (error: unknown, key: Key) => void = () => {}): void {
    this.onError = onError;
    for (const actor of this.runtime.users.values()) this.track(actor.getSnapshot().context.state, null);
    this.timer.start();
  }

  stop(): void {
    this.timer.stop();
  }

  /** Delivers what is due by the runtime's clock now (a test that moved the clock forward calls this). */
  wake(): void {
    this.timer.wake();
  }

  /** How many messages wait for their time. */
  get pending(): number {
    return this.timer.size;
  }

  /** The runtime applied `changes` to a user's state: moves, adds or drops the deadlines they touch. */
  noteChanges(state: UserState, changes: readonly UserChange[]): void {
    let ids: number[] | undefined;
    for (const change of changes) {
      switch (change.type) {
        case 'scheduled.created':
        case 'scheduled.edited':
          (ids ??= []).push(change.message.id);
          break;
        case 'scheduled.deleted':
        case 'scheduled.delivered':
        case 'scheduled.failed':
          (ids ??= []).push(change.id);
          break;
        // No deadline in these.
        case 'alert_words.changed':
        case 'draft.created':
        case 'draft.deleted':
        case 'draft.edited':
        case 'drafts.cleared':
        case 'email.change_confirmed':
        case 'email.change_requested':
        case 'navigation_view.added':
        case 'navigation_view.removed':
        case 'navigation_view.updated':
        case 'onboarding_step.seen':
        case 'push_device.changed':
        case 'push_token.added':
        case 'push_token.removed':
        case 'setting.changed':
        case 'snippet.created':
        case 'snippet.deleted':
        case 'snippet.edited':
        case 'status.changed':
        case 'user.muted':
        case 'user.unmuted':
        case 'user_topic.changed':
        case 'video_token.changed':
          break;
        default: {
          const unknown: never = change;
          throw new Error(`unknown user change ${JSON.stringify(unknown)}`);
        }
      }
    }
    if (ids) this.track(state, ids);
  }

  /** A pending message has a deadline; a failed, delivered or deleted one has none. */
  private track(state: UserState, ids: readonly number[] | null): void {
    for (const id of ids ?? state.scheduled.keys()) {
      const key = keyOf(state.realmId, state.userId, id);
      const message = state.scheduled.get(id);
      if (message && !message.failed) this.timer.set(key, message.deliverAt * 1000);
      else this.timer.delete(key);
    }
  }

  /**
   * Due messages go in deadline order, then in the order they were scheduled. Each delivery decides and
   * applies synchronously, so all of them land in one group commit.
   */
  private deliver(keys: Key[]): void {
    const due = keys.map(parseKey);
    due.sort((a, b) => {
      const at = (key: [number, number, number]) => this.runtime.userActor(key[0], key[1])?.getSnapshot().context.state.scheduled.get(key[2])?.deliverAt ?? 0;
      return at(a) - at(b) || a[2] - b[2];
    });
    for (const [realmId, userId, id] of due) {
      this.runtime.deliverScheduled(realmId, userId, id).then(
        () => this.recheck(realmId, userId, id),
        (error: unknown) => {
          this.onError(error, keyOf(realmId, userId, id));
          this.recheck(realmId, userId, id);
        },
      );
    }
  }

  /**
   * After an attempt: a message still pending (its time was moved meanwhile, or it could not be tried) gets
   * its deadline back, never sooner than a second from now, so that nothing can spin.
   */
  private recheck(realmId: number, userId: number, id: number): void {
    const message = this.runtime.userActor(realmId, userId)?.getSnapshot().context.state.scheduled.get(id);
    if (!message || message.failed) return;
    this.timer.set(keyOf(realmId, userId, id), Math.max(message.deliverAt * 1000, this.runtime.clock.now() + RETRY_MS));
  }
}

/** The least wait before a message that could not be tried is tried again. */
const RETRY_MS = 1000;
