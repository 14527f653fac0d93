import type { RealmRecord } from '../actors/realm/state.ts';
import type { PersonalRecord } from '../actors/runtime.ts';
import { ConfigError } from './config.ts';
import { emojiPaths } from './realm-files.ts';

const PATH_ID = /^(\d+)\/([\w-]+)\/([\w.-]+)$/;

/**
 * An imported organization gets a new id, and the URLs of its files begin with the organization's id:
 * `/user_uploads/<realm id>/<random>/<name>` (uploaded files) and `/user_avatars/<realm id>/emoji/images/
 * <name>` (custom emoji, in rendered messages), each served only to that organization. This gives every
 * attachment of the records its path id under `toRealmId`, and rewrites the links to the organization's
 * own files wherever the records hold text (message contents and their rendered HTML, edit history,
 * drafts, scheduled messages, ...): only links naming one of its attachments or emoji images change.
 * Mutates the records (freshly read from the export file); returns old path id -> new path id.
 */
export function moveFileLinks(realm: RealmRecord, users: PersonalRecord[], toRealmId: number): Map<string, string> {
  const fromRealmId = realm.realmId;
  const moved = new Map<string, string>();
  const attachments = realm.attachments?.attachments ?? [];
  const randoms = new Set<string>();
  for (const attachment of attachments) {
    const match = PATH_ID.exec(attachment.pathId);
    if (!match || Number(match[1]) !== fromRealmId) throw new ConfigError(`the export has an attachment with a malformed path id '${attachment.pathId}'`);
    randoms.add(match[2]!);
    moved.set(attachment.pathId, `${toRealmId}/${match[2]}/${match[3]}`);
  }
  const emojiFiles = new Set(emojiPaths(realm));
  if (fromRealmId === toRealmId || (randoms.size === 0 && emojiFiles.size === 0)) return moved;

  const upload = new RegExp(`/user_uploads/${fromRealmId}/([\\w-]+)/`, 'g');
  const emoji = new RegExp(`/user_avatars/${fromRealmId}/emoji/images/((?:still/)?[\\w.-]+)`, 'g');
  const rewrite = (text: string) => {
    let out = text;
    if (randoms.size && out.includes('/user_uploads/')) {
      out = out.replace(upload, (whole, random: string) => (randoms.has(random) ? `/user_uploads/${toRealmId}/${random}/` : whole));
    }
    if (emojiFiles.size && out.includes('/user_avatars/')) {
      out = out.replace(emoji, (whole, file: string) => (emojiFiles.has(file) ? `/user_avatars/${toRealmId}/emoji/images/${file}` : whole));
    }
    return out;
  };
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
