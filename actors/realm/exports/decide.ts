import { badRequest } from '../../errors.ts';
import { requireAdmin } from '../administer.ts';
import type { DecideContext } from '../decide.ts';
import type { RealmState } from '../state.ts';
import type { RealmExportChange } from './changes.ts';
import type { RealmExportCommand } from './commands.ts';

/** The original's window for its limit on exports (5 in 7 days): counted over the exports asked for in it. */
export const EXPORT_LIMIT_DAYS = 7;
/**
 * The original's bounds on an export made through the API (larger ones are made by the operator, with
 * `chat-server export-realm`): the history's size and the uploaded files' bytes.
 */
export const MAX_EXPORT_MESSAGES = 250_000;
export const MAX_EXPORT_UPLOAD_BYTES = 10 * 1024 ** 3;

export function decideRealmExport(state: RealmState, command: RealmExportCommand, clock: DecideContext): RealmExportChange[] {
  switch (command.type) {
    case 'realm_export.request': {
      const admin = requireAdmin(state, command.caller);
      if (!admin) throw badRequest('Exports are asked for by administrators');
      const now = clock.now() / 1000;
      // One at a time: each one walks the whole organization and writes a file as large as its history.
      if (state.exports.list.some((entry) => entry.pending)) throw badRequest('A data export of this organization is already being generated.');
      const recent = state.exports.list.filter((entry) => entry.exportTime >= now - EXPORT_LIMIT_DAYS * 86_400).length;
      if (recent >= command.limit) throw badRequest('Exceeded rate limit.');
      if (state.messages.byId.size > MAX_EXPORT_MESSAGES || state.attachments.bytes > MAX_EXPORT_UPLOAD_BYTES) {
        throw badRequest(`Please request a manual export from ${command.supportAddress}.`);
      }
      return [{
        type: 'realm_export.requested',
        entry: { id: state.exports.nextId, actingUserId: admin.userId, exportType: command.exportType, exportTime: now, pending: true, failedTimestamp: null, pathId: null },
      }];
    }
    case 'realm_export.complete':
    case 'realm_export.fail': {
      // The server's own job reports its outcome.
      if (command.caller.kind !== 'operator') throw badRequest('Only the server finishes an export');
      const entry = state.exports.list.find((candidate) => candidate.id === command.id);
      if (!entry || !entry.pending) throw badRequest('Invalid data export ID');
      return command.type === 'realm_export.complete'
        ? [{ type: 'realm_export.completed', id: entry.id, pathId: command.pathId }]
        : [{ type: 'realm_export.failed', id: entry.id, at: clock.now() / 1000 }];
    }
  }
}
