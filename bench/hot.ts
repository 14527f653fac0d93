/**
 * The hot-path rows of the bench on their own, for before/after measurements of one change (issue 17).
 *
 *   npx tsx bench/hot.ts [--users 1000] [--history 20000] [--runs 3] [--seconds 5] [--only register,registerall,users]
 *   npx tsx bench/hot.ts --only send10 --cpu-prof /tmp/prof     the server under `node --cpu-prof`
 *   npx tsx bench/hot.ts --only none --fanout 10000,1000          message fan-out only
 *   npx tsx bench/hot.ts --only none --socket-fanout 10000,1000   the same over WebSockets (raw baseline: uWS publish)
 *     [--fanout-rounds 10]                                         measured rounds per fan-out (the full bench's 10; at least 40,000 deliveries)
 *   npx tsx bench/hot.ts --gc 100000,1000000 --seconds 20         send latency and GC pauses over two history sizes
 *   npx tsx bench/hot.ts --gc 100000,10000000 --keep              the same, the directories kept (their paths printed)
 *   npx tsx bench/hot.ts --gc 100000,10000000 --reuse D1,D2       the same on directories kept before (no writing)
 *   npx tsx bench/hot.ts --only none --idle-queues 10000          heap and anonymous RSS per idle queue
 *
 * Seeding 1,000 users through HTTP hashes 1,000 passwords (75-160 s here), so a child process writes the
 * organization with the server's own code instead (bench/lib/organization.ts: users with API keys and no
 * password, as the recovery writer does): the owner and `users` more, `bench large` with the owner and all
 * but the last user, `bench small` with the owner and the first 9, and `history` messages in the small
 * channel's `bench history` topic. The compiled server (as `npm run bench` starts it) then boots that
 * directory and each chosen scenario runs as in the full bench (same definitions, same measurement), after
 * the raw JSON baseline of the same run. The last user, in no channel, registers.
 *
 * `--fanout`: message fan-out. Queues registered for `message` events as the web app registers them
 * (MESSAGE_CLIENT below), spread over the large channel's members (the owner aside), each polled on its own
 * connection (fanout.ts); the owner's send to that channel triggers each round. The raw long-poll baseline of
 * the same N answers with a body of the size the server's answer had.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { messageTarget, rawTarget, runFanout, type FanoutOptions } from './fanout.ts';
import { runHttp, type HttpMeasurement, type HttpScenario } from './http.ts';
import { runWsFanout } from './ws-fanout.ts';
import { Api, basicAuth, formEncode, type Credentials } from './lib/api.ts';
import { compiledProgram, measuredServerArgs } from './lib/compiled.ts';
import { environment, loadAverage, printEnvironment } from './lib/env.ts';
import { killAll, makeTempDir, pinSelf, probeMemory, removeTempDir, runNode, settledMemory, startNode, stopAll, waitForIdle, type Child } from './lib/proc.ts';
import { HISTORY_TOPIC, MESSAGE_TEXT, messageReadScenarios, messageWriteScenarios, type BenchChannel, type MessageScenarioContext } from './messages.ts';
import { printTable } from './report.ts';
import { deleteQueues, registerQueues, type SeededUser } from './seed.ts';
import { fanoutRow, httpRow, logFanout, logRun } from './suite.ts';
import type { Row } from './report.ts';

const WRITER_MARK = 'hot-writer ';

/**
 * A message queue as the web app registers one (its client capabilities, Markdown rendered, slim
 * presence); no initial state is fetched, the harness stands for clients already loaded.
 */
const MESSAGE_CLIENT = {
  event_types: ['message'],
  fetch_event_types: [],
  apply_markdown: true,
  client_gravatar: true,
  slim_presence: true,
  client_capabilities: {
    notification_settings_null: true,
    bulk_message_deletion: true,
    user_avatar_url_field_optional: true,
    stream_typing_notifications: true,
    user_settings_object: true,
    linkifier_url_template: true,
    user_list_incomplete: true,
    include_deactivated_groups: true,
    archived_channels: true,
    empty_topic_name: true,
  },
};

/**
 * Deliveries made before a fan-out's measured rounds. The server's hot path is compiled by V8's optimizing
 * compiler on background threads during its first ten thousand or so deliveries: with one warm-up round of
 * 1,000, that compilation was about 11 us of CPU per measured delivery (gone with 20 rounds: 35 -> 24 us,
 * 2026-11-26), which a server that has run for more than a second no longer pays. The raw baselines get
 * the same warm-up.
 */
