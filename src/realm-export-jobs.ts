import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { RealmExportEntry } from '../actors/realm/exports/state.ts';
import { MESSAGE_CHUNK_SIZE } from '../actors/realm/messages/chunk-size.ts';
import { realmRecordWithoutMessages, type RealmRecord, type RealmState } from '../actors/realm/state.ts';
import type { PersonalRecord, Runtime } from '../actors/runtime.ts';
import { settingValue } from '../actors/user/settings.ts';
import { userToRecord } from '../actors/user/state.ts';
import { FORMAT_VERSION } from '../snapshots/codec.ts';
import type { Logger } from './log.ts';
import { ExportFileWriter, EXPORT_KIND, EXPORT_VERSION, listedFiles, type RealmExport } from './realm-export-file.ts';
import { ExportScope, type ExportMessageHead } from './realm-export-filter.ts';
import { RealmFiles } from './realm-files.ts';

/**
 * Messages encoded per turn of the event loop, once a walk of the history a chunk per turn has chosen them.
 * 250 000 messages (the most an export through the API may hold) took 2 s to encode at once, and as long again
 * to copy to a worker thread; slices of 2 000 still held the loop up to 137 ms in an export of 10 000 (their
 * bodies read back, then encoded), slices of 500 at most 30 ms.
 */
const MESSAGES_PER_SLICE = 500;

/** Where exports are kept: `<dataDir>/exports/<path id>`, path ids as uploads' (`<realm>/<random>/<name>`). */
export const EXPORTS_FOLDER = 'exports';

export function exportFile(dataDir: string, pathId: string): string {
  if (!/^\d+\/[\w-]+\/[\w.-]+$/.test(pathId) || pathId.includes('..')) throw new Error(`bad export path id ${pathId}`);
  return join(dataDir, EXPORTS_FOLDER, pathId);
}

/**
 * The exports administrators ask for through the API, made in the background while the server serves: the
 * organization's records but its messages are taken in the turn it is asked for (as a snapshot takes them:
 * no message is read), then its history is walked a chunk per turn for the messages that go, those are
 * encoded a slice per turn, and every file is read and written asynchronously, so that no request waits more
 * than a slice. Each one ends in `realm_export.complete` or `.fail`; one the server stopped under fails at the
 * next start.
 */
export class RealmExportJobs {
  private readonly running = new Map<string, Promise<void>>();
  private stopping = false;

  constructor(
    private readonly runtime: Runtime,
    private readonly dataDir: string,
    private readonly log: Logger,
  ) {}

  /** Starts making the export just asked for: of the organization as it is now. */
  start(realmId: number, exportId: number): void {
    const key = `${realmId}:${exportId}`;
    const job = new Promise<Begun>((resolve) => resolve(this.begin(realmId, exportId)))
      .then((begun) => this.make(begun))
      .then((pathId) => this.finish(realmId, { type: 'realm_export.complete', caller: { kind: 'operator' }, id: exportId, pathId }))
      .catch(async (error: unknown) => {
        this.log.error({ err: error, realmId, exportId }, 'data export failed');
        await this.finish(realmId, { type: 'realm_export.fail', caller: { kind: 'operator' }, id: exportId });
      })
      .finally(() => this.running.delete(key));
    this.running.set(key, job);
  }

  /** At start: the exports that were being made when the server stopped failed. */
  async failInterrupted(): Promise<void> {
    for (const state of this.runtime.realmStates()) {
      for (const entry of state.exports.list) {
        if (entry.pending) await this.finish(state.realmId, { type: 'realm_export.fail', caller: { kind: 'operator' }, id: entry.id });
      }
    }
  }

