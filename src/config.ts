import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_QUEUE_LIMITS, type QueueLimits } from '../actors/queue/limits.ts';
import { DEFAULT_PERSONAL_LIMITS, type PersonalLimits } from '../actors/user/limits.ts';
import { DEFAULT_REALM_LIMITS, type RealmLimits } from '../actors/realm/limits.ts';
import type { RecordBounds } from '../actors/realm/record-limits.ts';
import { DEFAULT_BODY_CACHE } from '../actors/realm/messages/bodies.ts';
import { DEFAULT_PREFIX_TERMS } from '../snapshots/search-prefix.ts';
import { DEFAULT_CHUNK_CACHE } from '../actors/realm/messages/paged.ts';
import { DEFAULT_KEY_CACHE, DEFAULT_SEGMENT_CACHE } from '../actors/realm/messages/lazy-map.ts';
import { DEFAULT_NARROW_SLICE_IDS } from '../actors/realm/messages/query.ts';
import { DEFAULT_ARCHIVE_RETENTION_MS } from '../snapshots/archive.ts';
import { DEFAULT_COMMIT_DELAY_MS } from '../snapshots/commit-delay.ts';

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
  /** event queues per user and organization, and what one queue may buffer (actors/queue/limits.ts) */
  queueLimits: QueueLimits;
  /** active bots one person may own (create) */
  maxBotsPerUser: number;
  /** linkifiers one organization may have: each runs on every message rendered */
  maxLinkifiersPerRealm: number;
  /** stored message bodies each organization keeps decoded in memory */
  messageBodyCache: number;
  /** index terms a search's last word may stand for as a prefix; with more it is matched as a word */
  searchPrefixTerms: number;
  /** submessages (a widget's votes, options, tasks) one message may hold */
  maxSubmessagesPerMessage: number;
  /** chunks of stored messages (their metadata) each organization keeps decoded in memory */
  messageChunkCache: number;
  messageKeyCache: number;
  /** ids of the stored segments of each id list index (channels', topics', conversations') each organization keeps in memory */
  messageSegmentCache: number;
  /** ids a narrow's walk of its candidate lists examines per turn of the event loop before yielding it */
  narrowSliceIds: number;
  /** slow narrows (walked in slices) one user may have waiting or running; more are refused with a 429 */
  narrowsQueuedPerUser: number;
  /** channel folders one organization may have, archived ones included: every registration carries them all */
  maxChannelFoldersPerRealm: number;
  /** saved navigation views one user may have: every registration of the user carries them all */
  maxNavigationViewsPerUser: number;
  /** allowed sign-up domains one organization may list: every registration carries them all */
  maxRealmDomains: number;
  /** groups of default channels one organization may have: every registration carries them all */
  maxDefaultChannelGroups: number;
  /** pending reminders one user may have: every registration of the user carries them all */
  maxRemindersPerUser: number;
  /** saved snippets, drafts, scheduled messages, alert words, topic policies and push tokens one user may keep */
  personalLimits: PersonalLimits;
  /** user groups, channels, custom emoji, invitations and accounts one organization may have */
  realmLimits: RealmLimits;
  /** data exports an organization may ask for through the API in 7 days (the original's EXPORT_LIMIT) */
  realmExportLimit: number;
  sweepMs: number;
  snapshotIntervalMs: number;
  /** also snapshot once this many log entries have piled up */
  snapshotEveryEntries: number;
  /** per-user API rate limit; null turns it off (benchmarks) */
  rateLimit: { limit: number; windowSeconds: number } | null;
  /** failed password logins per client and username */
  loginLimit: Budget;
  /** confirmation mails of email address changes per user; null: unlimited */
  emailChangeLimit: Budget | null;
  /** what callers without credentials may spend, by client address and server-wide (src/http/client-budgets.ts) */
  clientBudgets: ClientBudgetConfig;
  /** scrypt runs at once (off libuv's pool otherwise shared with LMDB and files), and callers without credentials waiting for one */
  passwordHashing: { concurrency: number; queueLength: number };
  /** addresses of reverse proxies in front of the server, whose X-Forwarded-For names the client */
  trustedProxies: string[];
  /** the bearer token GET /metrics asks for; null: it answers only clients on this machine */
  metricsToken: string | null;
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
  /** a BigBlueButton server's API base (ends with '/') and its shared secret (the original's BIG_BLUE_BUTTON_URL and _SECRET); null: none */
  bigBlueButton: { url: string; secret: string } | null;
  /** Zoom's user OAuth integration: the OAuth app, and where Zoom's OAuth and API live (tests point them elsewhere) */
  zoom: { clientId: string; clientSecret: string; oauthUrl: string; apiUrl: string } | null;
  /** the push notification service (a Zulip-compatible bouncer) this server is registered with */
  pushBouncer: { url: string; serverId: string; serverKey: string } | null;
  /** an event WebSocket whose unsent bytes grow past this is dropped; its client resumes from the queue */
  socketMaxBufferedBytes: number;
  smtpUrl: string | null;
  ownerEmail: string;
  ownerPassword: string | null;
  /** the public channels a new default organization starts with, default channels with the owner in them */
  starterChannels: string[];
  /** acknowledge a write only after the OS flushed it to disk, not just after LMDB committed it */
  waitForFlush: boolean;
  /** the longest a log append waits to share a commit with others while commits are in flight; 0: never */
  commitDelayMs: number;
  /** LMDB's classic commit instead of lmdb-js's overlapping flush (snapshots/store.ts) */
  lmdbClassicCommit: boolean;
  /** how long log records a snapshot covered stay in the log archive (point-in-time restore); 0: not kept */
  logArchiveMs: number;
  /** below this much free space on the data directory's disk the server takes no writes; 0: no check */
  minFreeDiskBytes: number;
  /** bytes of uploaded files one user may keep; null: no limit */
  userUploadQuotaBytes: number | null;
  /** how many uploaded files one user may keep; null: no limit */
  userUploadFiles: number | null;
  /** invitation mails (sends and resends) one organization may send in a day; null: no limit */
  invitationsPerDay: number | null;
  /** bytes of uploaded files one organization may keep (`realm_upload_quota_mib`); null: no limit */
  realmUploadQuotaBytes: number | null;
  /** POST /dev_fetch_api_key hands out any user's key without a password: development servers only */
  devAuthEnabled: boolean;
  /** cluster mode (src/cluster/): the NATS servers and this node's name; null: a single process, no NATS */
  cluster: ClusterConfig | null;
}

