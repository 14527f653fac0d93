import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream, jetstreamManager, StorageType, type ConsumerMessages, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ChatError, ErrorCode } from '../../actors/errors.ts';
import type { LogRecord } from '../../actors/persistence.ts';
import { NotPrimary, type Replication, type Shared } from '../../actors/replication.ts';
import type { Runtime } from '../../actors/runtime.ts';
import { decode, encode } from '../../snapshots/codec.ts';
import { removeSearchIndex } from '../../snapshots/search-index.ts';
import { Store } from '../../snapshots/store.ts';
import type { ClusterConfig } from '../config.ts';
import type { ApiRequest, ApiResponse } from '../http/request.ts';
import type { Logger } from '../log.ts';
import type { SharedFiles } from '../uploads.ts';
import type { Metrics } from '../metrics.ts';
import { forwardHttp, takeForwardMark } from './forward.ts';
import { ForwardedSocket } from './forward-socket.ts';
import type { ClusterHooks } from './hooks.ts';
import { ReplicatedStore } from './replicated-store.ts';
import { hasData, SnapshotBucket, type Manifest } from './snapshot-bucket.ts';
import { PositionWaiters } from './waiters.ts';

/** The organization's log, replicated: the primary appends each committed record, every node applies them. */
const STREAM = 'CHAT_LOG';
const SUBJECT = 'chat.log';
/** A record's header that marks a new primary's first append (no log record): it fences the one before. */
const TERM_HEADER = 'Chat-Term';
/** The lease: one key whose holder is the primary; the bucket's age limit is the lease's length. */
const LEASE_BUCKET = 'chat_lease';
const LEASE_KEY = 'primary';
/** Each node's HTTP address, for forwarded writes and polls; kept alive as the lease is. */
const NODES_BUCKET = 'chat_nodes';
/**
 * What the nodes share outside the log (typing, presence): plain NATS, at most once, as such events are
 * anyway (a client that misses a typing notification sees the next one).
 */
const SHARED_SUBJECT = 'chat.shared';
/** How long a starting node waits for JetStream to answer, and how often it asks meanwhile. */
const SETUP_WAIT_MS = 30_000;
const SETUP_RETRY_MS = 250;
/** How long the primary waits for LMDB to hold a record the stream stored before it takes a snapshot of it. */
const SNAPSHOT_FLUSH_WAIT_MS = 10_000;
/** Where the LMDB file of a node the stream left behind goes, for the operator to look at or remove. */
const BEHIND_DATA_FILE = 'data.mdb.behind';

interface NodeInfo {
  node: string;
  url: string;
}

/**
 * One node of a cluster (see README, "A cluster"): its NATS connection, the lease that makes one node the
 * primary, the stream of log records the primary appends and every other node applies, and what the
 * request pipeline asks of it (ClusterHooks). A deposed primary (its lease lost, or an append refused
 * because another primary appended first) stops: its memory may hold changes the cluster never stored,
 * and a restart rebuilds it from its own log (which holds only what the stream stored) and the stream.
 */
export class ClusterNode implements ClusterHooks, Replication {
  readonly nodeId: string;
  private role: 'replica' | 'primary' = 'replica';
  private primary: NodeInfo | null = null;
  private leaseRevision = 0;
  /** the stream position of the last record this node applied (or, as the primary, stored) */
  private applied = 0;
  /** the stream's last position as last seen */
  private streamLast = 0;
  private readonly waiters = new PositionWaiters();
  /** the stream being followed (a replica), null while this node leads or has stopped */
  private follower: Follower | null = null;
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;
  private stopped = false;
  private url = '';
  private forwarded = 0;
  private nextLookup: Promise<number> | null = null;
  private lookupInFlight: Promise<unknown> = Promise.resolve();
  private runtime: Runtime | null = null;
  private apply: (record: LogRecord) => Promise<void> = (record) => this.runtime!.follow(record);
  private replicated: ReplicatedStore | null = null;
  private local: Store | null = null;
  private snapshotTimer: NodeJS.Timeout | null = null;
  private snapshotting: Promise<void> | null = null;
  private openingSnapshots: Promise<SnapshotBucket> | null = null;
  /** whether this node, as the primary, has read which snapshot a former primary stored last */
  private readLatest = false;
  /** the latest snapshot stored in the cluster's object store, as far as this node knows */
  private stored: Manifest | null = null;
  /** the snapshot this node's empty data directory started from, if it did */
  readonly seeded: Manifest | null;

