import { basicAuth, type Credentials } from './lib/api.ts';
import { CpuTally, waitForIdle } from './lib/proc.ts';
import { openConnection, openConnections, requestText, type RawConnection, type RawResponse } from './lib/raw-http.ts';
import { max, median, percentile } from './lib/stats.ts';
import type { RegisteredQueue } from './seed.ts';

/**
 * The fan-out harness: N long-polls, each on its own keep-alive connection, all held by the target; one
 * trigger; for every poll the time from sending the trigger to reading its complete answer. Run against the
 * chat server (queues registered beforehand, an update of a user's name as the trigger) and against the raw
 * uWS long-poll baseline with the same N.
 */
export interface FanoutTarget {
  label: string;
  port: number;
  pid: number;
  /** the poll request for connection i, for this round */
  pollRequest(i: number): string;
  /** checks connection i's answer and advances its state; returns what is wrong, or null */
  accept(i: number, response: RawResponse): string | null;
  /**
   * Sends the trigger on a connection of its own (opened first: uWS closes connections idle for 10 s) and
   * resolves with when it was sent and its answer.
   */
  trigger(round: number): Promise<{ sentAt: number; response: RawResponse }>;
}

export interface RoundResult {
  /** the first poll's completion: how long before anything is delivered */
  firstMs: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** polls completed per second: N over the time to the last completion */
  deliveriesPerSecond: number;
  /** when the trigger's own answer arrived */
  triggerAckMs: number;
  errors: number;
  /** polls answered before the trigger (they were not held) */
  early: number;
}

export interface FanoutResult {
  target: string;
  n: number;
  rounds: RoundResult[];
  /** medians over the measured rounds */
  firstMs: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  deliveriesPerSecond: number;
  triggerAckMs: number;
  errors: number;
  serverCpuSeconds: number;
  benchCpuSeconds: number;
  serverCpuUsPerDelivery: number;
  /** the part of it on the target's main thread */
  serverMainThreadUsPerDelivery: number;
}

export interface FanoutOptions {
  rounds: number;
  /** rounds run first and not counted */
  warmupRounds: number;
  /** how long one round may take to complete every poll */
  roundTimeoutMs: number;
}

/** Runs the harness against a target and closes every connection it opened, whatever happens. */
export async function runFanout(target: FanoutTarget, n: number, options: FanoutOptions): Promise<FanoutResult> {
  const connections = await openConnections(target.port, n);
  try {
    const rounds: RoundResult[] = [];
    const cpu = new CpuTally(target.pid);
    let errors = 0;
    for (let r = 0; r < options.warmupRounds + options.rounds; r++) {
      const measured = r >= options.warmupRounds;
      const start = cpu.mark();
      const result = await runRound(target, connections, r, options.roundTimeoutMs);
      // Warm-up rounds count here too: a target that fails from the start must not look clean.
      errors += result.errors;
      if (measured) {
        cpu.add(start);
        rounds.push(result);
      }
      if (result.errors > 0 && result.errors === n) break;
    }
    return summarizeRounds(target.label, n, rounds, errors, cpu);
  } finally {
    for (const connection of connections) connection.close();
  }
}

async function runRound(target: FanoutTarget, connections: RawConnection[], round: number, timeoutMs: number): Promise<RoundResult> {
  const n = connections.length;
  const responses: (RawResponse | undefined)[] = new Array(n);
  let triggered = false;
  let count = 0;
  let early = 0;
  let allDone: () => void = () => {};
  const done = new Promise<void>((resolve) => (allDone = resolve));
  connections.forEach((connection, i) => {
    connection.onResponse = (response) => {
      if (!triggered) early++;
      responses[i] = response;
      if (++count === n) allDone();
    };
  });
  for (let i = 0; i < n; i++) connections[i]!.send(target.pollRequest(i));

  // Held means the target has read and handled every poll: its main thread has gone quiet.
  await waitForIdle(target.pid);
  triggered = true;
  const { sentAt, response: ack } = await target.trigger(round);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
  await Promise.race([done, timeout]);
  clearTimeout(timer);

  const latencies: number[] = [];
  let errors = 0;
  for (let i = 0; i < n; i++) {
    const response = responses[i];
    const problem = response ? target.accept(i, response) : 'no answer';
    if (problem !== null || !response || response.at < sentAt) {
      errors++;
      if (errors <= 3) console.error(`  ${target.label} poll ${i}: ${problem ?? 'answered before the trigger'}`);
      continue;
    }
    latencies.push(response.at - sentAt);
  }
  if (count < n) {
    // Polls still outstanding would answer into the next round: this connection set cannot go on.
    const closed = connections.filter((connection) => connection.error !== null);
    throw new Error(
      `${target.label}: only ${count} of ${n} polls completed within ${timeoutMs} ms` +
        (closed.length ? `; ${closed.length} connections failed, e.g. ${closed[0]!.error!.message}` : ''),
    );
  }
  const last = max(latencies);
  return {
    firstMs: percentile(latencies, 0),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: last,
    deliveriesPerSecond: latencies.length / (last / 1000),
    triggerAckMs: ack.at - sentAt,
    errors,
    early,
  };
}