export interface ClusterConfig {
  /** NATS server URLs (nats://HOST:PORT), one of a JetStream cluster is enough to connect */
  servers: string[];
  /** this node's name: unique in the cluster, it names the event queues the node holds */
  nodeId: string;
  /** how other nodes reach this one's HTTP API (forwarded writes and polls); absent: http://HOST:PORT */
  advertiseUrl: string | null;
  /** copies JetStream keeps of the log stream and the leases (3 in a three-server NATS cluster) */
  replicas: number;
  /** a primary that has not renewed its lease for this long is replaced */
  leaseMs: number;
  /** how long a read at a replica waits to have applied what the primary had committed when it arrived */
  readWaitMs: number;
  /** how often the primary stores a snapshot in the cluster's object store (what an empty node starts from) */
  snapshotMs: number;
  /** stream records older than this are dropped, once a stored snapshot covers them */
  retentionMs: number;
  /** the stream's records beyond this many bytes (the oldest) are dropped, once a stored snapshot covers them */
  retentionBytes: number;
}

/** `limit` requests per `windowSeconds` */
export interface Budget {
  limit: number;
  windowSeconds: number;
}

export interface ClientBudgetConfig {
  /** requests without credentials per client address; null: unlimited */
  anonymous: Budget | null;
  /** costly requests without credentials (password checks, sign-ups, anonymous registers) server-wide; null: unlimited */
  costly: Budget | null;
  /** failed password logins per client address, whatever the username */
  loginFailures: Budget;
  /** accounts made through reusable invitation links per client address; null: unlimited */
  linkJoins: Budget | null;
}