  private constructor(
    private readonly config: ClusterConfig,
    private readonly log: Logger,
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly lease: KV,
    private readonly nodes: KV,
    /** opened when first needed: a cluster's start creates no bucket */
    private snapshots: SnapshotBucket | null,
    private readonly dataDir: string,
    seeded: Manifest | null,
    /** the node cannot go on (deposed, or its log cannot follow the stream): the process must restart */
    private readonly fatal: (reason: string) => void,
  ) {
    this.nodeId = config.nodeId;
    this.seeded = seeded;
    this.stored = seeded;
    // Started from a stored snapshot: the stream is followed from the first position it does not cover.
    if (seeded) this.applied = seeded.streamStart - 1;
  }

  /**
   * Connects to NATS and makes sure the stream and the buckets exist (the first node to start creates them).
   * A node whose data directory is empty, or whose log ends before the stream's first record (it was down
   * longer than the stream's retention), writes the cluster's latest stored snapshot there first: open the
   * data directory after this.
   */
  static async connect(config: ClusterConfig, log: Logger, dataDir: string, fatal: (reason: string) => void): Promise<ClusterNode> {
    const nc = await connect({ servers: config.servers, name: `chat-${config.nodeId}`, maxReconnectAttempts: -1 });
    const js = jetstream(nc);
    // A NATS cluster that has just started may take a moment to elect its JetStream leaders: until then the
    // set-up is tried again.
    const deadline = Date.now() + SETUP_WAIT_MS;
    for (;;) {
      try {
        const jsm = await jetstreamManager(nc);
        try {
          await jsm.streams.info(STREAM);
        } catch {
          // Several nodes starting at once may all try: the same configuration added twice is one stream.
          await jsm.streams.add({ name: STREAM, subjects: [SUBJECT], num_replicas: config.replicas, storage: StorageType.File });
        }
        const kvm = new Kvm(js);
        const lease = await kvm.create(LEASE_BUCKET, { history: 1, ttl: config.leaseMs, replicas: config.replicas });
        const nodes = await kvm.create(NODES_BUCKET, { history: 1, ttl: config.leaseMs * 3, replicas: config.replicas });
        // A replicated stream answers once its own leader is elected, a moment after it was created.
        if (!(await jsm.streams.info(STREAM)).cluster?.leader) throw new Error('the log stream has no leader yet');
        await lease.get(LEASE_KEY);
        await nodes.put(config.nodeId, '');
        // An empty data directory, or one the stream's retention left behind, starts from the stored snapshot.
        const empty = !hasData(dataDir);
        const snapshots = empty || (await ClusterNode.behindStream(jsm, dataDir)) ? await SnapshotBucket.find(js) : null;
        if (snapshots && !empty) {
          log.warn({ dataDir, aside: BEHIND_DATA_FILE }, "cluster: the log stream no longer holds the records after this node's log; starting from the stored snapshot");
          await rename(join(dataDir, 'data.mdb'), join(dataDir, BEHIND_DATA_FILE));
          await rm(join(dataDir, 'lock.mdb'), { force: true });
          removeSearchIndex(dataDir);
        }
        const seeded = snapshots ? await snapshots.restoreInto(dataDir) : null;
        if (seeded) log.info({ seq: seeded.seq, streamStart: seeded.streamStart, files: seeded.files.length }, "cluster: started from the cluster's stored snapshot");
        return new ClusterNode(config, log, nc, js, jsm, lease, nodes, snapshots, dataDir, seeded, fatal);
      } catch (error) {
        if (Date.now() > deadline) {
          await nc.close();
          throw error;
        }
        log.info({ err: error }, 'cluster: JetStream not ready yet');
        await new Promise((resolve) => setTimeout(resolve, SETUP_RETRY_MS));
      }
    }
  }

