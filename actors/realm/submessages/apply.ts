import type { RealmState } from '../state.ts';
import type { SubmessageChange } from './changes.ts';
import { addSubmessage } from './state.ts';

export function applySubmessageChange(state: RealmState, change: SubmessageChange): void {
  switch (change.type) {
    case 'submessage.added':
      addSubmessage(state.submessages, change.submessage);
      break;
    default: {
      const unknown: never = change.type;
      throw new Error(`unknown submessage change ${JSON.stringify(unknown)}`);
    }
  }
}

/** Deleted messages take their submessages with them. */
export function dropSubmessages(state: RealmState, messageIds: readonly number[]): void {
  for (const id of messageIds) state.submessages.byMessage.delete(id);
}
