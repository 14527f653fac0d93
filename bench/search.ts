/**
 * Search: the `search` narrow over a long history, answered from the full-text index (issue 17).
 *
 *   npx tsx bench/search.ts [--messages 2000000] [--requests 200]
 *
 * The data directory is written by bench/recovery.ts's writer (the server's own code, in a process of its
 * own; 1 % of it left in the log), without a search index: the real server, compiled as `npm start` runs
 * it, builds the index from the messages at its first boot (the time is printed). Then, one request at a
 * time: `GET /messages` with `narrow=[search]`, `anchor=newest`, `num_before=50`, for a word no message
 * holds, a word every message holds, and a phrase every message holds; then `GET /users/me` alone, and again
 * while four clients search without pause (the no-match word and the common word in turn), to show that a
 * search does not hold the event loop. Latencies are each response's own time, as this client saw it.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Api, readZuliprc, type Credentials } from './lib/api.ts';
import { measuredServerArgs } from './lib/compiled.ts';
import { killAll, makeTempDir, pinSelf, removeTempDir, runNode, startNode, stopAll } from './lib/proc.ts';
import { percentile, round } from './lib/stats.ts';

const SEARCHERS = 4;

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
    await series('search, common word (quick), 50 newest', 'quick', true);
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
        await timed(api, owner, '/messages', searchParams(i % 2 === 0 ? 'zebra' : 'quick'));
        searches++;
      }
    });
    const during: number[] = [];
    while (searches < requests || during.length < requests) during.push((await timed(api, owner, '/users/me', {})).ms);
    rows.push(summarize(`GET /users/me during ${SEARCHERS} searching clients`, during));
    searching = false;
    await Promise.all(searchers);
    console.log(`  (${searches} searches ran meanwhile)`);
    await server.stop();
    return rows;
  } finally {
    removeTempDir(dir);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { messages: { type: 'string', default: '2000000' }, requests: { type: 'string', default: '200' } } });
  pinSelf();
  const rows = await runSearch(Number(values.messages), Number(values.requests));
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
