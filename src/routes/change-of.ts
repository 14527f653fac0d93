/**
 * The change of this type a command made: a command that succeeded without it is a defect of its actor (an
 * internal error), not an answer with a null id.
 */
export function changeOf<C extends { type: string }, T extends C['type']>(changes: readonly C[], type: T): Extract<C, { type: T }> {
  const change = changes.find((candidate): candidate is Extract<C, { type: T }> => candidate.type === type);
  if (!change) throw new Error(`the command made no ${type} change`);
  return change;
}