/** The repository's own data folder: `npm start` with no options keeps its data here. */
export const DEFAULT_DATA_DIR = resolve(fileURLToPath(new URL('../data', import.meta.url)));

/** The environment variable that sets each bound on what an organization holds (what an operator raises). */
export const BOUND_VARIABLES: Record<keyof RecordBounds, string> = {
  userGroups: 'CHAT_MAX_USER_GROUPS_PER_REALM',
  channels: 'CHAT_MAX_CHANNELS_PER_REALM',
  customEmoji: 'CHAT_MAX_CUSTOM_EMOJI_PER_REALM',
  invitations: 'CHAT_MAX_INVITATIONS_PER_REALM',
  users: 'CHAT_MAX_USERS_PER_REALM',
  savedSnippets: 'CHAT_MAX_SAVED_SNIPPETS_PER_USER',
  drafts: 'CHAT_MAX_DRAFTS_PER_USER',
  scheduledMessages: 'CHAT_MAX_SCHEDULED_MESSAGES_PER_USER',
  alertWords: 'CHAT_MAX_ALERT_WORDS_PER_USER',
  topicPolicies: 'CHAT_MAX_TOPIC_POLICIES_PER_USER',
  pushTokens: 'CHAT_MAX_PUSH_TOKENS_PER_USER',
  linkifiers: 'CHAT_MAX_LINKIFIERS_PER_REALM',
  channelFolders: 'CHAT_MAX_CHANNEL_FOLDERS_PER_REALM',
  realmDomains: 'CHAT_MAX_REALM_DOMAINS',
  defaultChannelGroups: 'CHAT_MAX_DEFAULT_CHANNEL_GROUPS',
  botsPerUser: 'CHAT_MAX_BOTS_PER_USER',
  remindersPerUser: 'CHAT_MAX_REMINDERS_PER_USER',
  navigationViewsPerUser: 'CHAT_MAX_NAVIGATION_VIEWS_PER_USER',
  submessagesPerMessage: 'CHAT_MAX_SUBMESSAGES_PER_MESSAGE',
};

/** The configured bounds on what an organization holds, as BOUND_VARIABLES names them. */
export function recordBounds(config: Config): RecordBounds {
  return {
    ...config.realmLimits,
    ...config.personalLimits,
    linkifiers: config.maxLinkifiersPerRealm,
    channelFolders: config.maxChannelFoldersPerRealm,
    realmDomains: config.maxRealmDomains,
    defaultChannelGroups: config.maxDefaultChannelGroups,
    botsPerUser: config.maxBotsPerUser,
    remindersPerUser: config.maxRemindersPerUser,
    navigationViewsPerUser: config.maxNavigationViewsPerUser,
    submessagesPerMessage: config.maxSubmessagesPerMessage,
  };
}

