import { setup } from 'xstate';

export interface UserContext {
  realmId: number;
  userId: number;
}

export type UserMachineEvent = { type: 'user.deactivated' } | { type: 'user.reactivated' };

/**
 * One per user: the lifecycle of the account (`active` / `deactivated`). Personal state (settings,
 * drafts, scheduled messages, ...) joins the context as those areas land.
 */
export const userMachine = setup({
  types: {
    context: {} as UserContext,
    events: {} as UserMachineEvent,
    input: {} as UserContext,
  },
}).createMachine({
  id: 'user',
  initial: 'active',
  context: ({ input }) => ({ ...input }),
  states: {
    active: { on: { 'user.deactivated': 'deactivated' } },
    deactivated: { on: { 'user.reactivated': 'active' } },
  },
});
