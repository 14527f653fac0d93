/** The API's export types: public data only, or everything its users consented to (`allow_private_data_export`). */
export const EXPORT_PUBLIC = 1;
export const EXPORT_FULL_WITH_CONSENT = 2;
export type ExportType = typeof EXPORT_PUBLIC | typeof EXPORT_FULL_WITH_CONSENT;

/** A data export an administrator asked for (POST /export/realm), made in the background (src/realm-export-jobs.ts). */
export interface RealmExportEntry {
  id: number;
  actingUserId: number;
  exportType: ExportType;
  /** UNIX seconds, fractional as the original's */
  exportTime: number;
  /** still being generated */
  pending: boolean;
  /** UNIX seconds; null unless it failed */
  failedTimestamp: number | null;
  /** the file's path id in the export store once generated, null before or after a failure */
  pathId: string | null;
}

/**
 * The organization's exports, oldest first. Replaced whole by every change, never edited in place: a snapshot
 * record may share it. Snapshots written before exports existed load with none (the realm's empty default).
 */
export interface RealmExportStore {
  list: readonly RealmExportEntry[];
  nextId: number;
}

export const emptyRealmExportStore = (): RealmExportStore => ({ list: [], nextId: 1 });
