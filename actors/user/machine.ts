import { setup } from 'xstate';
import type { UserChange } from './changes.ts';
import type { UserState } from './state.ts';

export type UserMachineEvent = { type: 'user.deactivated' } | { type: 'user.reactivated' };

export type UserStatus = 'active' | 'deactivated';

/**
 * One per user: the account's lifecycle (`active` / `deactivated`). The user's personal state lives in
 * `context.state` and is mutated in place by `applyUserChange`, which the registry calls itself, as it does
 * a realm's (see realmMachine): a change whose apply throws then fails its write, where inside an xstate
 * action it stopped the actor for good and its error, thrown again on a timer, ended the process.
 */
export const userMachine = setup({
  types: {
    context: {} as { state: UserState },
    events: {} as UserMachineEvent,
    input: {} as { state: UserState },
  },
}).createMachine({
  id: 'user',
  initial: 'active',
  context: ({ input }) => ({ state: input.state }),
  states: {
    active: { on: { 'user.deactivated': 'deactivated' } },
    deactivated: { on: { 'user.reactivated': 'active' } },
  },
});

/**
 * Whether an account in `status` takes `changes`: an active one takes every change, a deactivated one only
 * the timer service's marks of its due scheduled messages as failed.
 */
export function takesChanges(status: UserStatus, changes: readonly UserChange[]): boolean {
  return status === 'active' || changes.every((change) => change.type === 'scheduled.failed');
}
