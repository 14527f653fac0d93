import type { RealmChange } from './changes.ts';
import type { RealmState } from './state.ts';

/**
 * Changes to the message history only: they touch `state.messages`, the attachments' message links and a
 * channel's first message id, nothing a directory or settings view reads. Every other change, and any
 * type added later, counts.
 */
const HISTORY_CHANGE_TYPES = [
  'message.sent',
  'message.edited',
  'messages.deleted',
  'reaction.added',
  'reaction.removed',
  'message.flags_changed',
  'submessage.added',
] as const satisfies readonly RealmChange['type'][];

export type HistoryChange = Extract<RealmChange, { type: (typeof HISTORY_CHANGE_TYPES)[number] }>;

const HISTORY_CHANGES: ReadonlySet<RealmChange['type']> = new Set(HISTORY_CHANGE_TYPES);

/** Whether the change alters the message history only (what the search index and the message views follow). */
export const isHistoryChange = (change: RealmChange): change is HistoryChange => HISTORY_CHANGES.has(change.type);

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

const applied = new WeakMap<RealmState, number>();

/** How many changes of any kind the realm has taken in this process: a decision made at one count holds at the same. */
export function changesApplied(state: RealmState): number {
  return applied.get(state) ?? 0;
}

export function countChange(state: RealmState, change: RealmChange): void {
  applied.set(state, changesApplied(state) + 1);
  if (!isHistoryChange(change)) versions.set(state, realmVersion(state) + 1);
}
