import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_ARCHIVE_RETENTION_MS } from '../snapshots/archive.ts';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** the URL clients use to reach the server, realms living on its subdomains; null: http://HOST:PORT */
  externalUrl: string | null;
  logLevel: string;
  /** a held long-poll gets a heartbeat event after this long (±10%) */
  heartbeatMs: number;
  /** an event queue is collected after this long without a poll */
  queueIdleMs: number;
  /** longest idle lifespan a client may ask for at registration */
  queueMaxIdleMs: number;
  sweepMs: number;
  snapshotIntervalMs: number;
  /** also snapshot once this many log entries have piled up */
  snapshotEveryEntries: number;
  /** per-user API rate limit; null turns it off (benchmarks) */
  rateLimit: { limit: number; windowSeconds: number } | null;
  /** failed password logins per username */
  loginLimit: { limit: number; windowSeconds: number };
  maxBodyBytes: number;
  /**
   * whether organizations may have web-public channels (the original's WEB_PUBLIC_STREAMS_ENABLED): off by
   * default, so that no channel of a server is readable by anyone on the Internet unless its operator chose so
   */
  webPublicStreamsEnabled: boolean;
  /** the key clients use for the GIF picker's service (the original's GIPHY_API_KEY; not secret); empty: none */
  gifApiKey: string;
  /** the Jitsi Meet server video call links point to (the original's JITSI_SERVER_URL) */
  jitsiServerUrl: string;
  /** an event WebSocket whose unsent bytes grow past this is dropped; its client resumes from the queue */
  socketMaxBufferedBytes: number;
  smtpUrl: string | null;
  ownerEmail: string;
  ownerPassword: string | null;
  /** acknowledge a write only after the OS flushed it to disk, not just after LMDB committed it */
  waitForFlush: boolean;
  /** how long log records a snapshot covered stay in the log archive (point-in-time restore); 0: not kept */
  logArchiveMs: number;
  /** below this much free space on the data directory's disk the server takes no writes; 0: no check */
  minFreeDiskBytes: number;
}

/** The repository's own data folder: `npm start` with no options keeps its data here. */
export const DEFAULT_DATA_DIR = resolve(fileURLToPath(new URL('../data', import.meta.url)));

const MINUTE = 60_000;
const MIB = 1024 * 1024;

export function defaultConfig(overrides: Partial<Config> = {}): Config {
  const host = overrides.host ?? '127.0.0.1';
  const port = overrides.port ?? 9991;
  return {
    host,
    port,
    dataDir: DEFAULT_DATA_DIR,
    externalUrl: null,
    logLevel: 'info',
    // The original waits 45-55 s; clients time a poll out at 90 s (event_queue_longpoll_timeout_seconds).
    heartbeatMs: 50_000,
    // Ten minutes, as the original: dead browser queues must not pile up.
    queueIdleMs: 10 * MINUTE,
    queueMaxIdleMs: 7 * 24 * 60 * MINUTE,
    sweepMs: 1_000,
    snapshotIntervalMs: MINUTE,
    snapshotEveryEntries: 50_000,
    rateLimit: { limit: 200, windowSeconds: 60 },
    loginLimit: { limit: 5, windowSeconds: 30 * 60 },
    maxBodyBytes: 10 * 1024 * 1024,
    webPublicStreamsEnabled: false,
    gifApiKey: '',
    jitsiServerUrl: 'https://meet.jit.si',
    // A client this far behind is better served by reconnecting and taking the backlog in one frame than
    // by the server holding ever more bytes for it.
    socketMaxBufferedBytes: 8 * 1024 * 1024,
    smtpUrl: null,
    ownerEmail: 'owner@example.com',
    ownerPassword: null,
    waitForFlush: true,
    logArchiveMs: DEFAULT_ARCHIVE_RETENTION_MS,
    // LMDB grows its file as it writes and lmdb-js 3.5.6 can abort the process on a write the disk refuses
    // (see test/disk-errors.test.ts): writes stop well before the disk is full. A snapshot of a big
    // organization is one large commit, hence a margin of hundreds of megabytes rather than a few.
    minFreeDiskBytes: 256 * MIB,
    ...overrides,
  };
}

type Env = Record<string, string | undefined>;