  /** Whether the stream's first record comes after the one that follows the log in `dataDir` (a gap). */
  private static async behindStream(jsm: JetStreamManager, dataDir: string): Promise<boolean> {
    const { first_seq: first, last_seq: last } = (await jsm.streams.info(STREAM)).state;
    if (first <= 1) return false;
    const local = new Store(dataDir);
    let logPosition: number;
    try {
      logPosition = local.lastSeq();
    } finally {
      await local.close();
    }
    // The first record after the term markers that may begin the stream.
    for (let seq = first; seq <= last; seq++) {
      const message = await jsm.streams.getMessage(STREAM, { seq });
      if (!message || message.header?.get(TERM_HEADER)) continue;
      return decode<LogRecord>(message.data).seq > logPosition + 1;
    }
    return false;
  }

  /** The data directory as the runtime must see it: appends go through the stream while this node leads. */
  attach(local: Store): ReplicatedStore {
    this.local = local;
    this.replicated = new ReplicatedStore(local, (streamSeq) => this.advance(streamSeq));
    return this.replicated;
  }

  isPrimary(): boolean {
    return this.role === 'primary' && this.replicated!.leading;
  }

  /**
   * Starts following the stream and taking part in the election, this node's API being at `url`.
   * `promoted` runs each time this node becomes the primary, once it takes writes.
   */
  async start(
    runtime: Runtime,
    url: string,
    promoted: () => Promise<void>,
    /** applies one of the primary's records here (Runtime.follow, and what goes with it) */
    apply: (record: LogRecord) => Promise<void> = (record) => runtime.follow(record),
  ): Promise<void> {
    this.runtime = runtime;
    this.apply = apply;
    this.url = this.config.advertiseUrl ?? url;
    await this.nodes.put(this.nodeId, this.leaseValue());
    this.nc.subscribe(SHARED_SUBJECT, {
      callback: (error, message) => {
        if (error) return;
        const { from, shared } = message.json<{ from: string; shared: Shared }>();
        if (from !== this.nodeId) runtime.receiveShared(shared);
      },
    });
    this.follow();
    const interval = Math.max(100, Math.floor(this.config.leaseMs / 3));
    this.timer = setInterval(() => void this.tick(promoted), interval);
    await this.tick(promoted);
  }

  // ---- the stream ---------------------------------------------------------------------------------------

  /** Applies the stream's records after this node's log, in order, until stopped (promotion or shutdown). */
  private follow(): void {
    const runtime = this.runtime!;
    const follower: Follower = { stopping: false, messages: null, done: Promise.resolve() };
    this.follower = follower;
    follower.done = (async () => {
      const consumer = await this.js.consumers.get(STREAM, { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: this.applied + 1 });
      const messages = await consumer.consume();
      follower.messages = messages;
      // Stopped while the consumer was being made (a promotion right after the start): the loop below ends at
      // once. (Not awaited: a consumer's close completes only as its loop takes the stop in turn.)
      if (follower.stopping) void messages.close();
      for await (const message of messages) {
        if (!message.headers?.get(TERM_HEADER)) {
          const record = decode<LogRecord>(message.data);
          // Records this node's own log holds already (it replayed them at boot) are skipped.
          if (record.seq > runtime.logPosition + 1) {
            this.fatal(`the log stream no longer holds records ${runtime.logPosition + 1} to ${record.seq - 1} (its retention dropped them): ` +
              "restarted, this node starts again from the cluster's stored snapshot");
            return;
          }
          if (record.seq > runtime.logPosition) {
            this.apply(record).catch((error: unknown) => this.fatal(`the local log could not store record ${record.seq}: ${String(error)}`));
          }
        }
        this.advance(message.seq);
      }
    })().catch((error: unknown) => {
      if (!this.stopped && !follower.stopping) this.fatal(`following the log stream failed: ${error instanceof Error ? error.message : String(error)}`);
    });
  }

