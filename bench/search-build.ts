/**
 * The search index at boot, on a directory bench/recovery.ts's writer wrote (copied; the directory itself
 * is not changed):
 *
 *   node --import tsx bench/recovery.ts write --dir D --messages 1000000 --log-tail 0.1   once
 *   npx tsx bench/search-build.ts --dir D
 *
 * 1. Without an index (as after a restore, or a lost file): the time from spawn to listening, then the
 *    background build (the server's "search index built" line) and, while it runs, GET /users/me every
 *    10 ms (its latency: what the build's slices cost other requests) and a search (refused until the end).
 * 2. An index behind the snapshot: the copy booted once (it replays the log tail and snapshots it, the
 *    records staying in the log archive) and stopped, the writer's index put back, booted again: how the
 *    boot brought the index up (from the archive, or built in the background past 20,000 records) and the
 *    time from spawn to listening.
 */
import { copyFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Api, readZuliprc, type Credentials } from './lib/api.ts';
import { measuredServerArgs } from './lib/compiled.ts';
import { killAll, makeTempDir, pinSelf, removeTempDir, startNode, type Child } from './lib/proc.ts';
import { percentile } from './lib/stats.ts';

const INDEX_FILES = ['search.sqlite', 'search.sqlite-wal', 'search.sqlite-shm'];
const PROBE_EVERY_MS = 10;
const BOOT_TIMEOUT_MS = 600_000;
const BUILD_TIMEOUT_MS = 1_800_000;

/** A copy of the directory's data (not its index unless asked): the writer's directory is never changed. */
function copyData(from: string, withIndex: boolean): string {
  const dir = makeTempDir('chat-search-build-');
  for (const name of readdirSync(from)) {
    if (name === 'lock.mdb' || (!withIndex && INDEX_FILES.includes(name))) continue;
    copyFileSync(join(from, name), join(dir, name));
  }
  return dir;
}

async function boot(dir: string): Promise<{ server: Child; listeningMs: number }> {
  const args = await measuredServerArgs(['serve', '--port', '0', '--data-dir', dir]);
  const started = performance.now();
  const server = await startNode('server (search build)', args, { CHAT_RATE_LIMIT: 'off', CHAT_LOG_LEVEL: 'info' }, BOOT_TIMEOUT_MS);
  return { server, listeningMs: performance.now() - started };
}

/** The server's log line with this message, parsed, once it is written. */
async function logLine(server: Child, msg: string, timeoutMs: number): Promise<Record<string, unknown>> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const line = server.output().split('\n').find((text) => text.includes(`"msg":"${msg}"`));
    if (line) return JSON.parse(line) as Record<string, unknown>;
    if (performance.now() > deadline) throw new Error(`no '${msg}' line within ${timeoutMs} ms:\n${server.output().slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const searchNarrow = (word: string) => ({ anchor: 'newest', num_before: 5, num_after: 0, narrow: JSON.stringify([{ operator: 'search', operand: word }]) });

async function withoutIndex(source: string, owner: Credentials): Promise<void> {
  const dir = copyData(source, false);
  try {
    const { server, listeningMs } = await boot(dir);
    try {
      const api = new Api(server.url);
      const repair = await logLine(server, 'search index being built in the background', 5000);
      const latencies: number[] = [];
      let refused = 0;
      const built = logLine(server, 'search index built', BUILD_TIMEOUT_MS);
      let done = false;
      void built.then(() => (done = true), () => (done = true));
      while (!done) {
        const started = performance.now();
        const me = await api.call('GET', '/users/me', {}, owner);
        latencies.push(performance.now() - started);
        if (me.status !== 200) throw new Error(`GET /users/me answered ${me.status} during the build`);
        if ((await api.call('GET', '/messages', searchNarrow('zzzz'), owner)).status !== 200) refused++;
        await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
      }
      const line = await built;
      const found = (await api.ok('GET', '/messages', searchNarrow('message'), owner)).messages as unknown[];
      console.log(
        `  no index: spawn to listening ${(listeningMs / 1000).toFixed(2)} s (the repair ${repair.ms} ms); built in the background in ${(Number(line.ms) / 1000).toFixed(1)} s ` +
          `(${line.messages} messages); GET /users/me meanwhile p50/p99/max ${percentile(latencies, 50).toFixed(1)}/${percentile(latencies, 99).toFixed(1)}/${Math.max(...latencies).toFixed(1)} ms ` +
          `(${latencies.length} requests); searches refused meanwhile ${refused}; a search after it found ${found.length}`,
      );
    } finally {
      await server.stop();
    }
  } finally {
    removeTempDir(dir);
  }
}

async function behindSnapshot(source: string): Promise<void> {
  const dir = copyData(source, true);
  try {
    const first = await boot(dir);
    await first.server.stop();
    for (const file of INDEX_FILES) if (existsSync(join(source, file))) copyFileSync(join(source, file), join(dir, file));
    const { server, listeningMs } = await boot(dir);
    try {
      const line = server.output().split('\n').find((text) => text.includes('"msg":"search index'));
      const repair = line ? (JSON.parse(line) as Record<string, unknown>) : null;
      const recovered = await logLine(server, 'recovered', 5000);
      console.log(
        `  index behind the snapshot: ${repair ? `positions ${repair.from} to ${repair.to}, ${repair.how} in ${repair.ms} ms` : 'current'}; ` +
          `spawn to listening ${(listeningMs / 1000).toFixed(2)} s, recovered in ${(Number(recovered.ms) / 1000).toFixed(2)} s`,
      );
    } finally {
      await server.stop();
    }
  } finally {
    removeTempDir(dir);
  }
}

const { values } = parseArgs({ options: { dir: { type: 'string' } } });
if (!values.dir || !existsSync(join(values.dir, 'data.mdb'))) throw new Error('--dir: a directory bench/recovery.ts wrote');
process.on('SIGINT', () => {
  killAll();
  process.exit(130);
});
pinSelf();
try {
  const owner = readZuliprc(join(values.dir, 'zuliprc'));
  console.log(`Search index at boot, ${values.dir}`);
  await withoutIndex(values.dir, owner);
  await behindSnapshot(values.dir);
} finally {
  killAll();
}
