import type { WireSchema } from '../../wire/events.ts';
import type { RealmState } from '../state.ts';
import type { RealmExportEntry } from './state.ts';

/** Where an export's file is served, to the organization's administrators (src/routes/realm-exports.ts). */
export const exportUrlPath = (pathId: string) => `/user_exports/${pathId}`;

/** The API's RealmExport objects, oldest first, the same in events and in GET /export/realm. */
export const exportsView = (state: RealmState) => {
  const url = state.organizationUrl();
  return state.exports.list.map((entry) => exportView(entry, url));
};

/** `export_url` is absolute, at the organization's URL, as the original gives it. */
export function exportView(entry: RealmExportEntry, organizationUrl: string): WireSchema<'RealmExport'> {
  return {
    id: entry.id,
    acting_user_id: entry.actingUserId,
    export_time: entry.exportTime,
    deleted_timestamp: null,
    failed_timestamp: entry.failedTimestamp,
    export_url: entry.pathId === null ? null : `${organizationUrl}${exportUrlPath(entry.pathId)}`,
    pending: entry.pending,
    export_type: entry.exportType,
  };
}
