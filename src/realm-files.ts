import { attachmentStoreToRecord } from '../actors/realm/attachments/state.ts';
import { emojiStoreToRecord } from '../actors/realm/emoji/state.ts';
import type { RealmRecord, RealmState } from '../actors/realm/state.ts';
import { EmojiImageStore } from './emoji-images.ts';
import type { FileKind } from './realm-export-file.ts';
import { UploadStore } from './uploads.ts';

/**
 * An organization's files beside LMDB as export-realm and import-realm see them: uploaded files and
 * avatars, named by path id, and custom emoji images, named within the organization's emoji folder
 * ('x.png', 'still/x.png').
 */
export class RealmFiles {
  private readonly uploads: UploadStore;
  private readonly avatars: UploadStore;
  private readonly emoji: EmojiImageStore;

  constructor(dataDir: string) {
    this.uploads = new UploadStore(dataDir);
    this.avatars = new UploadStore(dataDir, 'avatars');
    this.emoji = new EmojiImageStore(dataDir);
  }

  /** The files the records name, by kind, and those of them already missing on disk. */
  async list(record: FileRecords): Promise<{ uploads: string[]; avatars: string[]; emojiImages: string[]; missing: string[] }> {
    const found = { uploads: [] as string[], avatars: [] as string[], emojiImages: [] as string[], missing: [] as string[] };
    const present = { upload: found.uploads, avatar: found.avatars, emoji: found.emojiImages };
    for (const [kind, path] of filesNamed(record)) {
      if (await this.read(record.realmId, kind, path)) present[kind].push(path);
      else found.missing.push(`${kind} ${path}`);
    }
    return found;
  }

  read(realmId: number, kind: FileKind, path: string): Promise<Buffer | null> {
    if (kind !== 'emoji') return this.store(kind).read(path);
    const [fileName, still] = emojiFile(path);
    return this.emoji.read(realmId, fileName, still);
  }

  /** Writes a file durably; refused if it exists. */
  write(realmId: number, kind: FileKind, path: string, data: Buffer): Promise<void> {
    if (kind !== 'emoji') return this.store(kind).put(path, data);
    const [fileName, still] = emojiFile(path);
    return this.emoji.put(realmId, fileName, still, data);
  }

  /** Removes every file of an organization (a failed import's: its id is new, so nothing else is there). */
  async removeRealm(realmId: number): Promise<void> {
    await this.uploads.removeRealm(realmId);
    await this.avatars.removeRealm(realmId);
    await this.emoji.removeRealm(realmId);
  }

  private store(kind: 'upload' | 'avatar'): UploadStore {
    return kind === 'upload' ? this.uploads : this.avatars;
  }
}

/** What of an organization's records names files. */
export type FileRecords = Pick<RealmRecord, 'realmId' | 'users' | 'attachments' | 'emoji'>;

/** The records of a live organization that name files (without its messages: cheap at any size). */
export function fileRecords(state: RealmState): FileRecords {
  return { realmId: state.realmId, users: [...state.users.values()], attachments: attachmentStoreToRecord(state.attachments), emoji: emojiStoreToRecord(state.emoji) };
}

/** Every file the records name: uploaded files, avatars, emoji images. */
export function filesNamed(record: FileRecords): [FileKind, string][] {
  return [
    ...(record.attachments?.attachments ?? []).map((attachment): [FileKind, string] => ['upload', attachment.pathId]),
    ...record.users.flatMap((user): [FileKind, string][] => (user.avatarPathId ? [['avatar', user.avatarPathId]] : [])),
    ...emojiPaths(record).map((path): [FileKind, string] => ['emoji', path]),
  ];
}

/** The emoji images a realm record names. */
export function emojiPaths(record: Pick<RealmRecord, 'emoji'>): string[] {
  return (record.emoji?.emoji ?? []).flatMap((emoji) => [emoji.fileName, ...(emoji.stillFileName ? [`still/${emoji.stillFileName}`] : [])]);
}

function emojiFile(path: string): [fileName: string, still: boolean] {
  return path.startsWith('still/') ? [path.slice('still/'.length), true] : [path, false];
}