const FANOUT_WARMUP_DELIVERIES = 20_000;
/**
 * Deliveries measured in a fan-out, at least. The server's CPU is read from /proc in ticks of 10 ms: 10 rounds
 * of 1,000 deliveries at 10-20 us each are 0.1-0.2 s of CPU, a figure good to about 10 %, which is the whole
 * distance between two verdicts of a 1.5x target. 40,000 make it about 2 %.
 */
const FANOUT_MEASURED_DELIVERIES = 40_000;
/** Measured rounds per fan-out (`--fanout-rounds`): 10 as the full bench runs; more for a finer CPU figure or a profile. */
let fanoutRounds = 10;
const fanoutOptions = (n: number): FanoutOptions => ({
  rounds: Math.max(fanoutRounds, Math.ceil(FANOUT_MEASURED_DELIVERIES / n)),
  warmupRounds: Math.max(1, Math.ceil(FANOUT_WARMUP_DELIVERIES / n)),
  roundTimeoutMs: 60_000,
});
/** History messages sent per event-loop turn by the writer: one group commit each. */
const BATCH = 1000;
/**
 * The writer snapshots every this many history messages, as the server's snapshot timer would (and as
 * bench/recovery.ts's writer does): each snapshot lets the chunks and bodies it stored leave memory, so
 * 10,000,000 messages fit in the writer's heap; the last snapshot leaves the log empty for the boot.
 */
const SNAPSHOT_EVERY = 250_000;
/** The writer's time limit: about 7,000 messages a second in-process on this loaded machine, doubled. */
const writerTimeoutMs = (history: number) => Math.max(1_800_000, history * 0.3);

interface Written {
  owner: Credentials;
  users: SeededUser[];
  small: BenchChannel;
  large: BenchChannel;
  messageId: number;
}

async function write(dir: string, users: number, history: number): Promise<Written> {
  const { writeOrganization } = await import('./lib/organization.ts');
  // The owner, then `users` more; the large channel leaves the last one out.
  // The search index is written as the server writes it, so that the server's boot need not build it from
  // every message; no archive of the log (point-in-time restore is not measured; at 10,000,000 messages it
  // would be gigabytes).
  const { store, runtime, realm, userIds, channelId, search } = await writeOrganization(dir, {
    users: users + 1, name: 'bench', channel: 'bench large', members: users, searchIndex: true, archiveRetentionMs: 0,
  });
  const smallIds = userIds.slice(0, 10);
  await runtime.execute(realm.realmId, {
    type: 'channel.subscribe', caller: { kind: 'user', userId: userIds[0]! }, channels: [{ name: 'bench small', description: '' }], principals: smallIds,
    options: { inviteOnly: false, isWebPublic: false, messageRetentionDays: null, isDefault: false, permissions: {} }, authorizationErrorsFatal: true,
  });
  const state = runtime.realmState(realm.realmId);
  const smallId = state.channelIdByName.get('bench small')!;
  let messageId = 0;
  const started = performance.now();
  for (let sent = 0; sent < history; sent += BATCH) {
    const batch = [];
    for (let n = sent; n < Math.min(history, sent + BATCH); n++) {
      batch.push(runtime.execute(realm.realmId, {
        type: 'message.send', caller: { kind: 'user', userId: userIds[0]! }, kind: 'channel', to: smallId, topic: HISTORY_TOPIC, content: MESSAGE_TEXT, client: 'API',
      }));
    }
    const last = (await Promise.all(batch)).at(-1)?.[0] as { type: string; message?: { id: number } } | undefined;
    if (last?.type === 'message.sent') messageId = last.message!.id;
    const done = Math.min(history, sent + BATCH);
    if (done % SNAPSHOT_EVERY === 0 && done < history) await runtime.snapshot();
    if (done % 1_000_000 === 0) console.log(`  writer: ${done} messages, ${((performance.now() - started) / 1000).toFixed(0)} s, heap ${(process.memoryUsage().heapUsed / 1024 / 1024).toFixed(0)} MB`);
  }
  await runtime.settled();
  await runtime.snapshot();
  // Hands the index what it has not yet written; closing waits for the index's worker to write it all.
  runtime.searchIndex();
  await search!.close();
  const credentials = (userId: number): SeededUser => {
    const user = state.users.get(userId)!;
    return { email: user.email, key: user.apiKey, userId };
  };
  const written: Written = {
    owner: credentials(userIds[0]!),
    users: userIds.slice(1).map(credentials),
    small: { id: smallId, name: 'bench small', subscribers: smallIds.length },
    large: { id: channelId, name: 'bench large', subscribers: users },
    messageId,
  };
  await store.close();
  return written;
}

