import type { RealmExportEntry } from './state.ts';

export type RealmExportChange =
  | { type: 'realm_export.requested'; entry: RealmExportEntry }
  | { type: 'realm_export.completed'; id: number; pathId: string }
  /** `at`: UNIX seconds */
  | { type: 'realm_export.failed'; id: number; at: number };
