import type { RealmChange } from './changes.ts';
import type { RealmState } from './state.ts';

/**
 * Changes to the message history only: they touch `state.messages`, the attachments' message links and a
 * channel's first message id, nothing a directory or settings view reads. Every other change, and any
 * type added later, counts.
 */
const HISTORY_CHANGES: ReadonlySet<RealmChange['type']> = new Set<RealmChange['type']>([
  'message.sent',
  'message.edited',
  'messages.deleted',
  'reaction.added',
  'reaction.removed',
  'message.flags_changed',
  'submessage.added',
]);

/** Kept beside the state rather than in it, so snapshots do not store it. */
const versions = new WeakMap<RealmState, number>();

/**
 * How many changes other than message-history ones the realm has taken in this process: views derived from
 * its users, settings, groups and channels (what registration and GET /users serve) are built once and kept
 * until it moves.
 */
export function realmVersion(state: RealmState): number {
  return versions.get(state) ?? 0;
}

export function countChange(state: RealmState, change: RealmChange): void {
  if (!HISTORY_CHANGES.has(change.type)) versions.set(state, realmVersion(state) + 1);
}
