/**
 * Search: the `search` narrow over a long history, answered from the full-text index (issue 17).
 *
 *   npx tsx bench/search.ts [--messages 2000000] [--requests 200]
 *   npx tsx bench/search.ts --index-only --messages 10000000     the index alone (runIndexSearch)
 *
 * The data directory is written by bench/recovery.ts's writer (the server's own code, in a process of its
 * own; 1 % of it left in the log), without a search index: the real server, compiled as `npm start` runs
 * it, builds the index from the messages at its first boot (the time is printed). Then, one request at a
 * time: `GET /messages` with `narrow=[search]`, `anchor=newest`, `num_before=50`, for a word no message
 * holds, a word every message holds, a prefix of it, and a phrase every message holds; then `GET /users/me`
 * alone, and again while four clients search without pause (those four in turn), to show that a
 * search does not hold the event loop. Latencies are each response's own time, as this client saw it.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { parseSearch } from '../actors/realm/messages/search-query.ts';
import type { IndexOp } from '../snapshots/index-ops.ts';
import { SEARCH_INDEX_FILE, SqliteSearchIndex } from '../snapshots/search-index.ts';
import { Api, readZuliprc, type Credentials } from './lib/api.ts';
import { measuredServerArgs } from './lib/compiled.ts';
import { killAll, makeTempDir, pinSelf, removeTempDir, runNode, startNode, stopAll } from './lib/proc.ts';
import { percentile, round } from './lib/stats.ts';

const SEARCHERS = 4;
/** bench/recovery.ts's writer cycles its messages through this many topics */
const TOPICS = 100;
/** what the searching clients ask for, in turn */
const SEARCHED = ['zebra', 'quick', 'qui', '"lazy dog"'];

export interface SearchLatency {
  label: string;
  count: number;
  p50: number;
  p99: number;
  max: number;
}

function summarize(label: string, times: number[]): SearchLatency {
  const row = { label, count: times.length, p50: round(percentile(times, 50)), p99: round(percentile(times, 99)), max: round(Math.max(...times)) };
  console.log(`  ${label}: p50 ${row.p50} ms, p99 ${row.p99} ms, max ${row.max} ms (${row.count} requests)`);
  return row;
}

async function timed(api: Api, owner: Credentials, path: string, params: Record<string, unknown>): Promise<{ ms: number; body: Record<string, unknown> }> {
  const started = performance.now();
  const body = await api.ok('GET', path, params, owner);
  return { ms: performance.now() - started, body };
}

const searchParams = (operand: string) => ({ anchor: 'newest', num_before: 50, num_after: 0, narrow: JSON.stringify([{ operator: 'search', operand }]) });

export async function runSearch(messages: number, requests: number): Promise<SearchLatency[]> {
  const dir = makeTempDir('chat-bench-search-');
  try {
    console.log(`\nSearch: writing ${messages} messages with bench/recovery.ts's writer to ${dir}`);
    await runNode('search writer', ['bench/recovery.ts', 'write', '--dir', dir, '--messages', String(messages), '--log-tail', '0.01'], 3_600_000, {}, (line) => line.startsWith('  writer:') && console.log(line));
    const booting = performance.now();
    const server = await startNode('server (search)', await measuredServerArgs(['serve', '--port', '0', '--data-dir', dir]), { CHAT_RATE_LIMIT: 'off', CHAT_LOG_LEVEL: 'info' }, 3_600_000);
    const indexLine = server.output().split('\n').find((line) => line.includes('search index brought up to date'));
    console.log(`  boot: ${((performance.now() - booting) / 1000).toFixed(1)} s to listening; index: ${indexLine ? JSON.stringify(JSON.parse(indexLine).ms) + ' ms, ' + JSON.parse(indexLine).how : 'no line'}`);
    const api = new Api(server.url);
    const owner = readZuliprc(join(dir, 'zuliprc'));
    const rows: SearchLatency[] = [];
    const series = async (label: string, operand: string | null, expectMessages: boolean) => {
      const times: number[] = [];
      for (let i = 0; i < requests; i++) {
        const params = operand === null ? { anchor: 'newest', num_before: 50, num_after: 0 } : searchParams(operand);
        const { ms, body } = await timed(api, owner, '/messages', params);
        const found = (body.messages as unknown[]).length;
        if ((found > 0) !== expectMessages) throw new Error(`search ${operand} found ${found} messages`);
        times.push(ms);
      }
      rows.push(summarize(label, times));
    };
    await series('GET /messages 50 newest, no narrow (reference)', null, true);
    await series('search, no match (zebra)', 'zebra', false);
    await series('search, common word (quick, the last word: also a prefix), 50 newest', 'quick', true);
    await series('search, common prefix (qui), 50 newest', 'qui', true);
    await series('search, phrase ("lazy dog"), 50 newest', '"lazy dog"', true);
    const me = async (label: string) => {
      const times: number[] = [];
      for (let i = 0; i < requests; i++) times.push((await timed(api, owner, '/users/me', {})).ms);
      rows.push(summarize(label, times));
    };
    await me('GET /users/me alone');
    let searching = true;
    let searches = 0;
    const searchers = Array.from({ length: SEARCHERS }, async (_, i) => {
      while (searching) {
        await timed(api, owner, '/messages', searchParams(SEARCHED[(i + searches) % SEARCHED.length]!));
        searches++;
      }
    });
    const during: number[] = [];
    while (searches < requests || during.length < requests) during.push((await timed(api, owner, '/users/me', {})).ms);
    rows.push(summarize(`GET /users/me during ${SEARCHERS} searching clients`, during));
    searching = false;
    await Promise.all(searchers);
    console.log(`  (${searches} searches ran meanwhile)`);
    rows.push(...(await sparseNarrows(api, owner)));
    await server.stop();
    return rows;
  } finally {
    removeTempDir(dir);
  }
}