  /**
   * Stops applying the stream's records, whichever step the follower is at: closing its messages ends the
   * loop, and a follower still making its consumer (a request, bounded by the client's timeout) sees that it
   * stops once the consumer is made. (Closing only the messages left a promotion right after the start
   * waiting for ever on a loop nobody would close.)
   */
  private async stopFollowing(): Promise<void> {
    const follower = this.follower;
    if (!follower) return;
    this.follower = null;
    follower.stopping = true;
    await follower.messages?.close().catch(() => undefined);
    await follower.done;
  }

  private advance(streamSeq: number): void {
    this.applied = streamSeq;
    if (streamSeq > this.streamLast) this.streamLast = streamSeq;
    this.waiters.reached(streamSeq);
  }

  /**
   * The stream's last position, looked up now. Callers that come while a look-up is in flight wait for the
   * next one (the one in flight may have been asked before their write was stored), which they all share.
   */
  private streamPosition(): Promise<number> {
    this.nextLookup ??= this.lookupInFlight.then(() => {
      this.nextLookup = null;
      const asked = this.jsm.streams.info(STREAM).then((info) => {
        this.streamLast = Math.max(this.streamLast, info.state.last_seq);
        return info.state.last_seq;
      });
      this.lookupInFlight = asked.catch(() => undefined);
      return asked;
    });
    return this.nextLookup;
  }

  async caughtUp(): Promise<void> {
    if (this.isPrimary()) return;
    const target = await this.streamPosition();
    if (this.applied >= target) return;
    if (!(await this.waiters.wait(target, this.config.readWaitMs))) {
      throw new ChatError(ErrorCode.INTERNAL_SERVER_ERROR, `This node has not caught up with the cluster's log (at ${this.applied} of ${target}); try again`, 503, {}, { 'Retry-After': '1' });
    }
  }

  // ---- the lease ----------------------------------------------------------------------------------------

  private leaseValue(): string {
    return JSON.stringify({ node: this.nodeId, url: this.url } satisfies NodeInfo);
  }

  /**
   * The lease's holder, read now: a node that has not ticked since a primary was chosen (at start, after a
   * failover) learns of it here instead of refusing the write it should forward.
   */
  private async lookUpPrimary(): Promise<NodeInfo | null> {
    const entry = await this.lease.get(LEASE_KEY).catch(() => null);
    if (entry?.operation !== 'PUT') return null;
    if (this.role !== 'primary') this.primary = entry.json<NodeInfo>();
    return entry.json<NodeInfo>();
  }

  /** Renews this node's lease, or looks for the primary and takes the lease when nobody holds it. */
  private async tick(promoted: () => Promise<void>): Promise<void> {
    if (this.ticking || this.stopped) return;
    this.ticking = true;
    try {
      if (this.role === 'primary') {
        try {
          this.leaseRevision = await this.lease.update(LEASE_KEY, this.leaseValue(), this.leaseRevision);
        } catch (error) {
          this.depose(`could not renew the primary lease (${error instanceof Error ? error.message : String(error)})`);
          return;
        }
        // Its address too, which expires as a replica's does: the other nodes forward the polls of its queues there.
        await this.nodes.put(this.nodeId, this.leaseValue());
        return;
      }
      await this.nodes.put(this.nodeId, this.leaseValue());
      const entry = await this.lease.get(LEASE_KEY);
      if (entry && entry.operation === 'PUT') {
        this.primary = entry.json<NodeInfo>();
        return;
      }
      this.primary = null;
      let revision: number;
      try {
        revision = await this.lease.create(LEASE_KEY, this.leaseValue());
      } catch {
        return; // another node took it first
      }
      this.leaseRevision = revision;
      await this.promote(promoted);
    } catch (error) {
      this.log.warn({ err: error }, 'cluster: lease check failed');
    } finally {
      this.ticking = false;
    }
  }