const MINUTE = 60_000;
const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

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
    // The original's MAX_QUEUE_TIMEOUT_SECS.
    queueMaxIdleMs: 7 * 24 * 60 * MINUTE,
    queueLimits: DEFAULT_QUEUE_LIMITS,
    // The original has no limit. Each bot may hold as many queues as a person and, before its owner's rate
    // limit covered bots, was a budget of its own: enough for a person's integrations, not a fleet.
    maxBotsPerUser: 20,
    // The original has no limit; organizations use tens of them. Each compiled pattern may take up to ~8 MB of RE2's memory.
    maxLinkifiersPerRealm: 200,
    messageBodyCache: DEFAULT_BODY_CACHE,
    searchPrefixTerms: DEFAULT_PREFIX_TERMS,
    messageChunkCache: DEFAULT_CHUNK_CACHE,
    messageKeyCache: DEFAULT_KEY_CACHE,
    messageSegmentCache: DEFAULT_SEGMENT_CACHE,
    // The original has no limit. A poll of a 10,000-member organization where each votes and changes a vote.
    maxSubmessagesPerMessage: 20_000,
    narrowSliceIds: DEFAULT_NARROW_SLICE_IDS,
    // The original has no such line (PostgreSQL answers each narrow on its own connection). The web app
    // and the mobile apps have one or two fetches of a narrow out at a time, a script with a few workers a
    // few more; each waiting walk holds its request and what it found so far, so a flood of them must stop
    // somewhere well below the memory a member could otherwise take.
    narrowsQueuedPerUser: 10,
    // The original has no limits on these; an organization arranges its channels in a handful of folders, a
    // user pins a few views.
    maxChannelFoldersPerRealm: 100,
    maxNavigationViewsPerUser: 100,
    maxRealmDomains: 100,
    maxDefaultChannelGroups: 100,
    maxRemindersPerUser: 1000,
    personalLimits: DEFAULT_PERSONAL_LIMITS,
    realmLimits: DEFAULT_REALM_LIMITS,
    realmExportLimit: 5,
    sweepMs: 1_000,
    snapshotIntervalMs: MINUTE,
    snapshotEveryEntries: 50_000,
    rateLimit: { limit: 200, windowSeconds: 60 },
    // The original's authenticate_by_username (5 failures in 30 minutes), kept per client as well: one that
    // guesses cannot lock the account's owner out, who logs in from another address.
    loginLimit: { limit: 5, windowSeconds: 30 * 60 },
    // The original's email_change_by_user (5 a day): each change mails any address the user names, so
    // without a budget of its own one account could mail without end (or fill the outbox, without SMTP).
    emailChangeLimit: { limit: 5, windowSeconds: 24 * 60 * 60 },
    clientBudgets: {
      // The original's api_by_ip: 100 requests a minute per address for callers without credentials.
      anonymous: { limit: 100, windowSeconds: 60 },
      // Ten a second server-wide, half of what one scrypt at a time can check (about 50 ms each): a crowd of
      // addresses guessing passwords or making accounts gets no more than that, and hashing keeps up.
      costly: { limit: 600, windowSeconds: 60 },
      // Four usernames' worth of the per-username allowance: someone with a few accounts who forgets which
      // password goes where is not stopped; a client trying many usernames is.
      loginFailures: { limit: 20, windowSeconds: 30 * 60 },
      // The original mails a confirmation for each account made through a link, within sends_email_by_ip:
      // 5 a day per address. Accounts made here need no mail; the same number holds them.
      linkJoins: { limit: 5, windowSeconds: 24 * 60 * 60 },
    },
    // One hash at a time leaves three of libuv's four threads to LMDB commits and file writes; queued
    // attempts of callers without credentials wait at most about 64 x 50 ms, beyond that they are refused.
    passwordHashing: { concurrency: 1, queueLength: 64 },
    trustedProxies: [],
    metricsToken: null,
    maxBodyBytes: 10 * 1024 * 1024,
    webPublicStreamsEnabled: false,
    gifApiKey: '',
    jitsiServerUrl: 'https://meet.jit.si',
    bigBlueButton: null,
    zoom: null,
    pushBouncer: null,
    // A client this far behind is better served by reconnecting and taking the backlog in one frame than
    // by the server holding ever more bytes for it.
    socketMaxBufferedBytes: 8 * 1024 * 1024,
    smtpUrl: null,
    ownerEmail: 'owner@example.com',
    ownerPassword: null,
    // As the original's new organizations: somewhere to write on the first visit, which new members join.
    starterChannels: ['general', 'sandbox'],
    waitForFlush: true,
    commitDelayMs: DEFAULT_COMMIT_DELAY_MS,
    lmdbClassicCommit: false,
    logArchiveMs: DEFAULT_ARCHIVE_RETENTION_MS,
    // LMDB grows its file as it writes and lmdb-js 3.5.6 can abort the process on a write the disk refuses
    // (see test/disk-errors.test.ts): writes stop well before the disk is full. A snapshot of a big
    // organization is one large commit, hence a margin of hundreds of megabytes rather than a few.
    minFreeDiskBytes: 256 * MIB,
    // The original has no quota on a self-hosted server, and on Zulip Cloud 5 GiB per user (settings'
    // UPLOAD_QUOTA_PER_USER_GB, by paid seat) and 50 GiB for a sponsored organization
    // (UPLOAD_QUOTA_STANDARD_FREE): those numbers, so that no member, nor one organization, takes the disk.
    userUploadQuotaBytes: 5 * GIB,
    // The original counts bytes only. Files are counted too, since empty ones take no bytes but each is a
    // record in the realm's memory and snapshots and a directory on disk: 10,000 is far beyond a person's
    // years of attachments (and 5 GiB in files of 500 KiB), and bounds one member's records to a few MB.
    userUploadFiles: 10_000,
    realmUploadQuotaBytes: 50 * GIB,
    // The original's INVITES_DEFAULT_REALM_DAILY_MAX (the default of realm.max_invites), which it applies
    // where anyone may make an organization; here organizations are the operator's, but any member allowed
    // to invite could otherwise mail any number of addresses from the server.
    invitationsPerDay: 100,
    devAuthEnabled: false,
    cluster: null,
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
  /** a variable read by `parse` (which names it in its errors), or `fallback` when unset */
  const read = <T>(name: string, parse: (name: string, text: string) => T, fallback: T): T => {
    const text = env[name];
    return text === undefined ? fallback : parse(name, text);
  };
  const seconds = (name: string, fallback: number) => read(name, (variable, text) => number(variable, text) * 1000, fallback);
  return {
    ...base,
    dataDir: dataDir ? resolve(dataDir) : base.dataDir,
    externalUrl: externalUrl ? externalUrl.replace(/\/+$/, '') : null,
    logLevel: logLevel ?? base.logLevel,
    heartbeatMs: seconds('CHAT_HEARTBEAT_SECONDS', base.heartbeatMs),
    queueIdleMs: seconds('CHAT_QUEUE_IDLE_SECONDS', base.queueIdleMs),
    queueMaxIdleMs: seconds('CHAT_QUEUE_MAX_IDLE_SECONDS', base.queueMaxIdleMs),
    queueLimits: {
      perUser: read('CHAT_MAX_QUEUES_PER_USER', positiveInteger, base.queueLimits.perUser),
      perRealm: read('CHAT_MAX_QUEUES_PER_REALM', positiveInteger, base.queueLimits.perRealm),
      events: read('CHAT_QUEUE_MAX_EVENTS', positiveInteger, base.queueLimits.events),
      bytes: read('CHAT_QUEUE_MAX_BYTES', positiveSize, base.queueLimits.bytes),
    },
    maxBotsPerUser: read(BOUND_VARIABLES.botsPerUser, positiveInteger, base.maxBotsPerUser),
    maxLinkifiersPerRealm: read(BOUND_VARIABLES.linkifiers, positiveInteger, base.maxLinkifiersPerRealm),
    messageBodyCache: read('CHAT_MESSAGE_BODY_CACHE', positiveInteger, base.messageBodyCache),
    searchPrefixTerms: read('CHAT_SEARCH_PREFIX_TERMS', positiveInteger, base.searchPrefixTerms),
    messageChunkCache: read('CHAT_MESSAGE_CHUNK_CACHE', positiveInteger, base.messageChunkCache),
    messageKeyCache: read('CHAT_MESSAGE_KEY_CACHE', positiveInteger, base.messageKeyCache),
    messageSegmentCache: read('CHAT_MESSAGE_SEGMENT_CACHE', positiveInteger, base.messageSegmentCache),
    maxSubmessagesPerMessage: read(BOUND_VARIABLES.submessagesPerMessage, positiveInteger, base.maxSubmessagesPerMessage),
    narrowSliceIds: read('CHAT_NARROW_SLICE_IDS', positiveInteger, base.narrowSliceIds),
    narrowsQueuedPerUser: read('CHAT_NARROWS_QUEUED_PER_USER', positiveInteger, base.narrowsQueuedPerUser),
    maxChannelFoldersPerRealm: read(BOUND_VARIABLES.channelFolders, positiveInteger, base.maxChannelFoldersPerRealm),
    maxNavigationViewsPerUser: read(BOUND_VARIABLES.navigationViewsPerUser, positiveInteger, base.maxNavigationViewsPerUser),
    maxRealmDomains: read(BOUND_VARIABLES.realmDomains, positiveInteger, base.maxRealmDomains),
    maxDefaultChannelGroups: read(BOUND_VARIABLES.defaultChannelGroups, positiveInteger, base.maxDefaultChannelGroups),
    maxRemindersPerUser: read(BOUND_VARIABLES.remindersPerUser, positiveInteger, base.maxRemindersPerUser),
    personalLimits: {
      savedSnippets: read(BOUND_VARIABLES.savedSnippets, positiveInteger, base.personalLimits.savedSnippets),
      drafts: read(BOUND_VARIABLES.drafts, positiveInteger, base.personalLimits.drafts),
      scheduledMessages: read(BOUND_VARIABLES.scheduledMessages, positiveInteger, base.personalLimits.scheduledMessages),
      alertWords: read(BOUND_VARIABLES.alertWords, positiveInteger, base.personalLimits.alertWords),
      topicPolicies: read(BOUND_VARIABLES.topicPolicies, positiveInteger, base.personalLimits.topicPolicies),
      pushTokens: read(BOUND_VARIABLES.pushTokens, positiveInteger, base.personalLimits.pushTokens),
    },
    realmLimits: {
      userGroups: read(BOUND_VARIABLES.userGroups, positiveInteger, base.realmLimits.userGroups),
      channels: read(BOUND_VARIABLES.channels, positiveInteger, base.realmLimits.channels),
      customEmoji: read(BOUND_VARIABLES.customEmoji, positiveInteger, base.realmLimits.customEmoji),
      invitations: read(BOUND_VARIABLES.invitations, positiveInteger, base.realmLimits.invitations),
      users: read(BOUND_VARIABLES.users, positiveInteger, base.realmLimits.users),
    },
    realmExportLimit: read('CHAT_REALM_EXPORT_LIMIT', positiveInteger, base.realmExportLimit),
    snapshotIntervalMs: seconds('CHAT_SNAPSHOT_SECONDS', base.snapshotIntervalMs),
    rateLimit: read('CHAT_RATE_LIMIT', budget, base.rateLimit),
    loginLimit: read('CHAT_LOGIN_LIMIT', requiredBudget, base.loginLimit),
    emailChangeLimit: read('CHAT_EMAIL_CHANGE_LIMIT', budget, base.emailChangeLimit),
    clientBudgets: {
      anonymous: read('CHAT_ANONYMOUS_LIMIT', budget, base.clientBudgets.anonymous),
      costly: read('CHAT_ANONYMOUS_GLOBAL_LIMIT', budget, base.clientBudgets.costly),
      loginFailures: read('CHAT_LOGIN_CLIENT_LIMIT', requiredBudget, base.clientBudgets.loginFailures),
      linkJoins: read('CHAT_JOIN_LINK_LIMIT', budget, base.clientBudgets.linkJoins),
    },
    passwordHashing: {
      concurrency: read('CHAT_PASSWORD_HASH_CONCURRENCY', positiveInteger, base.passwordHashing.concurrency),
      queueLength: read('CHAT_PASSWORD_HASH_QUEUE', integer, base.passwordHashing.queueLength),
    },
    trustedProxies: env.CHAT_TRUSTED_PROXIES ? env.CHAT_TRUSTED_PROXIES.split(',').map((address) => address.trim()).filter(Boolean) : base.trustedProxies,
    metricsToken: env.CHAT_METRICS_TOKEN || base.metricsToken,
    smtpUrl: env.CHAT_SMTP_URL || null,
    ownerEmail: env.CHAT_OWNER_EMAIL || base.ownerEmail,
    ownerPassword: env.CHAT_OWNER_PASSWORD || null,
    starterChannels: env.CHAT_STARTER_CHANNELS === undefined ? base.starterChannels : env.CHAT_STARTER_CHANNELS.split(',').map((name) => name.trim()).filter(Boolean),
    waitForFlush: env.CHAT_WAIT_FOR_FLUSH !== 'false',
    commitDelayMs: read('CHAT_COMMIT_DELAY_MS', integer, base.commitDelayMs),
    lmdbClassicCommit: env.CHAT_LMDB_CLASSIC_COMMIT === 'true',
    webPublicStreamsEnabled: env.CHAT_WEB_PUBLIC_STREAMS === 'true',
    gifApiKey: env.CHAT_GIF_API_KEY ?? base.gifApiKey,
    jitsiServerUrl: (env.CHAT_JITSI_SERVER_URL || base.jitsiServerUrl).replace(/\/+$/, ''),
    bigBlueButton: env.CHAT_BIGBLUEBUTTON_URL && env.CHAT_BIGBLUEBUTTON_SECRET
      ? { url: env.CHAT_BIGBLUEBUTTON_URL.replace(/\/*$/, '/'), secret: env.CHAT_BIGBLUEBUTTON_SECRET }
      : base.bigBlueButton,
    zoom: env.CHAT_ZOOM_CLIENT_ID && env.CHAT_ZOOM_CLIENT_SECRET
      ? {
          clientId: env.CHAT_ZOOM_CLIENT_ID, clientSecret: env.CHAT_ZOOM_CLIENT_SECRET,
          oauthUrl: (env.CHAT_ZOOM_OAUTH_URL || 'https://zoom.us').replace(/\/*$/, ''),
          apiUrl: (env.CHAT_ZOOM_API_URL || 'https://api.zoom.us/v2').replace(/\/*$/, ''),
        }
      : base.zoom,
    pushBouncer: env.CHAT_PUSH_BOUNCER_URL && env.CHAT_PUSH_BOUNCER_SERVER_ID && env.CHAT_PUSH_BOUNCER_SERVER_KEY
      ? { url: env.CHAT_PUSH_BOUNCER_URL.replace(/\/*$/, ''), serverId: env.CHAT_PUSH_BOUNCER_SERVER_ID, serverKey: env.CHAT_PUSH_BOUNCER_SERVER_KEY }
      : base.pushBouncer,
    logArchiveMs: read('CHAT_LOG_ARCHIVE_RETENTION', duration, base.logArchiveMs),
    minFreeDiskBytes: read('CHAT_MIN_FREE_DISK', size, base.minFreeDiskBytes),
    userUploadQuotaBytes: read('CHAT_USER_UPLOAD_QUOTA', quota, base.userUploadQuotaBytes),
    userUploadFiles: read('CHAT_USER_UPLOAD_FILES', countLimit, base.userUploadFiles),
    invitationsPerDay: read('CHAT_INVITATIONS_PER_DAY', countLimit, base.invitationsPerDay),
    realmUploadQuotaBytes: read('CHAT_REALM_UPLOAD_QUOTA', quota, base.realmUploadQuotaBytes),
    devAuthEnabled: env.CHAT_DEV_AUTH === 'true',
    cluster: clusterConfig(pick('cluster', 'CHAT_CLUSTER'), pick('node-id', 'CHAT_NODE_ID'), env, read),
  };
}

/**
 * Cluster mode, only with --cluster (CHAT_CLUSTER). The lease is a few seconds, so that a dead primary is
 * replaced well within the 10 s a failover may take (renewed every third of it); a read at a replica waits
 * at most as long as a failover may take before it answers 503.
 */
function clusterConfig(
  servers: string | undefined,
  nodeId: string | undefined,
  env: Env,
  read: <T>(name: string, parse: (name: string, text: string) => T, fallback: T) => T,
): ClusterConfig | null {
  if (!servers) {
    if (nodeId) throw new ConfigError('--node-id (CHAT_NODE_ID) needs --cluster (CHAT_CLUSTER)');
    return null;
  }
  const urls = servers.split(',').map((url) => url.trim()).filter(Boolean);
  for (const url of urls) if (!/^(nats|tls):\/\/[^/\s]+$/.test(url)) throw new ConfigError(`--cluster takes nats://HOST:PORT URLs separated by commas, not '${url}'`);
  if (!nodeId) throw new ConfigError('--cluster needs --node-id NAME (CHAT_NODE_ID)');
  // The node id begins queue ids (NODE:uuid) and names the node's key in the cluster's buckets.
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(nodeId)) throw new ConfigError(`--node-id must be 1 to 64 of A-Z a-z 0-9 _ -, not '${nodeId}'`);
  return {
    servers: urls,
    nodeId,
    advertiseUrl: env.CHAT_CLUSTER_ADVERTISE_URL ? env.CHAT_CLUSTER_ADVERTISE_URL.replace(/\/+$/, '') : null,
    replicas: read('CHAT_CLUSTER_REPLICAS', positiveInteger, 3),
    leaseMs: read('CHAT_CLUSTER_LEASE_SECONDS', (name, text) => number(name, text) * 1000, 3000),
    readWaitMs: read('CHAT_CLUSTER_READ_WAIT_SECONDS', (name, text) => number(name, text) * 1000, 10_000),
    // A new node replays the stream after the stored snapshot: a snapshot every few minutes keeps that short.
    snapshotMs: read('CHAT_CLUSTER_SNAPSHOT_SECONDS', (name, text) => number(name, text) * 1000, 300_000),
    // As the log archive (CHAT_LOG_ARCHIVE_RETENTION): a week of history replayable from the stream.
    retentionMs: read('CHAT_CLUSTER_RETENTION', duration, 7 * 24 * 60 * MINUTE),
    retentionBytes: read('CHAT_CLUSTER_RETENTION_SIZE', size, 1024 * MIB),
  };
}

/** A budget setting: "100/60" (requests per seconds), or "off" (null). */
function budget(name: string, text: string): Budget | null {
  if (text === 'off') return null;
  const match = /^(\d+)\/(\d+)$/.exec(text);
  if (!match || Number(match[2]) === 0) throw new ConfigError(`${name} must be like 200/60 or off, not '${text}'`);
  return { limit: Number(match[1]), windowSeconds: Number(match[2]) };
}

/** A budget that cannot be turned off: password guessing is always limited. */
function requiredBudget(name: string, text: string): Budget {
  const value = budget(name, text);
  if (!value) throw new ConfigError(`${name} cannot be off`);
  return value;
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

/** A size as `size` reads it; '0' (or 'off') is no limit. */
function quota(name: string, text: string): number | null {
  if (text === 'off') return null;
  return size(name, text) || null;
}

/** A whole number; '0' (or 'off') is no limit. */
function countLimit(name: string, text: string): number | null {
  if (text === 'off') return null;
  return integer(name, text) || null;
}

function positiveInteger(name: string, text: string): number {
  const value = integer(name, text);
  if (value === 0) throw new ConfigError(`${name} must be at least 1`);
  return value;
}

function positiveSize(name: string, text: string): number {
  const bytes = size(name, text);
  if (bytes < 1) throw new ConfigError(`${name} must be more than 0, not '${text}'`);
  return bytes;
}

function number(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new ConfigError(`${name} must be a positive number, not '${text}'`);
  return value;
}
