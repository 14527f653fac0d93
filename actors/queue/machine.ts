import { assign, setup } from 'xstate';
import type { QueueContext } from './spec.ts';

export type QueueMachineEvent =
  | { type: 'queue.poll'; at: number; heartbeatAt: number }
  | { type: 'queue.release' }
  | { type: 'queue.expire' }
  | { type: 'queue.delete' };

/**
 * The lifecycle of one event queue: `idle` (no poll held), `polling` (a long-poll is held), `collected`
 * (deleted by the client or garbage-collected). Deadlines are absolute times in the context, serviced by
 * the one sweep timer of the queue registry: no timer per queue, and a restored queue needs no re-arming.
 * The events themselves live in the registry's buffers, not here: fan-out must not cost an xstate event
 * per recipient.
 */
export const queueMachine = setup({
  types: {
    context: {} as QueueContext,
    events: {} as QueueMachineEvent,
    input: {} as QueueContext,
  },
  actions: {
    startPoll: assign(({ event }) =>
      event.type === 'queue.poll' ? { lastPollStartedAt: event.at, heartbeatAt: event.heartbeatAt } : {},
    ),
    endPoll: assign({ heartbeatAt: null }),
  },
}).createMachine({
  id: 'queue',
  initial: 'idle',
  context: ({ input }) => ({ ...input }),
  states: {
    idle: {
      on: {
        'queue.poll': { target: 'polling', actions: 'startPoll' },
        'queue.expire': 'collected',
        'queue.delete': 'collected',
      },
    },
    polling: {
      on: {
        'queue.poll': { target: 'polling', actions: 'startPoll' },
        'queue.release': { target: 'idle', actions: 'endPoll' },
        'queue.delete': { target: 'collected', actions: 'endPoll' },
      },
    },
    collected: { type: 'final' },
  },
});