  /**
   * Holding the lease: applies the whole stream, stops following it, and appends a term marker right after
   * the last record applied. That append fails if anyone appended meanwhile, and once it is stored any
   * append of a former primary (which expects an earlier last position) is refused.
   */
  private async promote(promoted: () => Promise<void>): Promise<void> {
    const last = await this.streamPosition();
    if (!(await this.waiters.wait(last, this.config.leaseMs))) {
      this.log.warn({ applied: this.applied, last }, 'cluster: took the lease but could not catch up in time; giving it back');
      await this.lease.delete(LEASE_KEY).catch(() => undefined);
      return;
    }
    await this.stopFollowing();
    const marker = headers();
    marker.set(TERM_HEADER, this.nodeId);
    let termSeq: number;
    try {
      termSeq = (await this.js.publish(SUBJECT, new Uint8Array(0), { headers: marker, expect: { lastSequence: this.applied } })).seq;
    } catch (error) {
      this.log.warn({ err: error, applied: this.applied }, 'cluster: the stream moved on while taking over; following it again');
      await this.lease.delete(LEASE_KEY).catch(() => undefined);
      this.follow();
      return;
    }
    this.advance(termSeq);
    this.replicated!.lead((record, after) => this.append(record, after), termSeq, this.runtime!.logPosition);
    this.role = 'primary';
    this.primary = { node: this.nodeId, url: this.url };
    this.log.info({ node: this.nodeId, streamSeq: termSeq, logPosition: this.runtime!.logPosition }, 'cluster: this node is the primary');
    this.snapshotTimer = setInterval(() => void this.storeSnapshot(), this.config.snapshotMs);
    await promoted();
  }

  // ---- the stored snapshot and the stream's retention ---------------------------------------------------

