import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { IndexOp } from './index-ops.ts';
import { DEFAULT_PREFIX_TERMS, PREFIX_SOURCE } from './search-prefix.ts';

/** The index file in the data directory; LMDB's files are beside it. */
export const SEARCH_INDEX_FILE = 'search.sqlite';

/**
 * Message ids are per organization: a row's id is the realm's id times this plus the message's, so one
 * realm's rows are one rowid range. Message ids stay below it (4,294,967,296 messages per organization).
 */
const REALM_SPAN = 2 ** 32;

/** Bumped when the table's shape or tokenizer changes: an index of another version is built again. */
const SCHEMA_VERSION = 1;

/**
 * Porter stemming over unicode61 words, as Zulip's PostgreSQL English configuration stems: "walking" finds
 * "walked"; diacritics are folded, so "cafe" finds "café".
 */
const TOKENIZER = 'porter unicode61 remove_diacritics 2';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
  CREATE VIRTUAL TABLE IF NOT EXISTS messages USING fts5(content, topic, tokenize = '${TOKENIZER}');
`;

/** The statements both connections write with (READER_SOURCE's and the event loop's at boot). */
const SQL = {
  // A sent message's row: a new one, as the index never holds a message before its send's commit, nor after
  // the position it records (a repair writes what follows it). Should one be there all the same, the INSERT
  // fails alone (SQLITE_CONSTRAINT_PRIMARYKEY, the transaction goes on) and `put` replaces it: a plain INSERT
  // costs 0.6-0.8 us less of the worker's CPU per message than INSERT OR REPLACE (bench/README.md, "Eighth pass").
  insert: 'INSERT INTO messages (rowid, content, topic) VALUES (?, ?, ?)',
  // FTS5 takes REPLACE on the rowid: a row already there is deleted first, as a DELETE before the INSERT
  // would, in one statement.
  put: 'INSERT OR REPLACE INTO messages (rowid, content, topic) VALUES (?, ?, ?)',
  remove: 'DELETE FROM messages WHERE rowid = ?',
  content: 'UPDATE messages SET content = ? WHERE rowid = ?',
  topic: 'UPDATE messages SET topic = ? WHERE rowid = ?',
  setPosition: "INSERT INTO meta (key, value) VALUES ('position', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
};

/**
 * The worker thread with its own connection that serves the server once booted: better-sqlite3 is
 * synchronous, and neither a query over a long history nor the index writes should hold the event loop.
 * Requests are taken in order, so a search reads every write posted before it. After a write fails none is
 * taken any more: the position stays before what the index lacks, and the next boot repairs it. It is plain
 * JavaScript given as source, so that it runs the same from the TypeScript sources and from the production
 * bundle (which has no file of its own for it).
 */
const READER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('synchronous = NORMAL');
const insert = db.prepare(${JSON.stringify(SQL.insert)});
const put = db.prepare(${JSON.stringify(SQL.put)});
const remove = db.prepare(${JSON.stringify(SQL.remove)});
const setContent = db.prepare(${JSON.stringify(SQL.content)});
const setTopic = db.prepare(${JSON.stringify(SQL.topic)});
const setPosition = db.prepare(${JSON.stringify(SQL.setPosition)});
// ops: flat (see flatOps): kind, row, then the content and topic of a put, the text of a content or topic.
const write = db.transaction((seq, ops) => {
  for (let i = 0; i < ops.length; ) {
    const kind = ops[i++], row = ops[i++];
    if (kind === 'put') {
      try { insert.run(row, ops[i], ops[i + 1]); }
      catch (error) { if (error.code !== 'SQLITE_CONSTRAINT_PRIMARYKEY') throw error; put.run(row, ops[i], ops[i + 1]); }
      i += 2;
    }
    else if (kind === 'content') setContent.run(ops[i++], row);
    else if (kind === 'topic') setTopic.run(ops[i++], row);
    else if (kind === 'delete') remove.run(row);
    else throw new Error('unknown index op ' + kind);
  }
  setPosition.run(seq);
});
let writeFailed = false;
${PREFIX_SOURCE}
const expandPrefixes = prefixExpander(db, workerData.tokenizer, workerData.prefixTerms);
const before = db.prepare('SELECT rowid FROM messages WHERE messages MATCH ? AND rowid >= ? AND rowid < ? ORDER BY rowid DESC LIMIT ?').pluck();
const after = db.prepare('SELECT rowid FROM messages WHERE messages MATCH ? AND rowid > ? AND rowid < ? ORDER BY rowid ASC LIMIT ?').pluck();
const among = db.prepare('SELECT rowid FROM messages WHERE messages MATCH ? AND rowid IN (SELECT value FROM json_each(?))').pluck();
// One read transaction: the prefixes' terms are read from the segments the query then reads.
const read = db.transaction((request) => {
  const query = expandPrefixes(request.query);
  // Bounds as BigInt, bound as SQLite integers: FTS5 seeks to an integer rowid bound, and scans the
  // whole match list for a REAL one (what a JavaScript number binds as).
  return request.kind === 'before' ? before.all(query, BigInt(request.low), BigInt(request.high), request.limit)
    : request.kind === 'after' ? after.all(query, BigInt(request.low), BigInt(request.high), request.limit)
    : among.all(query, JSON.stringify(request.rowids));
});
parentPort.on('message', (request) => {
  if (request.kind === 'write') {
    if (writeFailed) return;
    try {
      write(request.seq, request.ops);
    } catch (error) {
      writeFailed = true;
      parentPort.postMessage({ id: 0, error: error instanceof Error ? error.message : String(error) });
    }
    return;
  }
  if (request.kind === 'sync') return parentPort.postMessage({ id: request.id, rows: [] });
  try {
    parentPort.postMessage({ id: request.id, rows: read(request) });
  } catch (error) {
    parentPort.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) });
  }
});
`;

