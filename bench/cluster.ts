/**
 * The cost of cluster mode (README, "A cluster"), against a single process in the same run.
 *
 *   npx tsx bench/cluster.ts [--sends 2000] [--sequential 300] [--concurrency 32]
 *   npm run bench -- --cluster    (and in full mode): the same, after the suite, in its results
 *
 * Starts the compiled server alone, then three nats-server processes as one JetStream cluster (R3, on
 * loopback) with three chat nodes, and sends channel messages: one at a time (the latency of a durable
 * send) and `concurrency` at a time (throughput, and the CPU seconds per send of the node that commits:
 * the single process, or the primary, whose records also go to the stream). Sends through a replica are
 * forwarded to the primary and answered once the replica applied them. Last, the primary is killed
 * (SIGKILL) and the time until a send through a survivor succeeds is the failover time.
 *
 * The nodes share this machine's cores with the NATS servers and the load generator: the absolute figures
 * are this machine's, the ratios to the single process are what the bench compares.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { startNatsCluster } from '../test/helpers/nats.ts';
import { Api, mapLimit, readZuliprc, type Credentials } from './lib/api.ts';
import { serverProgram } from './lib/compiled.ts';
import { cpuSeconds, killAll, makeTempDir, removeTempDir, sleep, startNode, stopAll, type Child } from './lib/proc.ts';
import { median, percentile, round } from './lib/stats.ts';

export interface SendFigures {
  label: string;
  sequentialP50Ms: number;
  sequentialP99Ms: number;
  sendsPerSecond: number;
  /** CPU microseconds of the committing process (single process, or the primary) per send */
  cpuUsPerSend: number;
}

/** One user holds every queue of the delivery measurement: the per-user limit is raised for it. */
const ENV = { CHAT_MAX_QUEUES_PER_USER: '5000', CHAT_RATE_LIMIT: 'off', CHAT_OWNER_PASSWORD: 'bench-owner-Passw0rd-long', CHAT_LOG_LEVEL: 'warn', CHAT_SNAPSHOT_SECONDS: '3600', CHAT_STARTER_CHANNELS: '' };

async function measure(label: string, api: Api, owner: Credentials, committer: Child, options: { sends: number; sequential: number; concurrency: number }): Promise<SendFigures> {
  const send = (content: string) => api.ok('POST', '/messages', { type: 'stream', to: 'bench', topic: 'cluster', content }, owner);
  for (let i = 0; i < 50; i++) await send(`warm-up ${i}`);
  const latencies: number[] = [];
  for (let i = 0; i < options.sequential; i++) {
    const started = performance.now();
    await send(`one at a time ${i}`);
    latencies.push(performance.now() - started);
  }
  const cpuBefore = cpuSeconds(committer.pid);
  const started = performance.now();
  await mapLimit(Array.from({ length: options.sends }, (_, i) => i), options.concurrency, (i) => send(`concurrent ${i}`));
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuSeconds(committer.pid) - cpuBefore;
  return {
    label,
    sequentialP50Ms: round(median(latencies)),
    sequentialP99Ms: round(percentile(latencies, 99)),
    sendsPerSecond: Math.round(options.sends / seconds),
    cpuUsPerSend: Math.round((cpu / options.sends) * 1e6),
  };
}

export interface DeliveryFigures {
  label: string;
  deliveriesPerSecond: number;
  /** CPU microseconds per send of the primary, and per delivery of each node holding queues */
  primaryCpuUsPerSend: number;
  holders: string;
}

/**
 * Sends to a channel while `queues` event queues (of the sender, taking message events) live on the given
 * nodes: the deliveries per second, the primary's CPU per send, and each holding node's CPU per delivery.
 */