/** Requests per sparse narrow: each reads the whole history. */
const SPARSE_REQUESTS = 5;

/**
 * Narrows the candidate lists cannot answer (a sender who wrote nothing, `has:link` where no
 * message links) walk every message the user can read for the 51 they never find
 * (actors/realm/messages/query.ts's fetchWindow), CHAT_NARROW_SLICE_IDS ids per turn of the event loop;
 * with a search too, the index's matches are read instead, off the event loop, and checked on it a page at
 * a time. Timed, with `GET /users/me` sent without pause meanwhile: its latency is what the slices keep.
 */
async function sparseNarrows(api: Api, owner: Credentials): Promise<SearchLatency[]> {
  const created = await api.ok('POST', '/users', { email: `quiet-${Date.now()}@example.com`, password: 'a quiet one 12345', full_name: 'Quiet' }, owner);
  const rows: SearchLatency[] = [];
  const narrows: [string, unknown[]][] = [
    ['sender with no messages', [{ operator: 'sender', operand: created.user_id }]],
    ['has:link, no message has one', [{ operator: 'has', operand: 'link' }]],
    // Search leads here: every match is read from the index, in pages, and checked on the event loop.
    ['search quick from that sender', [{ operator: 'sender', operand: created.user_id }, { operator: 'search', operand: 'quick' }]],
  ];
  for (const [label, narrow] of narrows) {
    const times: number[] = [];
    const me: number[] = [];
    for (let i = 0; i < SPARSE_REQUESTS; i++) {
      let running = true;
      const narrowed = timed(api, owner, '/messages', { anchor: 'newest', num_before: 50, num_after: 0, narrow: JSON.stringify(narrow) }).finally(() => (running = false));
      while (running) me.push((await timed(api, owner, '/users/me', {})).ms);
      times.push((await narrowed).ms);
    }
    rows.push(summarize(`narrow: ${label}`, times));
    rows.push(summarize(`GET /users/me during it`, me));
  }
  return rows;
}

/** Index writes per transaction when the index is filled directly: the server's batches are smaller. */
const FILL_BATCH = 100_000;
/** The first page fetchSearchWindow (actors/realm/messages/search.ts) asks the index for. */
const FIRST_PAGE = 100;

/**
 * --index-only: the index alone, at sizes the recovery writer cannot reach (it holds the history in its heap).
 * The server's own index code (SqliteSearchIndex, in this process, its worker thread reading) is filled
 * with the messages the writer sends (same text and topics, ids 1..N of one organization), through the
 * writes boot and serving make, then asked what fetchSearchWindow asks first for `anchor=newest`: the
 * newest FIRST_PAGE matches of the query parseSearch makes. The event loop's delay is sampled meanwhile and
 * while four searchers run without pause; FTS5's own prefix query (how a prefix was read before) is timed on
 * a connection of its own for comparison. No HTTP, narrow or access checks: those are the server run's.
 */
