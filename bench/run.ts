/**
 * The benchmark suite's entry point.
 *
 *   npm run bench                          full run (1,000 users, fan-out to 10,000 and 1,000 polls, 3 runs each,
 *                                          message fan-out by long-poll and WebSocket to 10,000 and 1,000,
 *                                          recovery of 1,000,000 messages, search over 1,000,000, GC with
 *                                          100,000 and 1,000,000 stored), ending with issue 17's targets
 *   npm run bench -- --quick               a few minutes (50 users, fan-out to 1,000, 1 run each, message fan-out to
 *                                          1,000, recovery of 50,000, search over 50,000, GC with 10,000 and 100,000 stored)
 *   npm run bench -- --quick --cluster     with the cluster bench (cluster.ts), which a full run includes
 *   npm run bench -- --compare A.json B.json
 *   npm run bench -- --targets A.json      issue 17's targets table of an earlier run
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { environment, loadAverage, printEnvironment } from './lib/env.ts';
import { killAll, pinSelf, stopAll } from './lib/proc.ts';
import { runRecovery } from './recovery.ts';
import { runSearch } from './search.ts';
import { measureGc, printGc, runMessageFanouts } from './hot.ts';
import { CLUSTER_DEFAULTS, natsServerInstalled, printCluster, runCluster } from './cluster.ts';
import { compare, printMemory, printMessageMemory, printRecovery, printTable, writeResults, type Results } from './report.ts';
import { printTargets } from './targets.ts';
import { FULL, QUICK, runSuite } from './suite.ts';

const HELP = `Usage: npm run bench -- [--quick] [--cluster] | --compare A.json B.json | --targets A.json

Starts the chat server and the raw uWS baselines as their own processes (pinned to CPU 0, this load
generator to CPU 1 when taskset is there), seeds users and channels, runs the HTTP scenarios with autocannon
and the fan-out harness, measures memory per queue, user and message, then writes a data directory of many
messages and times the server's boot on it. A full run (or --cluster) ends with the cluster bench (three
nats-server processes and three nodes, after a single process in the same run; skipped without nats-server).
Prints one table and writes bench/results/<timestamp>.json.`;

/** The cluster bench's sizes in a quick run with --cluster (a full run takes CLUSTER_DEFAULTS). */
const QUICK_CLUSTER = { sends: 400, sequential: 100, concurrency: 32 };

/** Headroom beyond the polls themselves: the trigger, autocannon, stdio, the LMDB files. */
const SPARE_FILES = 200;

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: { quick: { type: 'boolean' }, cluster: { type: 'boolean' }, compare: { type: 'boolean' }, targets: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
  });
  if (values.help) return void console.log(HELP);
  if (values.compare) {
    if (positionals.length !== 2) throw new Error('--compare needs two result files');
    return compare(positionals[0]!, positionals[1]!);
  }
  if (values.targets) {
    if (positionals.length !== 1) throw new Error('--targets needs one result file');
    return printTargets(JSON.parse(readFileSync(positionals[0]!, 'utf8')) as Results);
  }
  const settings = values.quick ? QUICK : FULL;
  const startedAt = new Date().toISOString();
  const env = environment(pinSelf());
  printEnvironment(env);
  const needed = Math.max(...settings.fanoutSizes) + SPARE_FILES;
  if (env.openFilesLimit < needed) {
    throw new Error(`ulimit -n is ${env.openFilesLimit}; the fan-out needs ${needed} open files (raise it in your shell)`);
  }
  console.log(`Mode: ${settings.mode}\n`);
  const began = performance.now();
  const output = await runSuite(settings);
  const { users, sizes, rounds } = settings.messageFanout;
  output.rows.push(...(await runMessageFanouts(users, sizes, rounds)));
  // Last, on its own: no other server runs while the recovery directory is written and booted.
  const recovery = await runRecovery(settings.recovery);
  const search = await runSearch(settings.search.messages, settings.search.requests);
  const gc = await measureGc(settings.gc.users, settings.gc.sizes, settings.gc.seconds);
  // Last: seven processes of its own (three NATS servers, the single process, three nodes).
  const withCluster = values.cluster === true || settings.mode === 'full';
  const installed = withCluster && natsServerInstalled();
  const cluster = installed ? await runCluster(settings.mode === 'full' ? CLUSTER_DEFAULTS : QUICK_CLUSTER) : null;
  console.log(
    `\nResults (${settings.mode}, ${settings.runs} run(s) per HTTP scenario, medians; ` +
      `${((performance.now() - began) / 1000).toFixed(0)} s; load average now ${loadAverage()})`,
  );
  printTable(output.rows);
  printMemory(output.memory);
  printMessageMemory(output.memory.messages);
  printRecovery(recovery);
  console.log(`\nSearch (${settings.search.messages} messages; ms as the client saw them)`);
  for (const row of search) console.log(`  ${row.label}: p50 ${row.p50}, p99 ${row.p99}, max ${row.max} (${row.count} requests)`);
  printGc(gc);
  if (cluster) printCluster(cluster);
  else if (withCluster) console.log('\nCluster bench skipped: no nats-server here (apt-get install nats-server)');
  const results: Results = { format: 1, startedAt, mode: settings.mode, environment: env, ...output, recovery, search, gc, cluster };
  printTargets(results);
  console.log(`\nWrote ${writeResults(results)}`);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killAll();
    process.exit(130);
  });
}
process.on('exit', killAll);

main()
  .catch(async (error: unknown) => {
    console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exitCode = 1;
  })
  .finally(async () => {
    await stopAll();
    // autocannon and undici keep-alive sockets would hold the event loop open.
    process.exit();
  });
