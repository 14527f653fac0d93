import { createHash } from 'node:crypto';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import type { RealmRecord } from '../actors/realm/state.ts';
import type { PersonalRecord } from '../actors/runtime.ts';
import { decode, encode } from '../snapshots/codec.ts';
import { checkVersion } from '../snapshots/records.ts';
import { ConfigError } from './config.ts';

/** What the export file says it is, so that import-realm refuses any other file. */
export const EXPORT_KIND = 'chat-server realm export';

/**
 * The export file's own format version. 1: the header below (without the file lists) as one msgpackr
 * value, the whole file. 2: MAGIC, then frames (an 8-byte big-endian length and a msgpackr value): the
 * header, then one frame per file (the uploaded files, the avatars, the custom emoji images), so that files are
 * written and read one at a time rather than all of an organization's files in memory at once. The records inside carry FORMAT_VERSION like
 * snapshots do, in `v`, and are read through the same version check, so a newer server imports an older
 * export. 3: the header may be followed by `messageFrames` frames of messages (before the files), which the
 * reader appends in order to the realm's `messages.messages`: an export made while the server runs encodes its
 * history a slice at a time (src/realm-export-jobs.ts).
 */
export const EXPORT_VERSION = 3;

const MAGIC = Buffer.from('chat-server realm export\n');

/**
 * One organization: the realm's record (users' profiles, groups, channels, subscriptions, messages with
 * their flags, settings, custom profile fields, attachment records) and each user's personal state
 * (settings, drafts, scheduled messages, snippets, topics, muted users, ...), in the shapes snapshots use.
 * Event queues are not exported (clients register again), nor presence (in memory only).
 */
export interface RealmExport {
  kind: typeof EXPORT_KIND;
  exportVersion: number;
  /** FORMAT_VERSION of the records inside */
  v: number;
  exportedAt: string;
  source: { stringId: string; name: string };
  realm: RealmRecord;
  users: PersonalRecord[];
  /** version 2: the path ids of the uploaded files whose frames follow, in their order */
  uploads?: string[];
  /** version 2: the path ids of the uploaded avatars whose frames follow the uploads' */
  avatars?: string[];
  /** version 2: the custom emoji images whose frames come last ('x.png', or 'still/x.png' for a still) */
  emojiImages?: string[];
  /** version 2: files of the records that were already gone from the source's disk */
  missingFiles?: string[];
  /** version 3: how many frames of messages follow the header */
  messageFrames?: number;
  /**
   * false: made through the API, so no user's password or API key is in it (realm-export-filter.ts), and
   * import-realm gives the owners new ones. Absent in the operator's exports, which hold them, and in API
   * exports made before the field (see holdsCredentials).
   */
  credentials?: false;
}

export type FileKind = 'upload' | 'avatar' | 'emoji';

/** One file in an export: an upload's or avatar's path id, or an emoji image's name in the organization's folder. */
export interface FileFrame {
  path: string;
  /** hex SHA-256 of `data`, checked on import */
  sha256: string;
  data: Buffer;
}

/** The files a header lists, in the order of their frames. */
export function listedFiles(header: RealmExport): { kind: FileKind; path: string }[] {
  return [
    ...(header.uploads ?? []).map((path) => ({ kind: 'upload' as const, path })),
    ...(header.avatars ?? []).map((path) => ({ kind: 'avatar' as const, path })),
    ...(header.emojiImages ?? []).map((path) => ({ kind: 'emoji' as const, path })),
  ];
}

export const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/**
 * Writes an export: the header, then the files `readFile` gives for the ones it lists, in order. Written
 * aside, flushed and renamed, so a crash never leaves a half file under the name asked for.
 */
export async function writeExportFile(out: string, header: RealmExport, readFile: (kind: FileKind, path: string) => Promise<Buffer>): Promise<number> {
  const partial = `${out}.partial`;
  const fd = openSync(partial, 'wx');
  let bytes = 0;
  const write = (buffer: Buffer) => {
    writeSync(fd, buffer);
    bytes += buffer.length;
  };
  const frame = (value: unknown) => {
    const body = encode(value);
    const length = Buffer.alloc(8);
    length.writeBigUInt64BE(BigInt(body.length));
    write(length);
    write(body);
  };
  try {
    write(MAGIC);
    frame(header);
    for (const { kind, path } of listedFiles(header)) {
      const data = await readFile(kind, path);
      frame({ path, sha256: sha256(data), data } satisfies FileFrame);
    }
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(partial, { force: true });
    throw error;
  }
  closeSync(fd);
  renameSync(partial, out);
  return bytes;
}

/**
 * Writes an export a frame at a time without holding the event loop: every write is asynchronous, and the
 * caller encodes its values in slices. Written aside, flushed and renamed as writeExportFile does.
 */
export class ExportFileWriter {
  bytes = 0;
  private constructor(
    private readonly out: string,
    private readonly handle: FileHandle,
  ) {}