/** The scenarios by the short names `--only` takes. */
function scenarios(written: Written): Map<string, HttpScenario> {
  const context: MessageScenarioContext = { ...written, users: written.users.slice(0, -1) };
  const auth = { authorization: basicAuth(written.owner) };
  const [byId, newest] = messageReadScenarios(context);
  const [send1, send10, sendLarge, drafts, settings] = messageWriteScenarios(context);
  return new Map<string, HttpScenario>([
    ['me', { name: 'GET /users/me', method: 'GET', path: '/api/v1/users/me', headers: auth }],
    ['users', { name: `GET /users (${written.users.length + 1} users)`, method: 'GET', path: '/api/v1/users', headers: auth }],
    ['message', byId!],
    ['messages', newest!],
    ['send1', send1!],
    ['send10', send10!],
    ['sendlarge', sendLarge!],
    ['drafts', drafts!],
    ['settings', settings!],
    ['register', {
      name: `POST /register (${written.users.length + 1} users)`,
      method: 'POST',
      path: '/api/v1/register',
      headers: { authorization: basicAuth(written.users.at(-1)!) },
      body: formEncode({ event_types: ['realm_user'], fetch_event_types: ['realm'] }),
    }],
    // As a client loading for the first time registers: every fetch type (the user directory too), every event.
    ['registerall', {
      name: `POST /register (${written.users.length + 1} users, every fetch type)`,
      method: 'POST',
      path: '/api/v1/register',
      headers: { authorization: basicAuth(written.users.at(-1)!) },
      body: formEncode({ apply_markdown: MESSAGE_CLIENT.apply_markdown, client_gravatar: MESSAGE_CLIENT.client_gravatar, slim_presence: MESSAGE_CLIENT.slim_presence, client_capabilities: MESSAGE_CLIENT.client_capabilities }),
    }],
  ]);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      users: { type: 'string', default: '1000' },
      history: { type: 'string', default: '20000' },
      runs: { type: 'string', default: '3' },
      seconds: { type: 'string', default: '5' },
      only: { type: 'string' },
      fanout: { type: 'string' },
      'cpu-prof': { type: 'string' },
      gc: { type: 'string' },
      'socket-fanout': { type: 'string' },
      'fanout-rounds': { type: 'string' },
      'idle-queues': { type: 'string' },
      keep: { type: 'boolean', default: false },
      reuse: { type: 'string' },
    },
  });
  printEnvironment(environment(pinSelf()));
  if (values['fanout-rounds']) fanoutRounds = Number(values['fanout-rounds']);
  if (values.gc) {
    const rows = await measureGc(Number(values.users), values.gc.split(',').map(Number), Number(values.seconds), { keep: values.keep, reuse: values.reuse?.split(',') });
    console.log(`\nload average now ${loadAverage()}`);
    return printGc(rows);
  }
  const dir = makeTempDir('chat-hot-');
  let server: Child | null = null;
  try {
    const written = await writeDir(dir, values.users, Number(values.history));
    const all = scenarios(written);
    const names = values.only === 'none' ? [] : (values.only?.split(',') ?? [...all.keys()]);
    for (const name of names) if (!all.has(name)) throw new Error(`no scenario ${name}; there are ${[...all.keys()].join(', ')}`);
    server = await startServer(dir, values['cpu-prof'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', values['cpu-prof']]);
    const http = { seconds: Number(values.seconds), warmupSeconds: 1, connections: 16 };
    const raw: HttpMeasurement[] = [];
    const runs = new Map<string, HttpMeasurement[]>(names.map((name) => [name, []]));
    for (let run = 1; run <= (names.length ? Number(values.runs) : 0); run++) {
      const baseline = await startNode('raw-json', [await compiledProgram('bench/baselines/raw-json.ts')]);
      try {
        raw.push(await runHttp(baseline.url, baseline.pid, { name: 'raw', method: 'GET', path: '/' }, http));
        logRun('raw uWS JSON', run, raw.at(-1)!);
      } finally {
        await baseline.stop();
      }
      for (const name of names) {
        await waitForIdle(server.pid, 200);
        const measurement = await runHttp(server.url, server.pid, all.get(name)!, http);
        logRun(all.get(name)!.name, run, measurement);
        runs.get(name)!.push(measurement);
      }
    }
    const rows: Row[] = names.length ? [httpRow('raw uWS JSON (baseline)', raw, null), ...names.map((name) => httpRow(all.get(name)!.name, runs.get(name)!, raw))] : [];
    if (values.fanout) rows.push(...(await messageFanout(server, written, values.fanout.split(',').map(Number))));
    if (values['idle-queues']) await idleQueues(server, written, Number(values['idle-queues']));
    if (values['socket-fanout']) rows.push(...(await socketFanout(server, written, values['socket-fanout'].split(',').map(Number))));
    console.log(`\nload average now ${loadAverage()}`);
    printTable(rows);
  } finally {
    await server?.stop();
    removeTempDir(dir);
  }
}

async function writeDir(dir: string, users: string, history: number): Promise<Written> {
  const started = performance.now();
  const output = await runNode('hot-writer', [new URL(import.meta.url).pathname, 'write', dir, users, String(history)], writerTimeoutMs(history), {}, (line) => {
    if (line.startsWith('  writer:')) console.log(line);
  });
  const written = JSON.parse(output.slice(output.lastIndexOf(WRITER_MARK) + WRITER_MARK.length).split('\n')[0]!) as Written;
  writeFileSync(join(dir, WRITTEN_FILE), JSON.stringify(written));
  console.log(`Wrote ${written.users.length + 1} users and ${history} messages in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return written;
}

async function startServer(dir: string, nodeFlags: string[] = []): Promise<Child> {
  const args = await measuredServerArgs(['serve', '--port', '0', '--data-dir', dir]);
  return startNode('server', [...nodeFlags, ...args], { CHAT_RATE_LIMIT: 'off', CHAT_LOG_LEVEL: 'warn' }, 300_000);
}

/** The GC row at one history size (deliverable 6). */
export interface GcRow {
  stored: number;
  /** spawn to listening, the directory written beforehand (its search index included) */
  bootSeconds: number;
  heapMB: number;
  sendP50Ms: number;
  sendP99Ms: number;
  serverCpuUsPerSend: number;
  collections: number;
  gcMs: number;
  longestPauseMs: number;
  longestPauseKind: string;
}

/** Where a directory written by `writeDir` keeps what was written (the users' keys, the channels), for `--reuse`. */
const WRITTEN_FILE = 'hot-written.json';

/**
 * Send latency at a moderate load (one client sending one message at a time to the 10-subscriber channel)
 * over each history size, with the longest garbage-collection pause of the run (heap-probe.ts). Each size's
 * directory is written first (`users` users and the history in one topic), then booted.
 */
export async function measureGc(users: number, sizes: number[], seconds: number, dirs: { keep?: boolean; reuse?: string[] } = {}): Promise<GcRow[]> {
  const rows: GcRow[] = [];
  for (const [i, history] of sizes.entries()) {
    const reused = dirs.reuse?.[i];
    // Kept directories are not the bench's temporary ones, which an interrupted run removes.
    const dir = reused ?? (dirs.keep ? mkdtempSync(join(tmpdir(), 'chat-hot-gc-')) : makeTempDir('chat-hot-gc-'));
    let server: Child | null = null;
    try {
      const written = reused ? (JSON.parse(readFileSync(join(dir, WRITTEN_FILE), 'utf8')) as Written) : await writeDir(dir, String(users), history);
      const booting = performance.now();
      server = await startServer(dir);
      const bootSeconds = (performance.now() - booting) / 1000;
      const before = await settledMemory(server);
      const measurement = await runHttp(server.url, server.pid, scenarios(written).get('send1')!, { seconds, warmupSeconds: 1, connections: 1 });
      const after = await probeMemory(server);
      const row: GcRow = {
        stored: history,
        bootSeconds,
        heapMB: before.heapUsed / 1024 / 1024,
        sendP50Ms: measurement.p50Ms,
        sendP99Ms: measurement.p99Ms,
        serverCpuUsPerSend: measurement.serverCpuUsPerRequest,
        collections: after.gcCount ?? 0,
        gcMs: after.gcTotalMs ?? 0,
        longestPauseMs: after.gcMaxMs ?? 0,
        longestPauseKind: after.gcMaxKind ?? '',
      };
      console.log(gcLine(row));
      rows.push(row);
    } finally {
      await server?.stop();
      if (reused || dirs.keep) console.log(`Kept ${dir} (${history} messages): --reuse it`);
      else removeTempDir(dir);
    }
  }
  return rows;
}

export function gcLine(row: GcRow): string {
  return (
    `${row.stored} messages stored (boot ${row.bootSeconds.toFixed(1)} s, heap ${row.heapMB.toFixed(0)} MB): send p50 ${row.sendP50Ms.toFixed(2)} ms, ` +
    `p99 ${row.sendP99Ms.toFixed(2)} ms, ${row.serverCpuUsPerSend.toFixed(0)} us of server CPU per send; ` +
    `${row.collections} collections, ${row.gcMs.toFixed(0)} ms in all, longest pause ${row.longestPauseMs.toFixed(1)} ms (${row.longestPauseKind})`
  );
}

/** The GC rows and the target's ratio: the largest history's send p99 over the smallest's (at most 1.5). */
export function printGc(rows: GcRow[]): void {
  console.log('\nGarbage collection over the history (send to 10 subscribers, one at a time)');
  for (const row of rows) console.log(`  ${gcLine(row)}`);
  if (rows.length < 2) return;
  const [first, last] = [rows[0]!, rows.at(-1)!];
  console.log(`  send p99 at ${last.stored} over ${first.stored}: ${(last.sendP99Ms / first.sendP99Ms).toFixed(2)}x (target at most 1.5x)`);
}

/**
 * Memory per idle queue, as the full bench measures it (suite.ts): `count` queues registered as there, spread
 * over the users, each figure after a full collection; the queues are deleted afterwards.
 */
async function idleQueues(server: Child, written: Written, count: number): Promise<void> {
  const api = new Api(server.url);
  const before = await settledMemory(server);
  const queues = await registerQueues(api, written.users.slice(0, -1), count);
  const after = await settledMemory(server);
  console.log(
    `${count} idle queues: ${((after.heapUsed - before.heapUsed) / count).toFixed(0)} B heap, ` +
      `${((after.rssAnon - before.rssAnon) / count).toFixed(0)} B anonymous RSS per queue ` +
      `(heap ${(before.heapUsed / 1024 / 1024).toFixed(1)} -> ${(after.heapUsed / 1024 / 1024).toFixed(1)} MB)`,
  );
  await deleteQueues(api, queues);
}

/**
 * The full bench's message fan-out rows (`npm run bench`): an organization of `users` written as above (1,000
 * users in seconds, where the suite seeds its own over HTTP), the compiled server booted on it, then message
 * fan-out by long-poll and by WebSocket at each N, each after its raw baseline of the same N and answer size.
 */
export async function runMessageFanouts(users: number, sizes: number[], rounds: number): Promise<Row[]> {
  fanoutRounds = rounds;
  const dir = makeTempDir('chat-bench-fanout-');
  let server: Child | null = null;
  try {
    console.log(`\nMessage fan-out: writing ${users + 1} users to ${dir}`);
    const written = await writeDir(dir, String(users), 1000);
    server = await startServer(dir);
    return [...(await messageFanout(server, written, sizes)), ...(await socketFanout(server, written, sizes))];
  } finally {
    await server?.stop();
    removeTempDir(dir);
  }
}

/** Message fan-out at each N (largest first), each after the raw long-poll baseline of the same N and answer size. */
async function messageFanout(server: Child, written: Written, sizes: number[]): Promise<Row[]> {
  const api = new Api(server.url);
  const members = written.users.slice(0, -1);
  const bytes = await answerBytes(api, written);
  const started = performance.now();
  const queues = await registerQueues(api, members, Math.max(...sizes), MESSAGE_CLIENT);
  console.log(`Registered ${queues.length} message queues in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const rows: Row[] = [];
  for (const n of [...sizes].sort((a, b) => b - a)) {
    if (queues.length > n) await deleteQueues(api, queues.splice(n));
    await waitForIdle(server.pid, 200);
    const baseline = await startNode('raw-longpoll', [await compiledProgram('bench/baselines/raw-longpoll.ts'), '--bytes', String(bytes)]);
    let raw;
    try {
      raw = await runFanout(rawTarget(baseline.port, baseline.pid), n, fanoutOptions(n));
    } finally {
      await baseline.stop();
    }
    logFanout(raw);
    const result = await runFanout(messageTarget(server.port, server.pid, queues, written.owner, written.large.id), n, fanoutOptions(n));
    logFanout(result);
    rows.push(fanoutRow(`message fanout ${n} raw uWS (baseline, ${bytes} B)`, raw, null), fanoutRow(`message fanout ${n} server`, result, raw));
  }
  await deleteQueues(api, queues);
  return rows;
}

/** The size of one message event's answer, on a queue of its own made and removed before the measured ones. */
async function answerBytes(api: Api, written: Written): Promise<number> {
  const [probe] = await registerQueues(api, written.users.slice(0, -1), 1, MESSAGE_CLIENT);
  await api.ok('POST', '/messages', { type: 'stream', to: String(written.large.id), topic: 'bench fanout', content: MESSAGE_TEXT }, written.owner);
  const polled = await api.call('GET', '/events', { queue_id: probe!.queueId, last_event_id: -1, dont_block: true }, probe!.user);
  await deleteQueues(api, [probe!]);
  return JSON.stringify(polled.body).length;
}

/**
 * WebSocket fan-out at each N (largest first): the same queues as `messageFanout`, each attached to a socket
 * (GET /api/v1/events/socket), after the raw uWS publish baseline of the same N and frame size.
 */
async function socketFanout(server: Child, written: Written, sizes: number[]): Promise<Row[]> {
  const api = new Api(server.url);
  const bytes = await answerBytes(api, written);
  const queues = await registerQueues(api, written.users.slice(0, -1), Math.max(...sizes), MESSAGE_CLIENT);
  const sender = messageTarget(server.port, server.pid, queues, written.owner, written.large.id);
  const rows: Row[] = [];
  for (const n of [...sizes].sort((a, b) => b - a)) {
    if (queues.length > n) await deleteQueues(api, queues.splice(n));
    await waitForIdle(server.pid, 200);
    const baseline = await startNode('raw-websocket', [await compiledProgram('bench/baselines/raw-websocket.ts'), '--bytes', String(bytes)]);
    let raw;
    try {
      raw = await runWsFanout({
        label: 'raw',
        port: baseline.port,
        pid: baseline.pid,
        socket: () => ({ url: `ws://127.0.0.1:${baseline.port}/socket`, headers: {} }),
        isDelivery: () => true,
        trigger: () => rawTarget(baseline.port, baseline.pid).trigger(0),
      }, n, fanoutOptions(n));
    } finally {
      await baseline.stop();
    }
    logFanout(raw);
    const result = await runWsFanout({
      label: 'server',
      port: server.port,
      pid: server.pid,
      socket: (i) => ({
        url: `ws://127.0.0.1:${server.port}/api/v1/events/socket?queue_id=${queues[i]!.queueId}&last_event_id=-1`,
        headers: { Authorization: basicAuth(queues[i]!.user) },
      }),
      isDelivery: (frame) => frame.includes('"type":"message"'),
      trigger: (round) => sender.trigger(round),
    }, n, fanoutOptions(n));
    logFanout(result);
    rows.push(fanoutRow(`socket fanout ${n} raw uWS (baseline, ${bytes} B)`, raw, null), fanoutRow(`socket fanout ${n} server`, result, raw));
  }
  await deleteQueues(api, queues);
  return rows;
}

const [, , command, ...rest] = process.argv;
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (command === 'write') {
    const [dir, users, history] = rest;
    const written = await write(dir!, Number(users), Number(history));
    // Exits once the line is written: a pipe takes it in parts, and at 10,000 users it is 900 KB.
    process.stdout.write(`${WRITER_MARK}${JSON.stringify(written)}\n`, () => process.exit(0));
  } else {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => (killAll(), process.exit(130)));
    process.on('exit', killAll);
    await main()
      .catch((error: unknown) => {
        console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        process.exitCode = 1;
      })
      .finally(async () => {
        await stopAll();
        process.exit();
      });
  }
}
