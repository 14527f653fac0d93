import { setup } from 'xstate';
import type { RealmState } from './state.ts';

export type RealmMachineEvent = { type: 'realm.recovered' };

/**
 * A realm is `recovering` while the log is replayed into it and `ready` once it serves commands.
 * The state lives in `context.state`. The registry applies changes to it in place with `applyRealmChange`,
 * as `decideRealm` reads it, without an xstate event per write: every write of the organization goes
 * through here, and the event's dispatch cost more than the change's own application: without it a send
 * to 10 subscribers took 19 us less of the event loop in-process and 43 us less over HTTP (2026-11-27,
 * bench/README.md). The machine keeps the lifecycle.
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