/** Opens a connection, sends one request on it at once, and closes it after the answer. */
/** The medians of a fan-out's measured rounds, and CPU per delivery over all of them (long-poll and WebSocket alike). */
export function summarizeRounds(
  label: string,
  n: number,
  rounds: RoundResult[],
  errors: number,
  cpu: CpuTally,
): FanoutResult {
  const deliveries = rounds.length * n;
  return {
    target: label,
    n,
    rounds,
    firstMs: median(rounds.map((round) => round.firstMs)),
    p50Ms: median(rounds.map((round) => round.p50Ms)),
    p99Ms: median(rounds.map((round) => round.p99Ms)),
    maxMs: median(rounds.map((round) => round.maxMs)),
    deliveriesPerSecond: median(rounds.map((round) => round.deliveriesPerSecond)),
    triggerAckMs: median(rounds.map((round) => round.triggerAckMs)),
    errors,
    serverCpuSeconds: cpu.serverCpu,
    benchCpuSeconds: cpu.benchCpu,
    serverCpuUsPerDelivery: deliveries > 0 ? (cpu.serverCpu * 1e6) / deliveries : NaN,
    serverMainThreadUsPerDelivery: deliveries > 0 ? (cpu.serverMain * 1e6) / deliveries : NaN,
  };
}

export async function sendOnce(port: number, text: string): Promise<{ sentAt: number; response: RawResponse }> {
  const connection = await openConnection(port);
  try {
    const sentAt = performance.now();
    return { sentAt, response: await connection.request(text) };
  } finally {
    connection.close();
  }
}

/** The chat server as a fan-out target: GET /events on registered queues; PATCH a user's name to trigger. */
export function serverTarget(
  port: number,
  pid: number,
  queues: readonly RegisteredQueue[],
  owner: Credentials,
  renamedUserId: number,
): FanoutTarget {
  const headers = queues.map((queue) => ({ Authorization: basicAuth(queue.user) }));
  return {
    label: 'server',
    port,
    pid,
    pollRequest: (i) =>
      requestText('GET', `/api/v1/events?queue_id=${queues[i]!.queueId}&last_event_id=${queues[i]!.lastEventId}`, port, headers[i]!),
    accept(i, response) {
      if (response.status !== 200) return `status ${response.status}: ${response.body.toString().slice(0, 200)}`;
      const body = JSON.parse(response.body.toString()) as { events?: { id: number; type: string }[] };
      const events = body.events ?? [];
      if (!events.some((event) => event.type === 'realm_user')) return `no realm_user event in ${response.body.toString().slice(0, 200)}`;
      queues[i]!.lastEventId = Math.max(...events.map((event) => event.id));
      return null;
    },
    async trigger(round) {
      const body = `full_name=${encodeURIComponent(`Bench Fanout ${round} ${Date.now()}`)}`;
      const sent = await sendOnce(port, requestText('PATCH', `/api/v1/users/${renamedUserId}`, port, { Authorization: basicAuth(owner) }, body));
      if (sent.response.status !== 200) throw new Error(`trigger answered ${sent.response.status}: ${sent.response.body.toString()}`);
      return sent;
    },
  };
}

/**
 * The chat server as a fan-out target of message events: GET /events on queues registered for `message`
 * by subscribers of `channel`; the owner's POST /messages to it triggers (each answer carries the message
 * with its flags, rendered for the queue's capabilities).
 */
export function messageTarget(port: number, pid: number, queues: readonly RegisteredQueue[], owner: Credentials, channelId: number): FanoutTarget {
  const rename = serverTarget(port, pid, queues, owner, 0);
  return {
    ...rename,
    label: 'server',
    accept(i, response) {
      if (response.status !== 200) return `status ${response.status}: ${response.body.toString().slice(0, 200)}`;
      const events = (JSON.parse(response.body.toString()) as { events?: { id: number; type: string }[] }).events ?? [];
      if (!events.some((event) => event.type === 'message')) return `no message event in ${response.body.toString().slice(0, 200)}`;
      queues[i]!.lastEventId = Math.max(...events.map((event) => event.id));
      return null;
    },
    async trigger(round) {
      const body = `type=stream&to=${channelId}&topic=${encodeURIComponent('bench fanout')}&content=${encodeURIComponent(`Fan-out round ${round}: the quick brown fox jumps over the **lazy** dog.`)}`;
      const sent = await sendOnce(port, requestText('POST', '/api/v1/messages', port, { Authorization: basicAuth(owner) }, body));
      if (sent.response.status !== 200) throw new Error(`trigger answered ${sent.response.status}: ${sent.response.body.toString()}`);
      return sent;
    },
  };
}

/** The raw uWS long-poll baseline as a fan-out target: any GET is held, a POST completes them all. */
export function rawTarget(port: number, pid: number): FanoutTarget {
  const poll = requestText('GET', '/poll', port, {});
  return {
    label: 'raw',
    port,
    pid,
    pollRequest: () => poll,
    accept: (_i, response) => (response.status === 200 ? null : `status ${response.status}`),
    async trigger() {
      const sent = await sendOnce(port, requestText('POST', '/trigger', port, {}, 'go'));
      if (sent.response.status !== 200) throw new Error(`raw trigger answered ${sent.response.status}`);
      return sent;
    },
  };
}
