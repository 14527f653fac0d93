import { setup } from 'xstate';
import type { RealmState } from './state.ts';

export type RealmMachineEvent = { type: 'realm.recovered' };

/**
 * A realm is `recovering` while the log is replayed into it and `ready` once it serves commands.
 * The state lives in `context.state` and is mutated in place by `applyRealmChange`: a realm holds every
 * user and message, so it is never copied per change. The registry applies the changes itself, as
 * `decideRealm` reads the state, and the machine keeps only the lifecycle: every write of the organization
 * comes through here, and an xstate event per write cost more than the change's own application (a send to
 * 10 subscribers took 19 us less of the event loop without it in-process, 43 us less over HTTP;
 * 2026-11-27, bench/README.md).
 */
export const realmMachine = setup({
  types: {
    context: {} as { state: RealmState },
    events: {} as RealmMachineEvent,
    input: {} as { state: RealmState },
  },
}).createMachine({
  id: 'realm',
  initial: 'recovering',
  context: ({ input }) => ({ state: input.state }),
  states: {
    recovering: {
      on: { 'realm.recovered': 'ready' },
    },
    ready: {},
  },
});