/** Reads the config from command-line options (which win) and CHAT_* environment variables. */
export function configFrom(options: Record<string, unknown>, env: Env): Config {
  const pick = (option: string, variable: string) => {
    const value = options[option];
    return typeof value === 'string' ? value : env[variable];
  };
  const host = pick('host', 'CHAT_HOST');
  const port = pick('port', 'CHAT_PORT');
  const overrides: Partial<Config> = {};
  if (host) overrides.host = host;
  if (port !== undefined) overrides.port = integer('port', port);
  const base = defaultConfig(overrides);
  const dataDir = pick('data-dir', 'CHAT_DATA_DIR');
  const externalUrl = pick('external-url', 'CHAT_EXTERNAL_URL');
  const logLevel = pick('log-level', 'CHAT_LOG_LEVEL');
  const seconds = (name: string) => (env[name] === undefined ? undefined : number(name, env[name]!) * 1000);
  return {
    ...base,
    dataDir: dataDir ? resolve(dataDir) : base.dataDir,
    externalUrl: externalUrl ? externalUrl.replace(/\/+$/, '') : null,
    logLevel: logLevel ?? base.logLevel,
    heartbeatMs: seconds('CHAT_HEARTBEAT_SECONDS') ?? base.heartbeatMs,
    queueIdleMs: seconds('CHAT_QUEUE_IDLE_SECONDS') ?? base.queueIdleMs,
    snapshotIntervalMs: seconds('CHAT_SNAPSHOT_SECONDS') ?? base.snapshotIntervalMs,
    rateLimit: rateLimit(env.CHAT_RATE_LIMIT, base.rateLimit),
    smtpUrl: env.CHAT_SMTP_URL || null,
    ownerEmail: env.CHAT_OWNER_EMAIL || base.ownerEmail,
    ownerPassword: env.CHAT_OWNER_PASSWORD || null,
    waitForFlush: env.CHAT_WAIT_FOR_FLUSH !== 'false',
    webPublicStreamsEnabled: env.CHAT_WEB_PUBLIC_STREAMS === 'true',
    gifApiKey: env.CHAT_GIF_API_KEY ?? base.gifApiKey,
    jitsiServerUrl: (env.CHAT_JITSI_SERVER_URL || base.jitsiServerUrl).replace(/\/+$/, ''),
    logArchiveMs: env.CHAT_LOG_ARCHIVE_RETENTION === undefined ? base.logArchiveMs : duration('CHAT_LOG_ARCHIVE_RETENTION', env.CHAT_LOG_ARCHIVE_RETENTION),
    minFreeDiskBytes: env.CHAT_MIN_FREE_DISK === undefined ? base.minFreeDiskBytes : size('CHAT_MIN_FREE_DISK', env.CHAT_MIN_FREE_DISK),
  };
}

/** "200/60" (requests per seconds) or "off". */
function rateLimit(text: string | undefined, fallback: Config['rateLimit']): Config['rateLimit'] {
  if (text === undefined) return fallback;
  if (text === 'off') return null;
  const match = /^(\d+)\/(\d+)$/.exec(text);
  if (!match) throw new ConfigError(`CHAT_RATE_LIMIT must be like 200/60 or off, not '${text}'`);
  return { limit: Number(match[1]), windowSeconds: Number(match[2]) };
}

export class ConfigError extends Error {}

function integer(name: string, text: string): number {
  if (!/^\d+$/.test(text)) throw new ConfigError(`${name} must be a whole number, not '${text}'`);
  return Number(text);
}

const DURATION_UNITS: Record<string, number> = { s: 1000, m: MINUTE, h: 60 * MINUTE, d: 24 * 60 * MINUTE };

/** '7d', '36h', '90m', '600s' (fractions allowed), or '0' / 'off' for none; in milliseconds. */
export function duration(name: string, text: string): number {
  if (text === '0' || text === 'off') return 0;
  const match = /^(\d+(?:\.\d+)?)\s*([smhd])$/.exec(text.trim());
  if (!match) throw new ConfigError(`${name} must be a duration like 7d, 36h, 90m or 600s (or 0 for none), not '${text}'`);
  return Math.round(Number(match[1]) * DURATION_UNITS[match[2]!]!);
}

const SIZE_UNITS: Record<string, number> = { '': 1, k: 1024, m: MIB, g: 1024 * MIB, t: 1024 * 1024 * MIB };

/** '512M', '2G', '1.5GiB', '1048576' (bytes; K, M, G, T are powers of 1024), or '0' for none; in bytes. */
export function size(name: string, text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?$/i.exec(text.trim());
  if (!match) throw new ConfigError(`${name} must be a size like 512M or 2G (or 0 for none), not '${text}'`);
  return Math.round(Number(match[1]) * SIZE_UNITS[match[2]!.toLowerCase()]!);
}

function number(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new ConfigError(`${name} must be a positive number, not '${text}'`);
  return value;
}
