import { UploadLinks } from './http/upload-links.ts';
import type { Runtime } from '../actors/runtime.ts';
import type { BackupRecord } from '../snapshots/store.ts';
import type { RealmState } from '../actors/realm/state.ts';
import type { ClusterHooks } from './cluster/hooks.ts';
import type { Config } from './config.ts';
import type { DiskSpace } from './disk-space.ts';
import type { ClientBudgets } from './http/client-budgets.ts';
import type { RateLimiter } from './http/rate-limit.ts';
import type { SocketTickets } from './http/socket-tickets.ts';
import type { Logger } from './log.ts';
import type { Mailer } from './mail.ts';
import type { Metrics } from './metrics.ts';
import type { PasswordQueue } from './password-queue.ts';
import type { EmojiImageStore } from './emoji-images.ts';
import type { UploadStore } from './uploads.ts';
import type { RealmExportJobs } from './realm-export-jobs.ts';

/** What route handlers may use: the actors, the config, and the front end's own helpers. */
export interface AppServices {
  runtime: Runtime;
  config: Config;
  log: Logger;
  mailer: Mailer;
  metrics: Metrics;
  /** free space on the data directory's disk against the minimum: writes stop below it */
  diskSpace: DiskSpace;
  apiLimiter: RateLimiter | null;
  /** confirmation mails of email address changes, per user */
  emailChangeLimiter: RateLimiter | null;
  /** what callers without credentials may spend: requests, logins, sign-ups */
  clientBudgets: ClientBudgets;
  /** every password hash or check of a request waits its turn here */
  passwordQueue: PasswordQueue;
  /** one-time credentials for browsers' WebSockets (POST /events/socket/ticket) */
  socketTickets: SocketTickets;
  /** short-lived links to uploaded files that need no credentials (GET /api/v1/user_uploads/...) */
  uploadLinks: UploadLinks;
  /** data exports being made in the background (POST /export/realm) */
  realmExports: RealmExportJobs;
  /** process start, UNIX seconds: `server_generation` */
  generation: number;
  /** how clients reach the server (known once it listens, when the port may have been chosen by the OS) */
  externalUrl: URL;
  realmUrl(realm: RealmState): string;
  /** the data directory's periodic snapshot (its log position) and last backup (`chat-server snapshot`), for /health */
  persistence(): { snapshotSeq: number; backup: BackupRecord | null };
  /** the organization's files beside LMDB (in a cluster, shared through it) */
  files: { uploads: UploadStore; avatars: UploadStore; emoji: EmojiImageStore };
  /** cluster mode only (--cluster): this node's place in the cluster */
  cluster?: ClusterHooks;
}