  /**
   * At the primary: stores a snapshot of its data directory in the object store (when the log moved since
   * the last one), then drops the stream records that are too old or too many and that the snapshot before
   * it covers. Keeping the records after the previous snapshot too, a node that is still copying that one
   * can follow the stream from where it ends.
   */
  private storeSnapshot(): Promise<void> {
    this.snapshotting ??= (async () => {
      if (!this.isPrimary() || this.stopped) return;
      const local = this.local!;
      const snapshots = await this.snapshotBucket(true);
      if (!this.readLatest) {
        // A former primary's snapshot counts: the stream may already have been trimmed to it.
        this.stored = (await snapshots.latest()) ?? this.stored;
        this.readLatest = true;
      }
      const last = { ...this.replicated!.stored };
      if (!this.stored || last.seq > this.stored.seq) {
        // The stream stored the record before LMDB did: the copy must hold it for the positions to agree.
        const deadline = Date.now() + SNAPSHOT_FLUSH_WAIT_MS;
        while (local.lastSeq() < last.seq && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
        const manifest = await snapshots.store(local, this.dataDir, join(this.dataDir, 'cluster-snapshot'), (seq) =>
          seq >= last.seq ? last.streamSeq + 1 : null);
        if (manifest) {
          this.stored = manifest;
          this.log.info({ seq: manifest.seq, streamStart: manifest.streamStart, files: manifest.files.length }, "cluster: stored a snapshot in the cluster's object store");
        }
      }
      if (this.stored?.previous) await this.trimStream(this.stored.previous.streamStart);
    })()
      .catch((error: unknown) => this.log.warn({ err: error }, "cluster: could not store a snapshot or trim the stream"))
      .finally(() => {
        this.snapshotting = null;
      });
    return this.snapshotting;
  }

  /** The object store of the snapshots and the organization's files: created if need be, or null if none was yet. */
  private async snapshotBucket(create: true): Promise<SnapshotBucket>;
  private async snapshotBucket(create: false): Promise<SnapshotBucket | null>;
  private async snapshotBucket(create: boolean): Promise<SnapshotBucket | null> {
    if (this.snapshots) return this.snapshots;
    if (!create) {
      const found = await SnapshotBucket.find(this.js);
      return (this.snapshots ??= found);
    }
    // Made by the primary once it stores a file or a snapshot (a cluster's start creates no bucket), once
    // however many ask at the same time (an upload and the snapshot timer); tried again after a failure.
    this.openingSnapshots ??= SnapshotBucket.open(this.js, this.config.replicas).finally(() => {
      this.openingSnapshots = null;
    });
    return (this.snapshots = await this.openingSnapshots);
  }

  /**
   * The organization's files (uploads, avatars, emoji), kept with the snapshots' in their object store:
   * written there by the primary before it records them, read by any node whose disk lacks them.
   */
  readonly files: SharedFiles = {
    put: async (path, data) => {
      if (!this.isPrimary()) throw new NotPrimary();
      await (await this.snapshotBucket(true)).putFile(path, data);
    },
    get: async (path) => (await this.snapshotBucket(false))?.getFile(path) ?? null,
    remove: async (path) => {
      // Only what the primary recorded or took back: a replica's requests that remove files are forwarded.
      if (this.isPrimary()) await (await this.snapshotBucket(true)).removeFile(path);
    },
  };

  /** Drops the records before the retention's bounds (CHAT_CLUSTER_RETENTION, _SIZE), never at or after `covered`. */
  private async trimStream(covered: number): Promise<void> {
    const { first_seq: first, last_seq: last, bytes, messages } = (await this.jsm.streams.info(STREAM)).state;
    const limit = Math.min(covered, last + 1);
    let cut = first;
    if (this.config.retentionBytes > 0 && bytes > this.config.retentionBytes && messages > 0) {
      cut = Math.max(cut, last + 1 - Math.floor(this.config.retentionBytes / (bytes / messages)));
    }
    if (this.config.retentionMs > 0) cut = Math.max(cut, await this.firstNewer(Date.now() - this.config.retentionMs, first, limit));
    cut = Math.min(cut, limit);
    if (cut <= first) return;
    const { purged } = await this.jsm.streams.purge(STREAM, { seq: cut });
    this.log.info({ purged, firstKept: cut }, 'cluster: dropped the stream records a stored snapshot covers');
  }

  /** The first stream position in [from, to) stored at or after `time`; `to` if none (positions are in time order). */
  private async firstNewer(time: number, from: number, to: number): Promise<number> {
    let low = from;
    let high = to;
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      const message = await this.jsm.streams.getMessage(STREAM, { seq: middle });
      if (!message || message.time.getTime() < time) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  private append(record: LogRecord, after: number): Promise<number> {
    return this.js.publish(SUBJECT, encode(record), { expect: { lastSequence: after } }).then(
      (ack) => ack.seq,
      (error: unknown) => {
        const reason = `the log stream refused record ${record.seq} (${error instanceof Error ? error.message : String(error)})`;
        this.depose(reason);
        throw new Error(reason);
      },
    );
  }

  private depose(reason: string): void {
    if (this.role !== 'primary') return;
    this.role = 'replica';
    this.fatal(`no longer the primary: ${reason}`);
  }

  share(shared: Shared): void {
    if (shared.kind === 'deliveries' && shared.deliveries.length === 0) return;
    if (this.nc.isClosed()) return;
    this.nc.publish(SHARED_SUBJECT, JSON.stringify({ from: this.nodeId, shared }));
  }

  // ---- requests -----------------------------------------------------------------------------------------

  takeForwardMark(request: ApiRequest): boolean {
    return takeForwardMark(request);
  }

  async forwardToPrimary(request: ApiRequest): Promise<ApiResponse> {
    const primary = this.primary ?? (await this.lookUpPrimary());
    if (!primary || primary.node === this.nodeId) throw new ChatError(ErrorCode.INTERNAL_SERVER_ERROR, 'The cluster has no primary right now; try again', 503, {}, { 'Retry-After': '1' });
    this.forwarded++;
    const response = await forwardHttp(primary.url, request).catch(() => {
      throw new ChatError(ErrorCode.INTERNAL_SERVER_ERROR, 'The cluster\'s primary did not answer; try again', 503, {}, { 'Retry-After': '1' });
    });
    // The writer reads its write through this node next: it is applied here before the answer goes back.
    await this.caughtUp();
    return response;
  }

  async forwardToNode(nodeId: string, queueId: string, request: ApiRequest): Promise<ApiResponse> {
    const url = await this.nodeUrl(nodeId);
    if (!url) throw queueGone(queueId);
    this.forwarded++;
    // A node that does not answer is gone, and its queues with it: the client registers again.
    return forwardHttp(url, request).catch(() => {
      throw queueGone(queueId);
    });
  }

  forwardSocket(nodeId: string, queueId: string, request: ApiRequest, authorization: string): ForwardedSocket {
    return new ForwardedSocket(this.nodeUrl(nodeId), request, authorization, () => queueGone(queueId), () => this.forwarded++);
  }

  /** The HTTP address of a node that is alive (its key in the nodes' bucket is kept fresh), or null. */
  private async nodeUrl(nodeId: string): Promise<string | null> {
    const entry = await this.nodes.get(nodeId);
    if (!entry || entry.operation !== 'PUT' || entry.length === 0) return null;
    return entry.json<NodeInfo>().url;
  }

  health(): Record<string, unknown> {
    return {
      node_id: this.nodeId,
      role: this.isPrimary() ? 'primary' : 'replica',
      stored_snapshot_position: this.stored?.seq ?? null,
      primary: this.primary?.node ?? null,
      applied_stream_position: this.applied,
      stream_position: this.streamLast,
      lag: Math.max(0, this.streamLast - this.applied),
      forwarded_requests: this.forwarded,
    };
  }

  /** What /metrics says of this node's place in the cluster. */
  registerMetrics(metrics: Metrics): void {
    metrics.gauge('chat_cluster_primary', '1 while this node is the primary of its cluster', () => (this.isPrimary() ? 1 : 0));
    metrics.gauge('chat_cluster_applied_position', 'stream position of the last log record this node applied', () => this.applied);
    metrics.gauge('chat_cluster_stream_position', "the log stream's last position as last seen", () => this.streamLast);
    metrics.gauge('chat_cluster_stored_snapshot_position', "log position of the cluster's latest stored snapshot, as this node knows it (0: none)", () => this.stored?.seq ?? 0);
    metrics.gauge('chat_cluster_forwarded_requests', 'requests this node forwarded to another (writes, polls of its queues)', () => this.forwarded);
  }

  /** Graceful stop: gives the lease up at once (another node need not wait for it to expire). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.snapshotTimer) clearInterval(this.snapshotTimer);
    await this.snapshotting;
    await this.stopFollowing();
    const wasPrimary = this.role === 'primary';
    // What the stopping server still commits (a queue's removal) is not a write of the cluster's.
    this.role = 'replica';
    if (wasPrimary) await this.lease.delete(LEASE_KEY).catch(() => undefined);
    await this.nodes.delete(this.nodeId).catch(() => undefined);
    await this.nc.drain().catch(() => undefined);
  }
}

/** The stream's records being applied at a replica (ClusterNode.follow). */
interface Follower {
  stopping: boolean;
  /** null until its consumer is made */
  messages: ConsumerMessages | null;
  /** the applying loop: resolves once it has stopped */
  done: Promise<void>;
}

/** The answer for a queue whose node is gone: as Zulip's event servers, the client registers again. */
function queueGone(queueId: string): ChatError {
  return new ChatError(ErrorCode.BAD_EVENT_QUEUE_ID, `Bad event queue ID: ${queueId}`, 400, { queue_id: queueId });
}