async function measureDeliveries(label: string, owner: Credentials, primary: Child, placement: { node: Child; name: string; queues: number }[], sends: number): Promise<DeliveryFigures> {
  const registered: { api: Api; queueId: string }[] = [];
  for (const { node, queues } of placement) {
    const api = new Api(node.url);
    const ids = await mapLimit(Array.from({ length: queues }), 16, () => api.ok('POST', '/register', { event_types: JSON.stringify(['message']) }, owner));
    for (const body of ids) registered.push({ api, queueId: body.queue_id as string });
  }
  const total = placement.reduce((sum, { queues }) => sum + queues, 0);
  const api = new Api(primary.url);
  const nodes = [primary, ...placement.map(({ node }) => node).filter((node) => node !== primary)];
  const before = nodes.map((node) => cpuSeconds(node.pid));
  const started = performance.now();
  await mapLimit(Array.from({ length: sends }, (_, i) => i), 16, (i) => api.ok('POST', '/messages', { type: 'stream', to: 'bench', topic: 'fan', content: `fan ${i}` }, owner));
  // Each holding node has delivered once its last queue holds the last send (it applies the stream on its own).
  for (const { node } of placement) {
    const nodeApi = new Api(node.url);
    const last = registered.filter((queue) => queue.api.baseUrl === node.url).at(-1)!;
    await until('the last delivery', async () => {
      const events = (await nodeApi.ok('GET', '/events', { queue_id: last.queueId, last_event_id: -1, dont_block: true }, owner)).events as { message?: { content: string } }[];
      return events.some((event) => event.message?.content.includes(`fan ${sends - 1}`)) ? true : null;
    });
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = nodes.map((node, i) => cpuSeconds(node.pid) - before[i]!);
  await mapLimit(registered, 16, ({ api: holder, queueId }) => holder.ok('DELETE', '/events', { queue_id: queueId }, owner));
  const holders = placement.map(({ node, name, queues }) => {
    const used = cpu[nodes.indexOf(node)]!;
    return `${name} (${queues} queues): ${Math.round((used / (sends * queues)) * 1e6 * 10) / 10} us/delivery`;
  });
  return {
    label,
    deliveriesPerSecond: Math.round((sends * total) / seconds),
    primaryCpuUsPerSend: Math.round((cpu[0]! / sends) * 1e6),
    holders: holders.join('; '),
  };
}

async function health(child: Child): Promise<{ cluster?: { role: string } } | null> {
  try {
    return (await (await fetch(`${child.url}/health`)).json()) as { cluster?: { role: string } };
  } catch {
    return null;
  }
}

async function until<T>(what: string, check: () => Promise<T | null>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

export interface ClusterOptions {
  sends: number;
  sequential: number;
  concurrency: number;
}

export interface ClusterResult {
  options: ClusterOptions;
  /** the single process first (the baseline), then the cluster's primary and a replica */
  sends: SendFigures[];
  fanoutSends: number;
  deliveries: DeliveryFigures[];
  failoverMs: number;
}

export const CLUSTER_DEFAULTS: ClusterOptions = { sends: 2000, sequential: 300, concurrency: 32 };

/** Whether nats-server can be started here (test/setup/system-packages.sh installs it). */
export function natsServerInstalled(): boolean {
  return spawnSync('nats-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** The single process, then three nodes over a three-server JetStream cluster: sends, deliveries, failover. */
export async function runCluster(options: ClusterOptions = CLUSTER_DEFAULTS): Promise<ClusterResult> {
  const server = await serverProgram();
  const dirs: string[] = [];
  const teardowns: (() => unknown)[] = [];
  const rows: SendFigures[] = [];
  try {
    // The single process: the baseline.
    const singleDir = makeTempDir('chat-bench-single-');
    dirs.push(singleDir);
    const single = await startNode('single', [server, 'serve', '--port', '0', '--data-dir', singleDir], ENV);
    const singleOwner = readZuliprc(join(singleDir, 'zuliprc'));
    const singleApi = new Api(single.url);
    await singleApi.ok('POST', '/users/me/subscriptions', { subscriptions: [{ name: 'bench' }] }, singleOwner);
    rows.push(await measure('single process', singleApi, singleOwner, single, options));
    await single.stop();

    // Three nodes over three NATS servers.
    const nats = await startNatsCluster({ teardown: (fn) => teardowns.push(fn) });
    const names = ['a', 'b', 'c'];
    const nodeDirs = names.map((name) => makeTempDir(`chat-bench-${name}-`));
    dirs.push(...nodeDirs);
    const nodes = await Promise.all(names.map((name, i) =>
      startNode(`node ${name}`, [server, 'serve', '--port', '0', '--data-dir', nodeDirs[i]!], { ...ENV, CHAT_CLUSTER: nats.urls.join(','), CHAT_NODE_ID: name })));
    const primaryIndex = await until('a primary', async () => {
      for (let i = 0; i < nodes.length; i++) {
        if ((await health(nodes[i]!))?.cluster?.role === 'primary' && existsSync(join(nodeDirs[i]!, 'zuliprc'))) return i;
      }
      return null;
    });
    const primary = nodes[primaryIndex]!;
    const replica = nodes[(primaryIndex + 1) % 3]!;
    const survivor = nodes[(primaryIndex + 2) % 3]!;
    const owner = readZuliprc(join(nodeDirs[primaryIndex]!, 'zuliprc'));
    await new Api(primary.url).ok('POST', '/users/me/subscriptions', { subscriptions: [{ name: 'bench' }] }, owner);
    rows.push(await measure('cluster, sent to the primary', new Api(primary.url), owner, primary, options));
    rows.push(await measure('cluster, sent to a replica (forwarded)', new Api(replica.url), owner, primary, options));

    // Deliveries: 1,000 queues on the primary, then on one replica, then split over both replicas.
    const fanout: DeliveryFigures[] = [];
    const fanSends = Math.max(100, Math.round(options.sends / 4));
    const name = (node: Child) => names[nodes.indexOf(node)]!;
    fanout.push(await measureDeliveries('no queues', owner, primary, [], fanSends));
    fanout.push(await measureDeliveries('1,000 queues on the primary', owner, primary, [{ node: primary, name: name(primary), queues: 1000 }], fanSends));
    fanout.push(await measureDeliveries('1,000 queues on one replica', owner, primary, [{ node: replica, name: name(replica), queues: 1000 }], fanSends));
    fanout.push(await measureDeliveries('1,000 queues split over two replicas', owner, primary, [
      { node: replica, name: name(replica), queues: 500 },
      { node: survivor, name: name(survivor), queues: 500 },
    ], fanSends));

    const killed = performance.now();
    primary.process.kill('SIGKILL');
    const survivorApi = new Api(survivor.url);
    await until('a write after the failover', async () => {
      const result = await survivorApi.call('POST', '/messages', { type: 'stream', to: 'bench', topic: 'cluster', content: 'after' }, owner).catch(() => null);
      return result?.status === 200 ? true : null;
    });
    const failoverMs = Math.round(performance.now() - killed);

    return { options, sends: rows, fanoutSends: fanSends, deliveries: fanout, failoverMs };
  } finally {
    await stopAll();
    for (const teardown of teardowns) await teardown();
    for (const dir of dirs) removeTempDir(dir);
  }
}

/** The cluster bench's tables, as `npm run bench` and `bench/cluster.ts` print them. */
export function printCluster(result: ClusterResult): void {
  console.log(`\nCluster bench (${result.options.sequential} sends one at a time, ${result.options.sends} with ${result.options.concurrency} in flight; NATS R3 on loopback)`);
  console.log('| how | p50 ms (one at a time) | p99 ms | sends/s (concurrent) | CPU us per send (committing node) |');
  console.log('|---|---|---|---|---|');
  for (const row of result.sends) console.log(`| ${row.label} | ${row.sequentialP50Ms} | ${row.sequentialP99Ms} | ${row.sendsPerSecond} | ${row.cpuUsPerSend} |`);
  console.log(`\nDeliveries (${result.fanoutSends} sends, 16 in flight, to a channel whose one member holds the queues)`);
  console.log('| queues | deliveries/s | primary CPU us per send | CPU per delivery of the nodes holding queues |');
  console.log('|---|---|---|---|');
  for (const row of result.deliveries) console.log(`| ${row.label} | ${row.deliveriesPerSecond} | ${row.primaryCpuUsPerSend} | ${row.holders || '-'} |`);
  const base = result.sends[0]!;
  const replicated = result.sends[1]!;
  console.log(`Replication cost per durable send: +${round(replicated.sequentialP50Ms - base.sequentialP50Ms)} ms latency (one at a time), ` +
    `+${replicated.cpuUsPerSend - base.cpuUsPerSend} us CPU at the primary; failover (SIGKILL of the primary to a write accepted): ${result.failoverMs} ms`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { sends: { type: 'string' }, sequential: { type: 'string' }, concurrency: { type: 'string' } } });
  runCluster({
    sends: Number(values.sends ?? CLUSTER_DEFAULTS.sends),
    sequential: Number(values.sequential ?? CLUSTER_DEFAULTS.sequential),
    concurrency: Number(values.concurrency ?? CLUSTER_DEFAULTS.concurrency),
  })
    .then(printCluster)
    .catch((error: unknown) => {
      console.error(error);
      killAll();
      process.exit(1);
    });
}
