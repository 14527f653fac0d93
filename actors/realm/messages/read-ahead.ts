import type { RealmChange } from '../changes.ts';
import type { RealmCommand } from '../commands.ts';
import { decideRealm, type DecideContext } from '../decide.ts';
import type { RealmState } from '../state.ts';
import { READ_AHEAD_SLICE, type ReadAhead } from './bodies.ts';
import { inTurns } from './turns.ts';

/**
 * A move of a whole topic adds an entry to every moved message's edit history, which is in its body: read
 * in the turn that applies the move, the bodies of a topic of 100,000 messages held the event loop for
 * seconds. Before such a move is decided and applied (in one turn, atomically, as before), this reads the
 * bodies it will rewrite a slice per turn, other requests answered between the slices, so that the apply
 * reads none. What it decides here only picks the bodies: the command is decided again afterwards, on the
 * state of then, and a body changed meanwhile is read again there (bodies.ts).
 *
 * Answers what to release once the command is applied, or null where there is nothing to read ahead (few
 * bodies, or a command refused: its decision afterwards says why).
 */
export function readAheadFor(state: RealmState, command: RealmCommand, context: DecideContext): Promise<ReadAhead> | null {
  if (command.type !== 'message.edit' || command.propagateMode === 'change_one' || (command.topic === undefined && command.channelId === undefined)) return null;
  let changes: RealmChange[];
  try {
    changes = decideRealm(state, command, context);
  } catch {
    return null;
  }
  const moved = changes.find((change) => change.type === 'message.edited' && change.move !== undefined);
  if (moved?.type !== 'message.edited' || moved.messageIds.length <= READ_AHEAD_SLICE) return null;
  const ahead = state.messages.bodies.readAhead(state.messages.byId, moved.messageIds);
  const owner = command.caller.kind === 'user' ? `${state.realmId}:${command.caller.userId}` : `${state.realmId}:operator`;
  return inTurns(owner, ahead.step).then(
    () => ahead,
    (error: unknown) => {
      ahead.release();
      throw error;
    },
  );
}