type ReaderRequest =
  | { kind: 'before' | 'after'; query: string; low: number; high: number; limit: number }
  | { kind: 'among'; query: string; rowids: number[] }
  | { kind: 'sync' };

type ReaderReply = { id: number; rows: number[]; error?: undefined } | { id: number; error: string };

/**
 * SQLite FTS5 beside LMDB: written and read by a worker thread once serving, on the event loop at boot. It is
 * the actors' SearchIndex (actors/search-index.ts) by shape, as Store is their Persistence: snapshots/ does
 * not import actors/.
 */
export class SqliteSearchIndex {
  private readonly db: Database.Database;
  private readonly statements;
  private readonly reader: Worker;
  private readonly pending = new Map<number, { resolve(rows: number[]): void; reject(error: Error): void }>();
  private nextRequest = 1;
  private readerFailure: Error | null = null;
  /** why the worker stopped taking writes, if it did */
  writeFailure: string | null = null;

  /** `prefixTerms`: how many index terms a search's last word may stand for as a prefix (search-prefix.ts) */
  constructor(dir: string, options: { prefixTerms?: number } = {}) {
    const file = join(dir, SEARCH_INDEX_FILE);
    this.db = openIndex(file);
    const db = this.db;
    this.statements = {
      position: db.prepare("SELECT value FROM meta WHERE key = 'position'").pluck(),
      setPosition: db.prepare(SQL.setPosition),
      insert: db.prepare(SQL.insert),
      put: db.prepare(SQL.put),
      remove: db.prepare(SQL.remove),
      content: db.prepare(SQL.content),
      topic: db.prepare(SQL.topic),
    };
    this.reader = new Worker(READER_SOURCE, {
      eval: true,
      workerData: {
        file,
        module: createRequire(import.meta.url).resolve('better-sqlite3'),
        tokenizer: TOKENIZER,
        prefixTerms: options.prefixTerms ?? DEFAULT_PREFIX_TERMS,
      },
    });
    this.reader.unref();
    this.reader.on('message', (reply: ReaderReply) => {
      // id 0: a write failed (see READER_SOURCE); the worker takes no more.
      if (reply.id === 0) this.writeFailure = reply.error ?? 'unknown';
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (reply.error !== undefined) waiting?.reject(new Error(`search index: ${reply.error}`));
      else waiting?.resolve(reply.rows);
    });
    this.reader.on('error', (error) => this.failReader(error));
    this.reader.on('exit', (code) => this.failReader(new Error(`search index reader exited (${code})`)));
  }

  position(): number {
    return (this.statements.position.get() as number | undefined) ?? 0;
  }

  /** Boot: written at once, on this thread. */
  write(seq: number, ops: readonly IndexOp[]): void {
    this.db.transaction(() => {
      for (const op of ops) this.apply(op);
      this.statements.setPosition.run(seq);
    })();
  }

  /** Once serving: handed to the worker, which writes it before anything asked of it later. */
  post(seq: number, ops: readonly IndexOp[]): void {
    this.reader.postMessage({ kind: 'write', seq, ops: flatOps(ops) });
  }

  clear(): void {
    this.db.transaction(() => {
      // Dropped, not emptied: FTS5 deletes a row by reading its text again, so a DELETE of every row costs
      // as much as the rows took to write.
      this.db.exec('DROP TABLE messages');
      this.db.exec(SCHEMA);
      this.statements.setPosition.run(0);
    })();
  }

  async settled(): Promise<void> {
    await this.ask({ kind: 'sync' });
  }