  /** Stops taking slices; the running exports end as failed (if the runtime still takes it) or at the next start. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.allSettled(this.running.values());
  }

  private async finish(realmId: number, command: Parameters<Runtime['execute']>[1]): Promise<void> {
    try {
      await this.runtime.execute(realmId, command);
    } catch (error) {
      this.log.warn({ err: error, realmId }, 'data export outcome not recorded; the next start records it as failed');
    }
  }

  /** What the export takes of the organization at once, in the turn it is asked for: all but its messages. */
  private begin(realmId: number, exportId: number): Begun {
    const state = this.runtime.realmState(realmId);
    const entry = state.exports.list.find((candidate) => candidate.id === exportId);
    if (!entry) throw new Error(`no export ${exportId}`);
    const consented = new Set<number>();
    for (const user of state.users.values()) {
      const settings = this.runtime.userActor(state.realmId, user.userId)?.getSnapshot().context.state.settings;
      if (settings && settingValue(settings, 'allow_private_data_export') === true) consented.add(user.userId);
    }
    const scope = new ExportScope(state, entry.exportType, consented);
    const users: PersonalRecord[] = [];
    for (const user of state.users.values()) {
      const actor = this.runtime.userActor(state.realmId, user.userId);
      if (!actor) continue;
      const snapshot = actor.getSnapshot();
      users.push(scope.personalRecord({ value: snapshot.value, state: userToRecord(snapshot.context.state) }));
    }
    return { state, entry, scope, record: realmRecordWithoutMessages(state), head: scope.messageHead(), users };
  }

  private async make(begun: Begun): Promise<string> {
    const { state, entry } = begun;
    const name = `chat-export-${state.stringId || 'root'}-${entry.id}.chat-export`;
    const pathId = `${state.realmId}/${randomBytes(18).toString('base64url')}/${name}`;
    const out = exportFile(this.dataDir, pathId);
    await mkdir(dirname(out), { recursive: true });
    const writer = await ExportFileWriter.open(out);
    try {
      await this.write(writer, begun);
      await writer.finish();
    } catch (error) {
      await writer.abort();
      await rm(dirname(out), { recursive: true, force: true });
      throw error;
    }
    this.log.info({ realmId: state.realmId, exportId: entry.id, bytes: writer.bytes }, 'data export written');
    return pathId;
  }

  private async write(writer: ExportFileWriter, { state, scope, record, head, users }: Begun): Promise<void> {
    const store = state.messages;
    // The history as it began (messages sent since are not in it), walked a chunk per turn: a message deleted
    // meanwhile is left out, one moved is judged where the walk finds it, and again when it is written.
    const ids: number[] = [];
    const kept = new Set<number>();
    const recipients = new Set<number>();
    for (let chunk = 0; chunk * MESSAGE_CHUNK_SIZE < head.nextId; chunk++) {
      this.checkRunning();
      for (const [id, message] of store.byId.chunkEntries(chunk)) {
        if (id >= head.nextId || !scope.includes(message)) continue;
        ids.push(id);
        kept.add(id);
        recipients.add(message.recipientId);
      }
      await nextTurn();
    }
    const realm = scope.realmRecord(record, head, kept, recipients);
    const files = new RealmFiles(this.dataDir);
    const { uploads, avatars, emojiImages, missing } = await files.list(realm);
    const header: RealmExport = {
      kind: EXPORT_KIND, exportVersion: EXPORT_VERSION, v: FORMAT_VERSION, exportedAt: new Date().toISOString(),
      source: { stringId: state.stringId, name: state.name }, realm, users, uploads, avatars, emojiImages, missingFiles: missing,
      messageFrames: Math.ceil(ids.length / MESSAGES_PER_SLICE),
      credentials: false,
    };
    await writer.frame(header);
    for (let start = 0; start < ids.length; start += MESSAGES_PER_SLICE) {
      this.checkRunning();
      const slice: Record<string, unknown>[] = [];
      for (const id of ids.slice(start, start + MESSAGES_PER_SLICE)) {
        // Deleted since the walk, or moved out of the export: left out (its flags and file links are dropped on import).
        const message = store.byId.get(id);
        if (!message || !scope.includes(message)) continue;
        const { body: _body, contentHas: _has, ...fields } = scope.message(message);
        const body = store.bodies.peek(message);
        slice.push({ ...fields, content: body.content, renderedContent: body.renderedContent, editHistory: body.editHistory });
      }
      await writer.frame(slice);
      await nextTurn();
    }
    for (const { kind, path } of listedFiles(header)) {
      this.checkRunning();
      const data = await files.read(state.realmId, kind, path);
      if (!data) throw new Error(`the file ${path} went missing while exporting`);
      await writer.file(path, data);
    }
  }

  private checkRunning(): void {
    if (this.stopping) throw new Error('the server is stopping');
  }
}

/** What an export took of its organization as it began (RealmExportJobs.begin). */
interface Begun {
  state: RealmState;
  entry: RealmExportEntry;
  scope: ExportScope;
  /** the organization's record without its messages, unfiltered */
  record: RealmRecord;
  head: ExportMessageHead;
  users: PersonalRecord[];
}
