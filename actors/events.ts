import type { QueueContext } from './queue/spec.ts';

/** An event as the API delivers it, before the queue gives it its `id`. */
export interface ApiEvent {
  type: string;
  [field: string]: unknown;
}

/** Who may receive an event: every user of the realm, or the listed users. */
export type Audience = { kind: 'realm' } | { kind: 'users'; userIds: readonly number[] };

export interface Delivery {
  realmId: number;
  audience: Audience;
  event: ApiEvent;
  /**
   * Narrows the audience to some of its queues: events whose shape depends on what a queue asked for
   * (`apply_markdown`, `client_extavatar`, the sender's `local_id` echo) go out as one delivery per shape.
   */
  only?: (queue: QueueContext) => boolean;
}
