import autocannon from 'autocannon';
import { cpuSeconds, mainThreadCpuSeconds, selfCpuSeconds } from './lib/proc.ts';
import { percentile } from './lib/stats.ts';

export interface HttpScenario {
  name: string;
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  headers?: Record<string, string>;
  /** form-encoded */
  body?: string;
  /**
   * Requests that differ per connection (autocannon's `setupClient`): called once for every connection of
   * every autocannon invocation (warm-up included), it gives that connection's headers (added to `headers`)
   * and the body of each of its requests in turn. A connection has one request in flight at a time, so a
   * connection that acts as its own user sees its requests applied in order.
   */
  perConnection?: () => { headers: Record<string, string>; body(): string };
  /** instead of the run's connection count: 1 makes a client that waits for each answer (latency unloaded) */
  connections?: number;
}

export interface HttpOptions {
  seconds: number;
  warmupSeconds: number;
  connections: number;
}

export interface HttpMeasurement {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** non-2xx answers plus connection errors and timeouts */
  errors: number;
  requests: number;
  serverCpuSeconds: number;
  benchCpuSeconds: number;
  /** server CPU microseconds per request: the fair figure when the load generator saturates first */
  serverCpuUsPerRequest: number;
  /** the part of it on the server's main thread (the event loop); the rest is GC helpers and the LMDB writer */
  serverMainThreadUsPerRequest: number;
  /** requests per second one server core would sustain at that cost */
  requestsPerSecondPerCore: number;
}

/** autocannon's per-connection hook for a scenario with `perConnection`: headers once, a new body after each answer. */
function setupClient(scenario: HttpScenario, headers: Record<string, string>): ((client: autocannon.Client) => void) | undefined {
  const perConnection = scenario.perConnection;
  if (!perConnection) return undefined;
  return (client) => {
    const connection = perConnection();
    client.setHeadersAndBody({ ...headers, ...connection.headers, 'content-type': 'application/x-www-form-urlencoded' }, connection.body());
    // Runs before autocannon writes this connection's next request (pipelining 1), which then carries it.
    client.on('response', () => client.setBody(connection.body()));
  };
}

function cannon(url: string, scenario: HttpScenario, connections: number, seconds: number, latencies: number[] | null) {
  const headers: Record<string, string> = { ...scenario.headers };
  if (scenario.body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
  return new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${url}${scenario.path}`,
        method: scenario.method,
        headers,
        body: scenario.body,
        connections,
        duration: seconds,
        timeout: 10,
        setupClient: setupClient(scenario, headers),
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    // autocannon's own histogram keeps whole milliseconds; sub-millisecond latencies need the raw values.
    if (latencies) instance.on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
  });
}

/** One measured run of a scenario against a process (whose CPU time is read before and after). */
export async function runHttp(url: string, pid: number, scenario: HttpScenario, options: HttpOptions): Promise<HttpMeasurement> {
  if (options.warmupSeconds > 0) await cannon(url, scenario, scenario.connections ?? options.connections, options.warmupSeconds, null);
  const connections = scenario.connections ?? options.connections;
  const latencies: number[] = [];
  const serverBefore = cpuSeconds(pid);
  const mainBefore = mainThreadCpuSeconds(pid);
  const benchBefore = selfCpuSeconds();
  const result = await cannon(url, scenario, connections, options.seconds, latencies);
  const serverCpu = cpuSeconds(pid) - serverBefore;
  const mainCpu = mainThreadCpuSeconds(pid) - mainBefore;
  const benchCpu = selfCpuSeconds() - benchBefore;
  const requests = result.requests.total;
  const usPerRequest = requests > 0 ? (serverCpu * 1e6) / requests : NaN;
  return {
    requestsPerSecond: requests / result.duration,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    errors: result.non2xx + result.errors,
    requests,
    serverCpuSeconds: serverCpu,
    benchCpuSeconds: benchCpu,
    serverCpuUsPerRequest: usPerRequest,
    serverMainThreadUsPerRequest: requests > 0 ? (mainCpu * 1e6) / requests : NaN,
    requestsPerSecondPerCore: 1e6 / usPerRequest,
  };
}
