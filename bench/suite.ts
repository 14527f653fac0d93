import { join } from 'node:path';
import { runFanout, rawTarget, serverTarget, type FanoutOptions, type FanoutResult } from './fanout.ts';
import { runHttp, type HttpMeasurement, type HttpOptions, type HttpScenario } from './http.ts';
import { Api, basicAuth, formEncode, readZuliprc, type Credentials } from './lib/api.ts';
import { compiledProgram, measuredServerArgs } from './lib/compiled.ts';
import { idleCpuMsPerSecond, makeTempDir, removeTempDir, settledMemory, startNode, waitForIdle, type Child } from './lib/proc.ts';
import { median, round } from './lib/stats.ts';
import type { Memory, Row } from './report.ts';
import { measureMessageMemory, messageReadScenarios, messageWriteScenarios, seedChannel, type MessageScenarioContext } from './messages.ts';
import type { RecoveryOptions } from './recovery.ts';
import { deleteQueues, registerQueues, seedUsers, type RegisteredQueue, type SeededUser } from './seed.ts';

export interface Settings {
  mode: 'quick' | 'full';
  users: number;
  http: HttpOptions;
  /** runs of each HTTP scenario; the table shows medians */
  runs: number;
  /** long-poll counts, largest first: the extra queues are deleted before each smaller one */
  fanoutSizes: number[];
  fanout: FanoutOptions;
  /** subscribers of the two channels POST /messages sends to (capped by the users there are) */
  channelSizes: [small: number, large: number];
  /** messages stored for the memory-per-message figure (they also make the history GET /messages reads) */
  memoryMessages: number;
  recovery: RecoveryOptions;
  /** the search narrows' history (search.ts) */
  search: { messages: number; requests: number };
  /**
   * The GC row (hot.ts's measureGc): send latency over two history sizes, each written and booted. The
   * target's sizes, 100,000 and 10,000,000, take about half an hour here (bench/README.md has the command).
   */
  gc: { users: number; sizes: number[]; seconds: number };
  /** message fan-out by long-poll and WebSocket (hot.ts's runMessageFanouts), on an organization of `users` written in-process */
  messageFanout: { users: number; sizes: number[]; rounds: number };
}

export const QUICK: Settings = {
  mode: 'quick',
  users: 50,
  http: { seconds: 2, warmupSeconds: 0.5, connections: 16 },
  runs: 1,
  fanoutSizes: [1000],
  fanout: { rounds: 5, warmupRounds: 1, roundTimeoutMs: 30_000 },
  // With 50 users the large channel holds all 51: seeding 1,000 users (scrypt) alone takes 80-100 s.
  channelSizes: [10, 1000],
  memoryMessages: 2000,
  recovery: { messages: 50_000, logTailShare: 0.1, writeTimeoutMs: 120_000, bootTimeoutMs: 60_000 },
  search: { messages: 50_000, requests: 50 },
  gc: { users: 50, sizes: [10_000, 100_000], seconds: 5 },
  messageFanout: { users: 1000, sizes: [1000], rounds: 5 },
};

export const FULL: Settings = {
  mode: 'full',
  users: 1000,
  http: { seconds: 5, warmupSeconds: 1, connections: 16 },
  runs: 3,
  fanoutSizes: [10_000, 1000],
  fanout: { rounds: 10, warmupRounds: 1, roundTimeoutMs: 60_000 },
  channelSizes: [10, 1000],
  memoryMessages: 20_000,
  recovery: { messages: 1_000_000, logTailShare: 0.1, writeTimeoutMs: 900_000, bootTimeoutMs: 300_000 },
  search: { messages: 1_000_000, requests: 200 },
  gc: { users: 1000, sizes: [100_000, 1_000_000], seconds: 20 },
  messageFanout: { users: 1000, sizes: [10_000, 1000], rounds: 10 },
};

const OWNER_PASSWORD = 'bench-owner-Passw0rd-long';
const MB = 1024 * 1024;

export interface SuiteOutput {
  rows: Row[];
  memory: Memory;
  details: Record<string, unknown>;
}

const log = (line: string) => console.log(line);

