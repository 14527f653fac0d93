import type { LogRecord } from '../actors/persistence.ts';
import type { RealmChange } from '../actors/realm/changes.ts';
import type { Runtime } from '../actors/runtime.ts';
import type { UploadStore } from './uploads.ts';

/** A file of the organization that a change stops naming. */
interface Dropped {
  store: 'uploads' | 'avatars';
  pathId: string;
}

/**
 * The files a log record's changes stop naming: a deleted attachment's, a replaced or removed avatar's. The
 * primary removes them once it committed the record (routes/uploads.ts, routes/avatars.ts), from its disk and
 * the cluster's object store; a replica, which keeps a copy of each file it served (uploads.ts, readShared),
 * must drop its copy as it applies the record. Read before the record is applied: after it, the state no
 * longer names them. (Custom emoji images are never removed: a deactivated emoji still shows where used.)
 */
export function filesDroppedBy(runtime: Runtime, record: LogRecord): Dropped[] {
  // Only realm records (neither a user's personal changes nor queue registrations) name files.
  if (record.userId !== undefined || record.scope !== undefined) return [];
  const realm = runtime.realms.get(record.realmId)?.getSnapshot().context.state;
  if (!realm) return [];
  const dropped: Dropped[] = [];
  for (const change of record.changes as RealmChange[]) {
    if (change.type === 'attachment.deleted') {
      const pathId = realm.attachments.byId.get(change.attachmentId)?.pathId;
      if (pathId) dropped.push({ store: 'uploads', pathId });
    } else if (change.type === 'user.avatar_changed') {
      const previous = realm.users.get(change.userId)?.avatarPathId;
      if (previous && previous !== change.pathId) dropped.push({ store: 'avatars', pathId: previous });
    }
  }
  return dropped;
}

/**
 * At a replica: applies a record of the primary's (`apply`: Runtime.follow) and, once it is in the local log,
 * drops the local copies of the files it stops naming (a crash in between leaves a copy nothing names, as at
 * the primary).
 */
export function followDroppingCopies(
  runtime: Runtime,
  files: Record<Dropped['store'], UploadStore>,
  record: LogRecord,
  apply: () => Promise<void>,
  /** a copy that could not be removed: the record stands all the same */
  failed: (error: unknown, pathId: string) => void,
): Promise<void> {
  const dropped = filesDroppedBy(runtime, record);
  const applied = apply();
  if (!dropped.length) return applied;
  // Only the local copy goes: at a replica the object store is left to the primary (uploads.ts, SharedFiles.remove).
  return applied.then(async () => {
    for (const { store, pathId } of dropped) await files[store].remove(pathId).catch((error: unknown) => failed(error, pathId));
  });
}
