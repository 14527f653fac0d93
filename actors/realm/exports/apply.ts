import type { RealmState } from '../state.ts';
import type { RealmExportChange } from './changes.ts';
import type { RealmExportEntry } from './state.ts';

export function applyRealmExportChange(state: RealmState, change: RealmExportChange): void {
  const { list, nextId } = state.exports;
  const update = (id: number, fields: Partial<RealmExportEntry>) => {
    state.exports = { list: list.map((entry) => (entry.id === id ? { ...entry, ...fields } : entry)), nextId };
  };
  switch (change.type) {
    case 'realm_export.requested':
      state.exports = { list: [...list, { ...change.entry }], nextId: Math.max(nextId, change.entry.id + 1) };
      break;
    case 'realm_export.completed':
      update(change.id, { pending: false, pathId: change.pathId });
      break;
    case 'realm_export.failed':
      update(change.id, { pending: false, failedTimestamp: change.at });
      break;
    default: {
      const unknown: never = change;
      throw new Error(`unknown export change ${JSON.stringify(unknown)}`);
    }
  }
}
