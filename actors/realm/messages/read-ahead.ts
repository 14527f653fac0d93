import type { RealmChange } from '../changes.ts';
import type { RealmCommand } from '../commands.ts';
import { decideRealm, type DecideContext } from '../decide.ts';
import type { RealmState } from '../state.ts';
import { changesApplied } from '../version.ts';
import { READ_AHEAD_SLICE, type ReadAhead } from './bodies.ts';
import { inTurns } from './turns.ts';

/**
 * A move of a whole topic adds an entry to every moved message's edit history, which is in its body: read
 * in the turn that applies the move, the bodies of a topic of 100,000 messages held the event loop for
 * seconds. Before such a move is decided and applied (in one turn, atomically, as before), this reads the
 * bodies it will rewrite a slice per turn, other requests answered between the slices, so that the apply
 * reads none. What it decides here picks the bodies, and is the decision afterwards when the realm took no
 * change meanwhile (`decidedFor`); otherwise the command is decided again on the state of then, and a body
 * changed meanwhile is read again there (bodies.ts).
 *
 * Answers what to release once the command is applied, or null where there is nothing to read ahead (few
 * bodies, or a command refused: its decision afterwards says why).
 */
export function readAheadFor(state: RealmState, command: RealmCommand, context: DecideContext): Promise<DecidedAhead> | null {
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
  // A content edit's rendering also reads the users' alert words, which are not the realm's changes.
  const decided = { state, count: command.content === undefined ? changesApplied(state) : -1, changes };
  const owner = command.caller.kind === 'user' ? `${state.realmId}:${command.caller.userId}` : `${state.realmId}:operator`;
  return inTurns(owner, ahead.step).then(
    () => ({ release: ahead.release, decidedFor: (now) => (now === decided.state && changesApplied(now) === decided.count ? decided.changes : null) }),
    (error: unknown) => {
      ahead.release();
      throw error;
    },
  );
}

/** What a read-ahead leaves for the command's apply. */
export interface DecidedAhead {
  /** lets go of the bodies read ahead that the command did not rewrite */
  release(): void;
  /**
   * The changes decided before the bodies were read, while `state` took no change since: the decision again
   * would be the same (the decision of a move of 100,000 messages is 0.25-0.4 s of the apply's turn).
   */
  decidedFor(state: RealmState): RealmChange[] | null;
}