/** Everything the bench measures, in an order that keeps the phases from disturbing each other. */
export async function runSuite(settings: Settings): Promise<SuiteOutput> {
  const details: Record<string, unknown> = {};
  const dataDir = makeTempDir('chat-bench-');
  let server: Child | null = null;
  try {
    log(`\nStarting the server on ${dataDir}`);
    // The first start makes the organization (hashing the owner's password): the empty figure is a reboot.
    server = await startServer(dataDir);
    await server.stop();
    server = await startServer(dataDir);
    const owner = readZuliprc(join(dataDir, 'zuliprc'));
    const empty = await settledMemory(server);
    const users = await seedUsers(new Api(server.url), owner, settings.users);
    // Seeding leaves scrypt's 16 MB buffers in the malloc arenas: the per-user figure compares two fresh
    // boots instead, of the empty and of the seeded directory. RSS figures leave out file mappings (RssAnon):
    // the LMDB map's pages count towards VmRSS as recovery reads them.
    await server.stop();
    server = await startServer(dataDir);
    const api = new Api(server.url);
    const seeded = await settledMemory(server);
    const idleQueues = Math.max(...settings.fanoutSizes);
    const queues = await registerQueues(api, users, idleQueues);
    const withQueues = await settledMemory(server);
    const idleCpu = await measureIdleCpu(server);
    const memory: Memory = {
      users: users.length,
      bytesPerUser: (seeded.rssAnon - empty.rssAnon) / users.length,
      heapBytesPerUser: (seeded.heapUsed - empty.heapUsed) / users.length,
      idleQueues,
      bytesPerIdleQueue: (withQueues.rssAnon - seeded.rssAnon) / idleQueues,
      heapBytesPerIdleQueue: (withQueues.heapUsed - seeded.heapUsed) / idleQueues,
      probes: { empty, seeded, withQueues },
      idleCpu,
    };
    log(
      `Registered ${idleQueues} idle queues: anonymous RSS ${round(seeded.rssAnon / MB)} -> ${round(withQueues.rssAnon / MB)} MB, ` +
        `heap ${round(seeded.heapUsed / MB)} -> ${round(withQueues.heapUsed / MB)} MB`,
    );
    const fanoutRows = await fanoutPhase(server, api, owner, users, queues, settings, details);
    // After the fan-out (its queues deleted): no queue takes message events while messages are stored.
    const context = await messagePhase(server, api, owner, users, settings, memory);
    const httpRows = await httpPhase(server, api, owner, users, context, settings, details);
    return { rows: [...httpRows, ...fanoutRows], memory, details };
  } finally {
    await server?.stop();
    removeTempDir(dataDir);
  }
}

async function startServer(dataDir: string): Promise<Child> {
  return startNode('server', await measuredServerArgs(['serve', '--port', '0', '--data-dir', dataDir]), {
    CHAT_RATE_LIMIT: 'off',
    // Seeding fetches 1,000 API keys by password from one address, which the anonymous limits (100 a minute
    // per address, 600 logins a minute in all) would refuse.
    CHAT_ANONYMOUS_LIMIT: 'off',
    CHAT_ANONYMOUS_GLOBAL_LIMIT: 'off',
    CHAT_LOG_LEVEL: 'warn',
    CHAT_OWNER_PASSWORD: OWNER_PASSWORD,
    // The scenarios make their own channels; a default channel every seeded user joined would change them.
    CHAT_STARTER_CHANNELS: '',
  });
}

/**
 * The two channels of the message scenarios, subscribed through the API, then the memory per stored
 * message, measured by storing the history that GET /messages reads.
 */
