/**
 * What one client, one user and one organization may hold in event queues. The original server has none of
 * these (its queues grow until acknowledged or collected, and anyone may register any number); here every
 * queue, and so every member, has a bound, so that no member can take the server's memory and disk.
 */
export interface QueueLimits {
  /**
   * live queues per user: at the limit a new registration collects the user's least recently polled queue,
   * whose client, if it still lives, gets BAD_EVENT_QUEUE_ID and registers again
   */
  perUser: number;
  /** live queues per organization: at the limit a registration is refused (one member can hold few of them) */
  perRealm: number;
  /**
   * unacknowledged events a queue may hold: a client this far behind has its queue dropped and registers
   * again (what it does after an idle collection anyway), instead of the server holding ever more for it
   */
  events: number;
  /** the same as a total of the events' JSON sizes (characters) */
  bytes: number;
}

const MIB = 1024 * 1024;

export const DEFAULT_QUEUE_LIMITS: QueueLimits = {
  // A person has a queue per browser tab and device (the bench's users have 10); beyond that, queues are
  // left behind by clients that registered again without deleting the old one.
  perUser: 20,
  // Twice the bench's 10,000 long-polling queues in one organization; at 20 bots per owner
  // (CHAT_MAX_BOTS_PER_USER) one member can hold 420 of them.
  perRealm: 20_000,
  // A client polls again as soon as it is answered; 5,000 unread events is one that went away.
  events: 5_000,
  // 5,000 events of 3 KiB; a few hundred of the largest messages (10,000 characters, rendered).
  bytes: 16 * MIB,
};

/**
 * Sizes of what a client may ask of a queue at registration (POST /register, GET /events), checked on the
 * parameters: the original has a few dozen event types and capabilities and narrows of a term or two. A spec
 * is kept for the queue's life, written with its snapshots and looked at on every delivery.
 */
export const SPEC_LIMITS = {
  /** entries of `event_types` and `fetch_event_types` */
  eventTypes: 256,
  /** characters of one event type */
  eventTypeLength: 100,
  /** terms of `narrow` */
  narrowTerms: 20,
  /** characters of one narrow operator or operand (a channel name or topic is at most 60) */
  narrowTermLength: 200,
  /** entries of `client_capabilities` */
  capabilities: 64,
  /** characters of one capability's name */
  capabilityLength: 100,
} as const;
