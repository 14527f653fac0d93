#!/usr/bin/env -S node --import tsx
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { startServer } from './app.ts';
import { configFrom, ConfigError, type Config } from './config.ts';
import { createLogger } from './log.ts';
import { claimDataDir } from './data-dir-lock.ts';
import { operatorCommands } from './operator.ts';

const COMMON_OPTIONS = {
  'data-dir': { type: 'string' },
  'log-level': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const SERVE_HELP = `Usage: npm start -- [options]      (or: chat-server serve [options])

Starts the chat server. Options win over the environment variables named beside them.
  --host HOST           address to listen on (CHAT_HOST, default 127.0.0.1)
  --port PORT           port to listen on, 0 for any free one (CHAT_PORT, default 9991)
  --data-dir DIR        LMDB data directory (CHAT_DATA_DIR, default ./data in the repository)
  --external-url URL    how clients reach the server (CHAT_EXTERNAL_URL, default http://HOST:PORT)
  --log-level LEVEL     trace, debug, info, warn, error (CHAT_LOG_LEVEL, default info)
  --cluster URLS        cluster mode: NATS servers, nats://HOST:PORT[,nats://...] (CHAT_CLUSTER)
  --node-id NAME        this node's name in the cluster (CHAT_NODE_ID)
  -h, --help            this text`;

const MAIN_HELP = `Usage: chat-server COMMAND [options]

Commands:
  serve          start the server (the default)
${Object.entries(operatorCommands).map(([name, command]) => `  ${name.padEnd(14)} ${command.summary}`).join('\n')}

Run any command with --help for its options.`;

/**
 * How far V8 lets the old generation grow past what a major collection left live, in percent (V8's own
 * choice is 10-300, by how busy the program is). A server that keeps serving cold history holds its old
 * generation just above the live size, as each read's decoded chunks are kept for a while and then dropped:
 * with V8's choice (about 70 % here) it started marking again right after each collection, a major collection
 * every ~300 reads with 50-60 ms of marking on the server's core, which set the reads' p99 (bench/README.md,
 * "Cold reads: what the waits were"). Three times the live size between collections trades that memory for
 * them. An operator's own --heap-growing-percent on node's command line wins.
 */
const HEAP_GROWING_PERCENT = 200;

function tuneCollector(): void {
  // V8 takes its flags with dashes or underscores.
  if (process.execArgv.some((arg) => arg.replaceAll('_', '-').startsWith('--heap-growing-percent'))) return;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

async function serve(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...COMMON_OPTIONS,
      host: { type: 'string' },
      port: { type: 'string' },
      'external-url': { type: 'string' },
      cluster: { type: 'string' },
      'node-id': { type: 'string' },
    },
  });
  if (values.help) return void console.log(SERVE_HELP);
  const config = configFrom(values, process.env);
  const log = createLogger(config.logLevel);
  const release = claimDataDir(config.dataDir);
  tuneCollector();
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer(config, log);
  } catch (error) {
    // A start that failed (data that does not load, a port taken) leaves no claim on the directory behind.
    release();
    throw error;
  }
  console.log(`Listening on ${server.url} (external URL ${server.externalUrl})`);
  const shutdown = async (signal: string) => {
    log.info({ signal }, 'shutting down');
    try {
      await server.stop();
    } finally {
      release();
      process.exit(0);
    }
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}

async function main(argv: string[]): Promise<void> {
  const [first, ...rest] = argv;
  if (first === undefined || first.startsWith('-')) {
    if (first === '--help' || first === '-h') return void console.log(MAIN_HELP);
    return serve(argv);
  }
  if (first === 'serve') return serve(rest);
  if (first === 'help') return void console.log(MAIN_HELP);
  const command = operatorCommands[first];
  if (!command) throw new ConfigError(`unknown command '${first}'\n\n${MAIN_HELP}`);
  const { values, positionals } = parseArgs({ args: rest, options: { ...COMMON_OPTIONS, ...command.options }, allowPositionals: true });
  if ((values as { help?: boolean }).help) return void console.log(command.help);
  const config: Config = configFrom(values, process.env);
  const release = command.exclusive ? claimDataDir(config.dataDir) : () => {};
  try {
    await command.run(config, values as Record<string, string | boolean | undefined>, positionals);
  } finally {
    release();
  }
}

// Everything the server and its commands write (the LMDB files, uploads, the zuliprc with the owner's API key,
// backups) is for the operator's account only.
process.umask(0o077);

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(error instanceof ConfigError ? 2 : 1);
});
