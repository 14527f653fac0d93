import type { QueueContext } from './queue/spec.ts';

/** An event as the API delivers it, before the queue gives it its `id`. */
export interface ApiEvent {
  type: string;
  [field: string]: unknown;
}

/**
 * Who may receive an event: every user of the realm, the listed users, or the queues of the realm registered
 * with `all_public_streams` (public channel messages for those who did not receive them as recipients).
 */
export type Audience = { kind: 'realm' } | { kind: 'users'; userIds: readonly number[] } | { kind: 'all_public_streams' };

export interface Delivery {
  realmId: number;
  audience: Audience;
  event: ApiEvent;
  /**
   * Narrows the audience to some of its queues: events whose shape depends on what a queue asked for
   * (`apply_markdown`, `client_extavatar`, the sender's `local_id` echo) go out as one delivery per shape.
   */
  only?: (queue: QueueContext) => boolean;
  /**
   * For an event whose parts are built lazily (a message's views): builds them. Called as soon as the
   * delivery is known to reach a queue, while the state is still the one the change left; never called
   * when no queue takes it.
   */
  prepare?: () => void;
}