  static async open(out: string): Promise<ExportFileWriter> {
    const writer = new ExportFileWriter(out, await open(`${out}.partial`, 'wx'));
    await writer.write(MAGIC);
    return writer;
  }

  /** One value, encoded here: the caller keeps each one small enough to encode in one turn. */
  frame(value: unknown): Promise<void> {
    const body = encode(value);
    const length = Buffer.alloc(8);
    length.writeBigUInt64BE(BigInt(body.length));
    return this.write(Buffer.concat([length, body]));
  }

  file(path: string, data: Buffer): Promise<void> {
    return this.frame({ path, sha256: sha256(data), data } satisfies FileFrame);
  }

  async finish(): Promise<void> {
    await this.handle.sync();
    await this.handle.close();
    await rename(`${this.out}.partial`, this.out);
  }

  async abort(): Promise<void> {
    await this.handle.close().catch(() => {});
    await rm(`${this.out}.partial`, { force: true });
  }

  private async write(buffer: Buffer): Promise<void> {
    let written = 0;
    while (written < buffer.length) written += (await this.handle.write(buffer, written)).bytesWritten;
    this.bytes += buffer.length;
  }
}

/** An export being read: its header, then its files one at a time. */
export interface ExportReader {
  header: RealmExport;
  files(): Generator<FileFrame & { kind: FileKind }>;
  close(): void;
}

export function openExportFile(file: string): ExportReader {
  if (!existsSync(file)) throw new ConfigError(`no file at ${file}`);
  const fd = openSync(file, 'r');
  try {
    const start = Buffer.alloc(MAGIC.length);
    const framed = readSync(fd, start, 0, start.length, 0) === MAGIC.length && start.equals(MAGIC);
    if (!framed) {
      closeSync(fd);
      return { header: checkHeader(file, parse(file, () => readFileSync(file)), 1), files: function* () {}, close() {} };
    }
    let position = MAGIC.length;
    const readFrame = <T>(what: string): T => {
      const length = Buffer.alloc(8);
      if (readSync(fd, length, 0, 8, position) !== 8) throw new ConfigError(`${file} ends before ${what}: the file is incomplete`);
      const size = Number(length.readBigUInt64BE());
      const body = Buffer.alloc(size);
      if (readSync(fd, body, 0, size, position + 8) !== size) throw new ConfigError(`${file} ends inside ${what}: the file is incomplete`);
      position += 8 + size;
      return parse(file, () => body);
    };
    const header = checkHeader(file, readFrame<Partial<RealmExport>>('its header'), 2);
    for (let index = 0; index < (header.messageFrames ?? 0); index++) {
      const messages = readFrame<unknown>(`its messages (part ${index + 1})`);
      if (!Array.isArray(messages) || !header.realm.messages) throw new ConfigError(`${file}: its messages (part ${index + 1}) are malformed`);
      for (const message of messages) header.realm.messages.messages.push(message);
    }
    return {
      header,
      *files() {
        for (const { kind, path } of listedFiles(header)) {
          const what = `the ${kind === 'upload' ? 'uploaded file' : kind === 'avatar' ? 'avatar' : 'emoji image'} ${path}`;
          const frame = readFrame<Partial<FileFrame>>(what);
          if (frame.path !== path || !Buffer.isBuffer(frame.data)) throw new ConfigError(`${file}: ${what} is not where the header says`);
          if (sha256(frame.data) !== frame.sha256) throw new ConfigError(`${file}: ${what} is damaged (its checksum does not match)`);
          yield { kind, ...(frame as FileFrame) };
        }
      },
      close: () => closeSync(fd),
    };
  } catch (error) {
    try {
      closeSync(fd);
    } catch {
      // closed already
    }
    throw error;
  }
}

function parse<T>(file: string, bytes: () => Buffer): T {
  try {
    return decode<T>(bytes());
  } catch (error) {
    throw new ConfigError(`${file} is not a realm export (${error instanceof Error ? error.message : String(error)})`);
  }
}

function checkHeader(file: string, data: Partial<RealmExport>, least: number): RealmExport {
  if (data?.kind !== EXPORT_KIND) throw new ConfigError(`${file} is not a realm export`);
  if (typeof data.exportVersion !== 'number' || data.exportVersion > EXPORT_VERSION || data.exportVersion < least) {
    throw new ConfigError(`${file} has export format ${String(data.exportVersion)}; this server reads up to ${EXPORT_VERSION}`);
  }
  checkVersion('realm export', data as { v: number });
  if (!data.realm || !Array.isArray(data.realm.users) || !Array.isArray(data.users)) throw new ConfigError(`${file} is incomplete`);
  for (const list of [data.uploads, data.avatars, data.emojiImages]) {
    if (list !== undefined && !(Array.isArray(list) && list.every((path) => typeof path === 'string'))) throw new ConfigError(`${file} has a malformed list of files`);
  }
  return data as RealmExport;
}
