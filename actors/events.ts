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
  /** the event; with `select`, what every queue's event has in common: its type */
  event: ApiEvent;
  /**
   * For an event whose shape depends on what a queue asked for (a message's `apply_markdown` and
   * `client_extavatar`, the sender's `local_id` echo): the event this queue gets, or null for none. Called
   * while recipients are resolved, in the same synchronous step as the change, so that what it builds is of
   * the state the change left; queues given the same object share one serialization.
   */
  select?(queue: QueueContext): ApiEvent | null;
}