  async search(realmId: number, query: string, direction: 'before' | 'after', bound: number, limit: number): Promise<number[]> {
    const base = realmId * REALM_SPAN;
    const edge = Math.min(Math.max(bound, 0), REALM_SPAN - 1);
    const request: ReaderRequest =
      direction === 'before'
        ? { kind: 'before', query, low: base, high: base + edge, limit }
        : { kind: 'after', query, low: base + edge, high: base + REALM_SPAN, limit };
    return (await this.ask(request)).map((row) => row - base);
  }

  async matching(realmId: number, query: string, ids: readonly number[]): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const base = realmId * REALM_SPAN;
    const rows = await this.ask({ kind: 'among', query, rowids: ids.map((id) => base + id) });
    return new Set(rows.map((row) => row - base));
  }

  async close(): Promise<void> {
    // The writes handed over before are done when the worker answers this.
    await this.settled().catch(() => undefined);
    this.readerFailure ??= new Error('search index closed');
    await this.reader.terminate();
    this.db.close();
  }

  private apply(op: IndexOp): void {
    const row = rowid(op.realmId, op.id);
    switch (op.kind) {
      case 'put':
        try {
          this.statements.insert.run(row, op.content, op.topic);
        } catch (error) {
          if ((error as { code?: string }).code !== 'SQLITE_CONSTRAINT_PRIMARYKEY') throw error;
          this.statements.put.run(row, op.content, op.topic);
        }
        return;
      case 'content':
        this.statements.content.run(op.content, row);
        return;
      case 'topic':
        this.statements.topic.run(op.topic, row);
        return;
      case 'delete':
        this.statements.remove.run(row);
        return;
      default: {
        const never: never = op;
        throw new Error(`unknown index op ${JSON.stringify(never)}`);
      }
    }
  }

  private ask(request: ReaderRequest): Promise<number[]> {
    if (this.readerFailure) return Promise.reject(this.readerFailure);
    const id = this.nextRequest++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.reader.postMessage({ ...request, id });
    });
  }

  private failReader(error: Error): void {
    this.readerFailure ??= error;
    for (const waiting of this.pending.values()) waiting.reject(this.readerFailure);
    this.pending.clear();
  }
}

const rowid = (realmId: number, id: number) => realmId * REALM_SPAN + id;

/**
 * Ops as the worker takes them: one flat array of the kind, the row (a BigInt: bound as an SQLite integer)
 * and the texts, cheaper to copy across than an object of five keys per op: a batch of 500 sends cost
 * 5.7-5.8 us of CPU per message in all instead of 6.0-6.2 (2026-11-26, with INSERT OR REPLACE).
 */
function flatOps(ops: readonly IndexOp[]): (string | bigint)[] {
  const flat: (string | bigint)[] = [];
  for (const op of ops) {
    flat.push(op.kind, BigInt(rowid(op.realmId, op.id)));
    switch (op.kind) {
      case 'put':
        flat.push(op.content, op.topic);
        break;
      case 'content':
        flat.push(op.content);
        break;
      case 'topic':
        flat.push(op.topic);
        break;
      case 'delete':
        break;
      default: {
        const never: never = op;
        throw new Error(`unknown index op ${JSON.stringify(never)}`);
      }
    }
  }
  return flat;
}

/**
 * Opens the index, or starts an empty one (position 0) in place of a file that does not open as one of
 * this version: the index is derived data, and boot fills it again from the log and the messages.
 */
function openIndex(file: string): Database.Database {
  try {
    const db = initialize(new Database(file));
    const version = db.prepare("SELECT value FROM meta WHERE key = 'version'").pluck().get() as number | undefined;
    if (version === SCHEMA_VERSION) return db;
    if (version === undefined && db.prepare('SELECT count(*) FROM meta').pluck().get() === 0) return stamped(db);
    db.close();
  } catch {
    // unreadable: made again below
  }
  removeFiles(file);
  return stamped(initialize(new Database(file)));
}

/**
 * Removes the index of a data directory whose data was replaced (a restore): its position is of another
 * history, which boot could not tell from this one's; the next boot builds it again.
 */
export function removeSearchIndex(dir: string): void {
  removeFiles(join(dir, SEARCH_INDEX_FILE));
}

function removeFiles(file: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
}

function initialize(db: Database.Database): Database.Database {
  db.pragma('journal_mode = WAL');
  // A power loss may lose the last transactions, never tear one: the position goes back with them, and
  // boot applies them again from the log.
  db.pragma('synchronous = NORMAL');
  db.exec(SCHEMA);
  return db;
}

function stamped(db: Database.Database): Database.Database {
  db.prepare("INSERT INTO meta (key, value) VALUES ('version', ?)").run(SCHEMA_VERSION);
  return db;
}
