import type { QueueContext } from './queue/spec.ts';
import type { WireEventOf, WireEventType } from './wire/events.ts';

/**
 * What an event of some types carries besides its variant's keys until the queue registry gives each queue its
 * shape (queue/capabilities.ts takes these off): the user's email the legacy settings events name, and the mark
 * of a placeholder user some queues do not get.
 */
interface BeforeDelivery {
  user_settings: { user_email?: string | undefined };
  realm_user: { inaccessible_user?: true };
}

type Delivered<T extends WireEventType> = T extends keyof BeforeDelivery ? WireEventOf<T> & BeforeDelivery[T] : WireEventOf<T>;

/**
 * An event as the API delivers it, before the queue gives it its `id`: one of the variants of GET /events'
 * union in the document (actors/wire), so that a missing key or a wrong shape is a compile error.
 */
export type ApiEvent = { [T in WireEventType]: Delivered<T> }[WireEventType];

/**
 * Who may receive an event: every user of the realm, the listed users, or the queues of the realm registered
 * with `all_public_streams` (public channel messages for those who did not receive them as recipients).
 */
export type Audience = { kind: 'realm' } | { kind: 'users'; userIds: readonly number[] } | { kind: 'all_public_streams' };

interface DeliveryTo {
  realmId: number;
  audience: Audience;
}

/** One event, the same for every queue that takes it. */
export interface EventDelivery extends DeliveryTo {
  event: ApiEvent;
  select?: undefined;
}

/**
 * An event whose shape depends on what a queue asked for (a message's `apply_markdown` and `client_extavatar`,
 * the sender's `local_id` echo). `event` is what every queue's event has in common: its type.
 */
export interface SelectedDelivery extends DeliveryTo {
  event: { readonly type: 'message' };
  /**
   * The event this queue gets, or null for none. Called while recipients are resolved, in the same synchronous
   * step as the change, so that what it builds is of the state the change left; queues given the same object
   * share one serialization.
   */
  select(queue: QueueContext): ApiEvent | null;
}

export type Delivery = EventDelivery | SelectedDelivery;
