import type { Caller } from '../commands.ts';
import type { ExportType } from './state.ts';

export type RealmExportCommand =
  | {
      type: 'realm_export.request';
      caller: Caller;
      exportType: ExportType;
      /** how many exports the organization may ask for in EXPORT_LIMIT_DAYS (the server's configuration) */
      limit: number;
      /** whom to ask for an export too large to make here (the original's support address) */
      supportAddress: string;
    }
  /** the background job's outcome: the file it wrote, or none (it failed, or the server stopped under it) */
  | { type: 'realm_export.complete'; caller: Caller; id: number; pathId: string }
  | { type: 'realm_export.fail'; caller: Caller; id: number };
