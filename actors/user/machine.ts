import { setup } from 'xstate';
import { applyUserChange } from './apply.ts';
import type { UserChange } from './changes.ts';
import type { UserState } from './state.ts';

export type UserMachineEvent =
  | { type: 'user.apply'; changes: readonly UserChange[] }
  | { type: 'user.deactivated' }
  | { type: 'user.reactivated' };

/**
 * One per user: the account's lifecycle (`active` / `deactivated`) and the user's personal state, which
 * only an active account changes. The state is mutated in place by `applyUserChange`.
 */
export const userMachine = setup({
  types: {
    context: {} as { state: UserState },
    events: {} as UserMachineEvent,
    input: {} as { state: UserState },
  },
  actions: {
    applyChanges: ({ context, event }) => {
      if (event.type !== 'user.apply') return;
      for (const change of event.changes) applyUserChange(context.state, change);
    },
  },
  guards: {
    onlyScheduledFailures: ({ event }) => event.type === 'user.apply' && event.changes.every((change) => change.type === 'scheduled.failed'),
  },
}).createMachine({
  id: 'user',
  initial: 'active',
  context: ({ input }) => ({ state: input.state }),
  states: {
    active: { on: { 'user.apply': { actions: 'applyChanges' }, 'user.deactivated': 'deactivated' } },
    // The timer service still tries a deactivated user's due scheduled messages, and marks them failed.
    deactivated: { on: { 'user.reactivated': 'active', 'user.apply': { guard: 'onlyScheduledFailures', actions: 'applyChanges' } } },
  },
});