async function messagePhase(
  server: Child,
  api: Api,
  owner: Credentials,
  users: SeededUser[],
  settings: Settings,
  memory: Memory,
): Promise<MessageScenarioContext> {
  const [smallSize, largeSize] = settings.channelSizes;
  // The last user is kept out of both channels: POST /register runs as them (see httpPhase).
  const members = users.slice(0, -1);
  const small = await seedChannel(api, owner, members, 'bench small', smallSize);
  const large = await seedChannel(api, owner, members, 'bench large', Math.min(largeSize, members.length + 1));
  log(`Subscribed channels: ${small.name} (${small.subscribers} subscribers), ${large.name} (${large.subscribers} subscribers)`);
  memory.messages = await measureMessageMemory(server, owner, small, settings.memoryMessages);
  const newest = await api.ok('GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [{ operator: 'channel', operand: small.id }] }, owner);
  const messageId = Number((newest.messages as { id: number }[])[0]?.id);
  if (!Number.isInteger(messageId)) throw new Error(`no message in ${small.name} after the memory phase`);
  return { owner, users: members, small, large, messageId };
}

/** Seconds the idle server's CPU is read over, and the raw JSON baseline's beside it at the same time. */
const IDLE_SECONDS = 10;

async function measureIdleCpu(server: Child): Promise<NonNullable<Memory['idleCpu']>> {
  const raw = await startNode('raw-json', [await compiledProgram('bench/baselines/raw-json.ts')]);
  try {
    const [serverMsPerSecond, rawMsPerSecond] = await Promise.all([server.pid, raw.pid].map((pid) => idleCpuMsPerSecond(pid, IDLE_SECONDS * 1000)));
    log(`Idle CPU with the queues registered: server ${round(serverMsPerSecond!)} ms a second, raw uWS JSON ${round(rawMsPerSecond!)}`);
    return { serverMsPerSecond: serverMsPerSecond!, rawMsPerSecond: rawMsPerSecond!, seconds: IDLE_SECONDS };
  } finally {
    await raw.stop();
  }
}

/** One run of the raw JSON baseline, in a fresh process: no run carries state into the next. */
async function rawJsonRun(settings: Settings, run: number): Promise<HttpMeasurement> {
  const raw = await startNode('raw-json', [await compiledProgram('bench/baselines/raw-json.ts')]);
  try {
    const measurement = await runHttp(raw.url, raw.pid, { name: 'raw', method: 'GET', path: '/' }, settings.http);
    logRun('raw uWS JSON', run, measurement);
    return measurement;
  } finally {
    await raw.stop();
  }
}

/** Largest first, on the queues registered for the memory figure; raw baseline and server with the same N. */
async function fanoutPhase(
  server: Child,
  api: Api,
  owner: Credentials,
  users: SeededUser[],
  queues: RegisteredQueue[],
  settings: Settings,
  details: Record<string, unknown>,
): Promise<Row[]> {
  const rows: Row[] = [];
  for (const n of [...settings.fanoutSizes].sort((a, b) => b - a)) {
    // Every realm_user queue of the realm gets the trigger's event: only the polled ones may exist.
    if (queues.length > n) await deleteQueues(api, queues.splice(n));
    await waitForIdle(server.pid, 200);
    const raw = await startNode('raw-longpoll', [await compiledProgram('bench/baselines/raw-longpoll.ts')]);
    let rawResult: FanoutResult;
    try {
      rawResult = await runFanout(rawTarget(raw.port, raw.pid), n, settings.fanout);
    } finally {
      await raw.stop();
    }
    logFanout(rawResult);
    const serverResult = await runFanout(serverTarget(server.port, server.pid, queues, owner, users[0]!.userId), n, settings.fanout);
    logFanout(serverResult);
    details[`fanout ${n}`] = { raw: rawResult, server: serverResult };
    rows.push(fanoutRow(`fanout ${n} raw uWS (baseline)`, rawResult, null));
    rows.push(fanoutRow(`fanout ${n} server`, serverResult, rawResult));
  }
  await deleteQueues(api, queues.splice(0));
  return rows;
}

/**
 * Each run: the raw baseline in a fresh process, then every scenario against the server, so that the
 * baseline shares the machine's conditions of the moment (it is shared and noisy).
 */
async function httpPhase(
  server: Child,
  api: Api,
  owner: Credentials,
  users: SeededUser[],
  context: MessageScenarioContext,
  settings: Settings,
  details: Record<string, unknown>,
): Promise<Row[]> {
  const auth = { authorization: basicAuth(owner) };
  // Every POST /register leaves a queue behind (thousands per run), and the server resolves an event's
  // recipients by walking each recipient's queues, wanted event types or not: registering as the owner,
  // who sends every message, made each send cost more run after run (3,000 of the sender's realm_user
  // queues: 220 -> 1,170 us of CPU per send). A user in no channel, and no other scenario's user, registers.
  const registrant = users.at(-1)!;
  const registered = await api.ok('POST', '/register', { event_types: ['realm_user'], fetch_event_types: [] }, owner);
  const scenarios: HttpScenario[] = [
    { name: 'GET /users/me', method: 'GET', path: '/api/v1/users/me', headers: auth },
    { name: `GET /users (${users.length + 1} users)`, method: 'GET', path: '/api/v1/users', headers: auth },
    {
      name: 'GET /events dont_block',
      method: 'GET',
      path: `/api/v1/events?queue_id=${String(registered.queue_id)}&last_event_id=-1&dont_block=true`,
      headers: auth,
    },
    ...messageReadScenarios(context),
    ...messageWriteScenarios(context),
    // Last in each run: every register leaves a queue behind (collected after 10 idle minutes).
    {
      name: `POST /register (${users.length + 1} users)`,
      method: 'POST',
      path: '/api/v1/register',
      headers: { authorization: basicAuth(registrant) },
      body: formEncode({ event_types: ['realm_user'], fetch_event_types: ['realm'] }),
    },
  ];
  const rawRuns: HttpMeasurement[] = [];
  const runs = new Map<string, HttpMeasurement[]>(scenarios.map((scenario) => [scenario.name, []]));
  for (let run = 1; run <= settings.runs; run++) {
    rawRuns.push(await rawJsonRun(settings, run));
    for (const scenario of scenarios) {
      await waitForIdle(server.pid, 200);
      const measurement = await runHttp(server.url, server.pid, scenario, settings.http);
      logRun(scenario.name, run, measurement);
      runs.get(scenario.name)!.push(measurement);
    }
  }
  details['raw uWS JSON'] = rawRuns;
  for (const [name, measurements] of runs) details[name] = measurements;
  return [
    httpRow('raw uWS JSON (baseline)', rawRuns, null),
    ...scenarios.map((scenario) => httpRow(scenario.name, runs.get(scenario.name)!, rawRuns)),
  ];
}

export function httpRow(scenario: string, runs: HttpMeasurement[], baseline: HttpMeasurement[] | null): Row {
  const rps = median(runs.map((run) => run.requestsPerSecond));
  const usPerRequest = median(runs.map((run) => run.serverCpuUsPerRequest));
  return {
    scenario,
    rps,
    p50Ms: median(runs.map((run) => run.p50Ms)),
    p99Ms: median(runs.map((run) => run.p99Ms)),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    ratio: baseline === null ? null : rps / median(baseline.map((run) => run.requestsPerSecond)),
    perCoreRatio: baseline === null ? null : median(baseline.map((run) => run.serverCpuUsPerRequest)) / usPerRequest,
    serverCpuUsPerRequest: usPerRequest,
    serverMainThreadUsPerRequest: median(runs.map((run) => run.serverMainThreadUsPerRequest)),
    rpsPerCore: 1e6 / usPerRequest,
    runs: runs.length,
  };
}

export function fanoutRow(scenario: string, result: FanoutResult, baseline: FanoutResult | null): Row {
  return {
    scenario,
    rps: result.deliveriesPerSecond,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    errors: result.errors,
    ratio: baseline && result.p99Ms / baseline.p99Ms,
    perCoreRatio: baseline && baseline.serverCpuUsPerDelivery / result.serverCpuUsPerDelivery,
    serverCpuUsPerRequest: result.serverCpuUsPerDelivery,
    serverMainThreadUsPerRequest: result.serverMainThreadUsPerDelivery,
    rpsPerCore: 1e6 / result.serverCpuUsPerDelivery,
    runs: result.rounds.length,
  };
}

export function logRun(name: string, run: number, m: HttpMeasurement): void {
  log(
    `  ${name} run ${run}: ${round(m.requestsPerSecond)} req/s, p50 ${round(m.p50Ms)} ms, p99 ${round(m.p99Ms)} ms, ` +
      `errors ${m.errors}; CPU server ${m.serverCpuSeconds.toFixed(2)} s, bench ${m.benchCpuSeconds.toFixed(2)} s; ` +
      `${round(m.serverCpuUsPerRequest)} us/req (main thread ${round(m.serverMainThreadUsPerRequest)}) = ${round(m.requestsPerSecondPerCore)} req/s per server core`,
  );
}

export function logFanout(r: FanoutResult): void {
  log(
    `  fanout ${r.n} ${r.target}: first ${round(r.firstMs)} ms, p50 ${round(r.p50Ms)} ms, p99 ${round(r.p99Ms)} ms, max ${round(r.maxMs)} ms, ` +
      `${round(r.deliveriesPerSecond)} deliveries/s, trigger answered after ${round(r.triggerAckMs)} ms, errors ${r.errors} ` +
      `(medians of ${r.rounds.length} rounds); CPU ${r.target} ${r.serverCpuSeconds.toFixed(2)} s, bench ${r.benchCpuSeconds.toFixed(2)} s, ` +
      `${round(r.serverCpuUsPerDelivery)} us/delivery (main thread ${round(r.serverMainThreadUsPerDelivery)})`,
  );
}
