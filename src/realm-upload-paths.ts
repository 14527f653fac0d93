import type { RealmRecord } from '../actors/realm/state.ts';
import type { PersonalRecord } from '../actors/runtime.ts';
import { ConfigError } from './config.ts';

const PATH_ID = /^(\d+)\/([\w-]+)\/([\w.-]+)$/;

/**
 * An imported organization gets a new id, and an uploaded file's path id (and so its URL) begins with the
 * organization's id: `/user_uploads/<realm id>/<random>/<name>` is served only to that organization. This
 * gives every attachment of the records the path id under `toRealmId`, and rewrites the links to them
 * wherever the records hold text (message contents and their rendered HTML, edit history, drafts, scheduled
 * messages, ...). Only links to the organization's own attachments change: the random part names them.
 * Mutates the records (freshly read from the export file); returns old path id -> new path id.
 */
export function moveUploadPaths(realm: RealmRecord, users: PersonalRecord[], toRealmId: number): Map<string, string> {
  const moved = new Map<string, string>();
  const attachments = realm.attachments?.attachments ?? [];
  if (attachments.length === 0) return moved;
  const fromRealmId = realm.realmId;
  const randoms = new Set<string>();
  for (const attachment of attachments) {
    const match = PATH_ID.exec(attachment.pathId);
    if (!match || Number(match[1]) !== fromRealmId) throw new ConfigError(`the export has an attachment with a malformed path id '${attachment.pathId}'`);
    randoms.add(match[2]!);
    const pathId = `${toRealmId}/${match[2]}/${match[3]}`;
    moved.set(attachment.pathId, pathId);
  }
  if (fromRealmId === toRealmId) return moved;
  const link = new RegExp(`/user_uploads/${fromRealmId}/([\\w-]+)/`, 'g');
  const rewrite = (text: string) =>
    text.includes('/user_uploads/') ? text.replace(link, (whole, random: string) => (randoms.has(random) ? `/user_uploads/${toRealmId}/${random}/` : whole)) : text;
  rewriteStrings(realm, rewrite);
  rewriteStrings(users, rewrite);
  for (const attachment of attachments) attachment.pathId = moved.get(attachment.pathId)!;
  return moved;
}

/** Replaces every string inside plain records (objects and arrays, as msgpackr decodes them), in place. */
function rewriteStrings(value: unknown, rewrite: (text: string) => string): void {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'string') value[i] = rewrite(item);
      else if (item !== null && typeof item === 'object') rewriteStrings(item, rewrite);
    }
  } else if (value !== null && typeof value === 'object' && !ArrayBuffer.isView(value)) {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const item = record[key];
      if (typeof item === 'string') record[key] = rewrite(item);
      else if (item !== null && typeof item === 'object') rewriteStrings(item, rewrite);
    }
  }
}
