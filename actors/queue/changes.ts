import type { QueueContext } from './spec.ts';

/**
 * What the log keeps of an event queue: that it was registered and that it went away. Its events are not
 * logged: a replay after a crash announces the logged changes again, and the queues take them again.
 */
export type QueueChange =
  | { type: 'queue.registered'; context: QueueContext }
  | { type: 'queue.removed'; queueId: string; reason: 'queue.delete' | 'queue.expire' };
