import type { WireSchema } from '../../wire/events.ts';
import type { RealmExportEntry, RealmExportStore } from './state.ts';

/** Where an export's file is served, to the organization's administrators (src/routes/realm-exports.ts). */
export const exportUrlPath = (pathId: string) => `/user_exports/${pathId}`;

/**
 * The API's RealmExport objects, oldest first. `export_url` is relative to the organization's URL: the
 * actors do not know it, and the same value goes in events and in GET /export/realm.
 */
export const exportsView = (store: RealmExportStore) => store.list.map(exportView);

export function exportView(entry: RealmExportEntry): WireSchema<'RealmExport'> {
  return {
    id: entry.id,
    acting_user_id: entry.actingUserId,
    export_time: entry.exportTime,
    deleted_timestamp: null,
    failed_timestamp: entry.failedTimestamp,
    export_url: entry.pathId === null ? null : exportUrlPath(entry.pathId),
    pending: entry.pending,
    export_type: entry.exportType,
  };
}
