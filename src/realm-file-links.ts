import type { RealmRecord } from '../actors/realm/state.ts';
import type { PersonalRecord } from '../actors/runtime.ts';
import { ConfigError } from './config.ts';
import type { FileKind } from './realm-export-file.ts';
import { emojiPaths } from './realm-files.ts';

const PATH_ID = /^(\d+)\/([\w-]+)\/([\w.-]+)$/;

/**
 * An imported organization gets a new id, and the URLs of its files begin with the organization's id:
 * `/user_uploads/<realm id>/<random>/<name>` (uploaded files), `/user_avatars/<realm id>/<random>/<name>`
 * (avatars) and `/user_avatars/<realm id>/emoji/images/<name>` (custom emoji, in rendered messages), each
 * served only for that organization. This gives every attachment and avatar of the records its path id
 * under `toRealmId`, and rewrites the links to the organization's own files wherever the records hold text
 * (message contents and their rendered HTML, edit history, drafts, scheduled messages, ...): only links
 * naming one of its files change. Mutates the records (freshly read from the export file); returns where
 * each file of the export goes (undefined: a file the records do not name).
 */
export function moveFileLinks(realm: RealmRecord, users: PersonalRecord[], toRealmId: number): (kind: FileKind, path: string) => string | undefined {
  const fromRealmId = realm.realmId;
  const uploads = new PathIds(fromRealmId, toRealmId, 'attachment');
  for (const attachment of realm.attachments?.attachments ?? []) attachment.pathId = uploads.move(attachment.pathId);
  const avatars = new PathIds(fromRealmId, toRealmId, 'avatar');
  for (const user of realm.users) if (user.avatarPathId) user.avatarPathId = avatars.move(user.avatarPathId);
  const emojiFiles = new Set(emojiPaths(realm));

  if (fromRealmId !== toRealmId) {
    const upload = new RegExp(`/user_uploads/${fromRealmId}/([\\w-]+)/`, 'g');
    const avatar = new RegExp(`/user_avatars/${fromRealmId}/((?:emoji/images/(?:still/)?[\\w.-]+)|(?:[\\w-]+/))`, 'g');
    const rewrite = (text: string) => {
      let out = text;
      if (out.includes('/user_uploads/')) out = out.replace(upload, (whole, random: string) => (uploads.randoms.has(random) ? `/user_uploads/${toRealmId}/${random}/` : whole));
      if (out.includes('/user_avatars/')) {
        out = out.replace(avatar, (whole, rest: string) => {
          const ours = rest.startsWith('emoji/images/') ? emojiFiles.has(rest.slice('emoji/images/'.length)) : avatars.randoms.has(rest.slice(0, -1));
          return ours ? `/user_avatars/${toRealmId}/${rest}` : whole;
        });
      }
      return out;
    };
    if (uploads.randoms.size || avatars.randoms.size || emojiFiles.size) {
      rewriteStrings(realm, rewrite);
      rewriteStrings(users, rewrite);
    }
  }
  return (kind, path) => (kind === 'upload' ? uploads.moved.get(path) : kind === 'avatar' ? avatars.moved.get(path) : emojiFiles.has(path) ? path : undefined);
}

/** Path ids `<realm id>/<random>/<name>` of one kind of file, and where they move. */
class PathIds {
  readonly moved = new Map<string, string>();
  readonly randoms = new Set<string>();

  constructor(
    private readonly from: number,
    private readonly to: number,
    private readonly what: string,
  ) {}

  move(pathId: string): string {
    const match = PATH_ID.exec(pathId);
    if (!match || Number(match[1]) !== this.from) throw new ConfigError(`the export has an ${this.what} with a malformed path id '${pathId}'`);
    const moved = `${this.to}/${match[2]}/${match[3]}`;
    this.moved.set(pathId, moved);
    this.randoms.add(match[2]!);
    return moved;
  }
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