export async function runIndexSearch(messages: number, requests: number): Promise<SearchLatency[]> {
  const dir = makeTempDir('chat-bench-search-index-');
  try {
    console.log(`\nSearch index alone: filling ${messages} messages in ${dir}`);
    const index = new SqliteSearchIndex(dir);
    const realmId = 1;
    const started = performance.now();
    for (let first = 1; first <= messages; first += FILL_BATCH) {
      const ops: IndexOp[] = [];
      for (let id = first; id < first + FILL_BATCH && id <= messages; id++) {
        const n = id - 1;
        ops.push({ kind: 'put', realmId, id, content: `Message ${n}: the quick brown fox jumps over the **lazy** dog, then naps.`, topic: `topic ${n % TOPICS}` });
      }
      index.write(first + ops.length - 1, ops);
      if ((first - 1 + ops.length) % (messages / 10) < FILL_BATCH) console.log(`  filled ${first - 1 + ops.length} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
    console.log(`  index file: ${Math.round(statSync(join(dir, SEARCH_INDEX_FILE)).size / 1e6)} MB`);
    const rows: SearchLatency[] = [];
    const delay = monitorEventLoopDelay({ resolution: 1 });
    const series = async (label: string, operand: string, expect: boolean) => {
      const query = parseSearch(operand).query;
      const times: number[] = [];
      for (let i = 0; i < requests; i++) {
        const began = performance.now();
        const ids = await index.search(realmId, query, 'before', messages + 1, FIRST_PAGE);
        times.push(performance.now() - began);
        if ((ids.length > 0) !== expect) throw new Error(`${operand}: ${ids.length} matches`);
      }
      rows.push(summarize(label, times));
    };
    delay.enable();
    await series('index: no match (zebra)', 'zebra', false);
    await series('index: common word (quick, also a prefix), 100 newest', 'quick', true);
    await series('index: common prefix (qui), 100 newest', 'qui', true);
    await series('index: phrase ("lazy dog"), 100 newest', '"lazy dog"', true);
    delay.disable();
    console.log(`  event loop delay meanwhile: p99 ${round(delay.percentile(99) / 1e6)} ms, max ${round(delay.max / 1e6)} ms`);
    delay.reset();
    delay.enable();
    let done = 0;
    await Promise.all(
      Array.from({ length: SEARCHERS }, async (_, i) => {
        for (let k = i; done < requests * SEARCHERS; k++, done++) await index.search(realmId, parseSearch(SEARCHED[k % SEARCHED.length]!).query, 'before', messages + 1, FIRST_PAGE);
      }),
    );
    delay.disable();
    console.log(`  event loop delay during ${done} searches by ${SEARCHERS} searchers: p99 ${round(delay.percentile(99) / 1e6)} ms, max ${round(delay.max / 1e6)} ms`);
    await index.close();
    // Before the prefix was expanded: FTS5's prefix query, which merges every matching term's list first.
    const db = new Database(join(dir, SEARCH_INDEX_FILE), { readonly: true });
    const native = db.prepare('SELECT rowid FROM messages WHERE messages MATCH ? AND rowid >= ? AND rowid < ? ORDER BY rowid DESC LIMIT ?').pluck();
    const low = BigInt(realmId) * 2n ** 32n;
    for (const operand of ['quick', 'qui']) {
      const times: number[] = [];
      for (let i = 0; i < Math.min(requests, 20); i++) {
        const began = performance.now();
        native.all(parseSearch(operand).query, low, low + BigInt(messages + 1), FIRST_PAGE);
        times.push(performance.now() - began);
      }
      rows.push(summarize(`index: ${operand} as FTS5's prefix query (before), 100 newest`, times));
    }
    db.close();
    return rows;
  } finally {
    removeTempDir(dir);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { messages: { type: 'string', default: '2000000' }, requests: { type: 'string', default: '200' }, 'index-only': { type: 'boolean', default: false } },
  });
  pinSelf();
  const run = values['index-only'] ? runIndexSearch : runSearch;
  const rows = await run(Number(values.messages), Number(values.requests));
  console.log(JSON.stringify(rows, null, 2));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      killAll();
      process.exit(1);
    });
  }
  main().then(
    () => stopAll(),
    async (error: unknown) => {
      console.error(error);
      await stopAll();
      process.exit(1);
    },
  );
}
