import { setup } from 'xstate';
import { applyRealmChange } from './apply.ts';
import type { RealmChange } from './changes.ts';
import type { RealmState } from './state.ts';

export type RealmMachineEvent =
  | { type: 'realm.apply'; changes: readonly RealmChange[] }
  | { type: 'realm.recovered' };

/**
 * A realm is `recovering` while the log is replayed into it and `ready` once it serves commands.
 * The state lives in `context.state` and is mutated in place by `applyRealmChange`: a realm holds every
 * user and message, so it is never copied per change.
 */
export const realmMachine = setup({
  types: {
    context: {} as { state: RealmState },
    events: {} as RealmMachineEvent,
    input: {} as { state: RealmState },
  },
  actions: {
    applyChanges: ({ context, event }) => {
      if (event.type !== 'realm.apply') return;
      for (const change of event.changes) applyRealmChange(context.state, change);
    },
  },
}).createMachine({
  id: 'realm',
  initial: 'recovering',
  context: ({ input }) => ({ state: input.state }),
  states: {
    recovering: {
      on: { 'realm.apply': { actions: 'applyChanges' }, 'realm.recovered': 'ready' },
    },
    ready: {
      on: { 'realm.apply': { actions: 'applyChanges' } },
    },
  },
});
