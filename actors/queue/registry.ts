import type { Disconnect } from '../disconnect.ts';
import { ChatError, ErrorCode } from '../errors.ts';
import { Later } from '../later.ts';
import type { ApiEvent, Delivery } from '../events.ts';
import { EventBuffer, NO_EVENTS, type BufferedEvent, type LoggedEvent } from './buffer.ts';
import { deliveryTypes, gateFor, renderFor, shapeFor } from './capabilities.ts';
import type { QueueLimits } from './limits.ts';
import { asciiJson } from './frame-bytes.ts';
import { endLifecycle } from './machine.ts';
import { compileEventNarrow, type MessageFilter } from './narrow.ts';
import { Payloads } from './payloads.ts';
import type { QueueContext, QueueSpec } from './spec.ts';
import { SweepSlots } from './sweep-slots.ts';

export interface QueueTimings {
  /** a held poll gets a heartbeat after this long, give or take 10% (the original: 45-55 s) */
  heartbeatMs: number;
  /** the default idle lifespan of a queue (the original: 10 minutes) */
  idleTimeoutMs: number;
  /** how often the one sweep timer looks for due heartbeats and idle queues */
  sweepMs: number;
}

/** A held poll: settled with the events handed out (none when its client went away). */
class HeldPoll extends Later<readonly BufferedEvent[]> {
  constructor(readonly queue: Queue) {
    super();
  }
}

/**
 * The client of a held poll went away: its events stay queued for the next poll. The request still ends
 * here, so the front end stops counting it as in flight (a graceful stop waits for those).
 */
function abandon(held: HeldPoll): void {
  const queue = held.queue;
  if (queue.held !== held) return;
  queue.held = null;
  queue.heartbeatAt = null;
  held.settle(NO_EVENTS);
}

/**
 * A connection that takes a queue's events as they come (the front end's WebSocket), instead of polling.
 * The queue layer knows it only through these two calls; how the bytes travel is the front end's business.
 */
export interface QueueSubscriber {
  /**
   * Events the subscriber has not been sent yet: `events` from index `first` on, handed out (their ids are
   * now the client's to acknowledge). The array is the queue's own: read it now, keep nothing of it.
   */
  push(events: readonly BufferedEvent[], first: number): void;
  /** the subscriber no longer has the queue: it was deleted, or a newer poll or subscriber took it */
  evict(reason: ChatError): void;
}

export class Queue {
  /** the long-poll held on the queue, if any: the queue is `polling` while this is set, `idle` otherwise */
  held: HeldPoll | null = null;
  /** the push connection attached to the queue, if any (never at the same time as a held poll) */
  subscriber: QueueSubscriber | null = null;
  /** the id of the newest event pushed to the subscriber: it is sent only the events after it */
  pushedThrough = -1;
  /**
   * UNIX ms; garbage collection counts from here, and only while no poll is held and no subscriber is
   * attached (a subscriber detaching counts as a poll starting)
   */
  lastPollStartedAt: number;
  /** when the held poll or the subscriber gets a heartbeat */
  heartbeatAt: number | null = null;
  /** its place in the registry's SweepSlots */
  sweepSlot = -1;
  /** changed since the last snapshot wrote it: a logged event arrived, or it is new */
  unsaved = true;
  /** the queue's `narrow` as a test of message events, compiled once; null: every message */
  readonly narrow: MessageFilter | null;
  /** the event types it asked for, looked up for every event it might get; null: every type */
  private readonly types: ReadonlySet<string> | null;
  /**
   * The one type it asked for, if it asked for one (most clients: `message`): compared in place, without
   * reaching the set's memory, for every queue a delivery may reach.
   */
  private readonly onlyType: string | null;
  /** its machine (machine.ts) reached `collected`: deleted or garbage-collected, and the registry let it go */
  collected = false;
  /** in the registry's list of queues to wake */
  wakePending = false;
  constructor(
    readonly context: QueueContext,
    readonly buffer: EventBuffer,
    lastPollStartedAt: number,
    /** the same object for queues whose specs are equal, so whose events take the same shape (SpecKinds) */
    readonly specKind: SpecKind,
  ) {
    this.lastPollStartedAt = lastPollStartedAt;
    const { narrow, eventTypes } = context.spec;
    this.narrow = compileEventNarrow(narrow);
    this.types = eventTypes === null ? null : new Set(eventTypes);
    this.onlyType = this.types?.size === 1 ? eventTypes![0]! : null;
  }

  get id(): string {
    return this.context.queueId;
  }

  /** Its id as JSON text in ASCII (asciiJson), made once: written into every answer to its polls. */
  get idJson(): string {
    return (this.idJsonText ??= asciiJson(this.context.queueId));
  }

  private idJsonText: string | null = null;

  accepts(type: string): boolean {
    // A restart concerns every client, whatever it asked for.
    if (this.types === null || type === 'restart') return true;
    return this.onlyType !== null ? type === this.onlyType : this.types.has(type);
  }

  acceptsAny(types: readonly string[]): boolean {
    const wanted = this.types;
    if (wanted === null) return true;
    const only = this.onlyType;
    // A loop, not `some`: this runs for every queue a delivery may reach, and a callback would be allocated each time.
    for (let i = 0; i < types.length; i++) if (only !== null ? types[i] === only : wanted.has(types[i]!)) return true;
    return false;
  }

  /** The last sign of its client: now if a poll is held or a subscriber attached, else when the last poll started. */
  get lastActiveAt(): number {
    return this.held || this.subscriber ? Infinity : this.lastPollStartedAt;
  }
}

/** Where a delivery goes: the queues that get one event, in one shape (capabilities.ts). */
export interface Routed {
  event: ApiEvent;
  /** the shape every one of these queues gets the event in (null: as it is) */
  shape: string | null;
  queues: Queue[];
}

type Gate = (spec: QueueSpec) => boolean;

/** Held polls completed per turn of the event loop (see scheduleWake). */
const WAKE_SLICE = 256;

export interface QueueRegistryOptions {
  timings: QueueTimings;
  limits: QueueLimits;
  now(): number;
  /** told when the sweep collected an idle queue (the runtime logs it) */
  onExpired?(queue: Queue): void;
  /** told when a queue's buffer went over its limits: the runtime drops the queue (and logs that) */
  onOverflow?(queue: Queue): void;
}

/**
 * Every live event queue, indexed by id, realm and user; the event buffers; held long-polls; and the
 * single sweep timer that sends heartbeats and collects idle queues.
 */
export class QueueRegistry {
  /** the events the buffers hold, each shared by the queues it went to */
  readonly payloads = new Payloads();
  readonly timings: QueueTimings;
  readonly limits: QueueLimits;
  private readonly now: () => number;
  private readonly onExpired: (queue: Queue) => void;
  private readonly onOverflow: (queue: Queue) => void;
  private readonly byId = new Map<string, Queue>();
  private readonly byRealm = new Map<number, Set<Queue>>();
  /**
   * realm id -> user id -> queues: numeric keys, looked up once per recipient of every event. An array, not a
   * Set: a user has a few queues, and a fan-out reads one list per recipient (a Set is two objects to fetch).
   */
  private readonly byUser = new Map<number, Map<number, Queue[]>>();
  /** per realm, the queues registered with `all_public_streams` (usually a few bots) */
  private readonly allPublicByRealm = new Map<number, Set<Queue>>();
  private readonly specKinds = new SpecKinds();
  private readonly sweepSlots = new SweepSlots<Queue>();
  /**
   * Queues to wake, in order, each once (Queue.wakePending), from `wakeNext` on. An array, not a Set: a Set
   * emptied from its head a slice at a time is walked past its deleted entries again by every slice.
   */
  private toWake: Queue[] = [];
  private wakeNext = 0;
  private wakeScheduled = false;
  private readonly wakeSlice = () => this.wake();
  private sweeper: NodeJS.Timeout | null = null;

  constructor(options: QueueRegistryOptions) {
    this.timings = options.timings;
    this.limits = options.limits;
    this.now = options.now;
    this.onExpired = options.onExpired ?? (() => {});
    this.onOverflow = options.onOverflow ?? (() => {});
  }

  get size(): number {
    return this.byId.size;
  }

  /** A new queue; the runtime logs its registration (see Runtime.createQueue). */
  open(context: QueueContext): Queue {
    return this.add(context, new EventBuffer(this.payloads), context.createdAt);
  }

  /**
   * A queue from a snapshot (queue/snapshot.ts). It never has a held poll (the connection that held it is
   * gone), and its idle time counts from now, so its client has a whole lifespan to come back after a
   * restart or a crash.
   */
  restore(context: QueueContext, buffer: EventBuffer, rebuilt: boolean): Queue {
    buffer.rebuilt = rebuilt;
    const queue = this.add(context, buffer, this.now());
    queue.unsaved = false;
    return queue;
  }

  /**
   * Makes room for a new queue of a user. At the user's limit: the queues to collect for it, the least
   * recently active first (a client that still polls one gets BAD_EVENT_QUEUE_ID and registers again, as
   * after an idle collection; refusing instead would lock the user out for as long as the leftover queues
   * live, up to days). At the organization's limit: a refusal.
   */
  admit(realmId: number, userId: number): Queue[] {
    const own = this.byUser.get(realmId)?.get(userId);
    if (own && own.length >= this.limits.perUser) {
      const oldest = [...own].sort((a, b) => a.lastActiveAt - b.lastActiveAt || a.lastPollStartedAt - b.lastPollStartedAt);
      return oldest.slice(0, own.length - this.limits.perUser + 1);
    }
    if ((this.byRealm.get(realmId)?.size ?? 0) >= this.limits.perRealm) {
      throw new ChatError(ErrorCode.BAD_REQUEST, `This organization has reached its limit of ${this.limits.perRealm} event queues; try again later`);
    }
    return [];
  }

  /** A queue by id whoever owns it, if it is live. */
  find(queueId: string): Queue | undefined {
    return this.byId.get(queueId);
  }

  private add(context: QueueContext, buffer: EventBuffer, lastPollStartedAt: number): Queue {
    const queue = new Queue(context, buffer, lastPollStartedAt, this.specKinds.take(context.spec));
    this.byId.set(context.queueId, queue);
    setOf(this.byRealm, context.realmId).add(queue);
    let users = this.byUser.get(context.realmId);
    if (!users) this.byUser.set(context.realmId, (users = new Map()));
    const own = users.get(context.userId);
    if (own) own.push(queue);
    else users.set(context.userId, [queue]);
    if (context.spec.allPublicStreams) setOf(this.allPublicByRealm, context.realmId).add(queue);
    this.sweepSlots.take(queue, sweepBound(queue));
    return queue;
  }

  /** The caller's queue, or BAD_EVENT_QUEUE_ID for an unknown, collected or foreign one. */
  get(queueId: string, realmId: number, userId: number): Queue {
    const queue = this.byId.get(queueId);
    if (!queue || queue.collected || queue.context.realmId !== realmId || queue.context.userId !== userId) throw badQueueId(queueId);
    return queue;
  }

  heldCount(): number {
    let held = 0;
    for (const queue of this.byId.values()) if (queue.held) held++;
    return held;
  }

  attachedCount(): number {
    let attached = 0;
    for (const queue of this.byId.values()) if (queue.subscriber) attached++;
    return attached;
  }

  /** Every live queue (for server-wide events such as `restart`). */
  all(): Queue[] {
    return [...this.byId.values()];
  }

  /** The queues a snapshot has to write: those changed since the last one wrote them. */
  unsaved(): Queue[] {
    const out: Queue[] = [];
    for (const queue of this.byId.values()) if (queue.unsaved) out.push(queue);
    return out;
  }

  /**
   * Where a delivery goes, resolved when the change is applied and filled after commit: the queues that get
   * it, grouped by the event each gets and its shape (one group, unless the delivery selects an event per
   * queue or the queues' capabilities differ). A queue takes it if it asked for the type, passes the event's
   * capability gate (capabilities.ts), and, for a message, its narrow. Per queue that is a few lookups; the
   * gate and the narrow are null for most. The shape is found here, where each queue is read anyway, so
   * that the delivery after the commit (`deliverRouted`) goes over each queue once more, not twice.
   */
  resolve(delivery: Delivery): Routed[] {
    const { audience, event } = delivery;
    // A selected delivery (a new message) has no capability gate: its select gives each queue its shape.
    const routing = new Routing(delivery, deliveryTypes(event), delivery.select ? null : gateFor(delivery.event));
    switch (audience.kind) {
      case 'realm':
        routing.routeAll(this.byRealm.get(delivery.realmId));
        break;
      case 'all_public_streams':
        routing.routeAll(this.allPublicByRealm.get(delivery.realmId));
        break;
      case 'users': {
        const users = this.byUser.get(delivery.realmId);
        if (!users) break;
        for (const userId of audience.userIds) routing.routeUser(users.get(userId));
        break;
      }
    }
    return routing.out;
  }

  /**
   * Appends one event to many queues and wakes their held polls. The event is serialized once per shape
   * (client capabilities may change it, see capabilities.ts), not once per queue. `logged`: a log entry
   * announced it, so a replay after a crash gives it again with the same id (see buffer.ts).
   */
  deliver(queues: readonly Queue[], event: ApiEvent, logged = false): void {
    const byShape = new Map<string, Queue[]>();
    let plain: Queue[] | null = null;
    for (const queue of queues) {
      if (queue.collected) continue;
      const shape = shapeFor(event, queue.context.spec);
      if (shape === null) (plain ??= []).push(queue);
      else {
        let group = byShape.get(shape);
        if (!group) byShape.set(shape, (group = []));
        group.push(queue);
      }
    }
    if (plain) this.append(plain, [event], logged);
    for (const group of byShape.values()) this.append(group, renderFor(event, group[0]!.context.spec), logged);
  }

  /** Delivers what `resolve` grouped: its queues all take the event in the group's shape. */
  deliverRouted({ event, shape, queues }: Routed, logged = false): void {
    this.append(queues, shape === null ? [event] : renderFor(event, queues[0]!.context.spec), logged);
  }

  private append(queues: readonly Queue[], events: readonly ApiEvent[], logged: boolean): void {
    const entries: LoggedEvent[] = events.map((event) => ({
      payload: this.payloads.create(event.type, JSON.stringify(event)),
      merge: logged ? flagMerge(event) : undefined,
    }));
    const { events: maxEvents, bytes: maxBytes } = this.limits;
    // One pass over the queues (each touched once: at 10,000 queues, their memory is what a delivery waits on).
    for (const queue of queues) {
      // A queue deleted since the delivery was resolved takes nothing.
      if (queue.collected) continue;
      const buffer = queue.buffer;
      for (const entry of entries) {
        if (!queue.accepts(entry.payload.type)) continue;
        if (logged) {
          buffer.pushLogged(entry);
          queue.unsaved = true;
        } else {
          buffer.pushEphemeral(entry.payload);
        }
      }
      if (buffer.events.length > maxEvents || buffer.bytes > maxBytes) {
        this.onOverflow(queue);
        if (queue.collected) continue;
      }
      if ((queue.held || queue.subscriber) && !buffer.isEmpty) this.scheduleWake(queue);
    }
  }

  /**
   * One long-poll (GET /events): acknowledge, complete any poll already held on the queue, then answer at
   * once if there is something to send (or the client said not to block), else hold until an event or the
   * heartbeat. The events handed out (written as text by eventsJson, as bytes by eventsBytes), at once when
   * the poll is answered at once, else later (a Later, not a promise: thousands are held at once, see later.ts).
   */
  poll(queue: Queue, lastEventId: number | undefined, dontBlock: true, signal?: Disconnect): readonly BufferedEvent[];
  poll(queue: Queue, lastEventId: number | undefined, dontBlock: boolean, signal?: Disconnect): readonly BufferedEvent[] | Later<readonly BufferedEvent[]>;
  poll(queue: Queue, lastEventId: number | undefined, dontBlock: boolean, signal?: Disconnect): readonly BufferedEvent[] | Later<readonly BufferedEvent[]> {
    if (lastEventId !== undefined) queue.buffer.acknowledge(lastEventId);
    this.takeOver(queue);
    queue.lastPollStartedAt = this.now();
    if (!queue.buffer.isEmpty || dontBlock || signal?.aborted) return queue.buffer.handOutAll();
    queue.heartbeatAt = queue.lastPollStartedAt + jitter(this.timings.heartbeatMs);
    this.sweepSlots.lower(queue, queue.heartbeatAt);
    const held = new HeldPoll(queue);
    queue.held = held;
    signal?.onAbort(abandon, held);
    return held;
  }

  /**
   * Attaches a push connection (a WebSocket) to a queue, as a poll would take it: acknowledge, take the queue
   * from a held poll or an earlier subscriber (the newer connection wins, as between two polls), push every
   * unacknowledged event at once, then each new one as it is delivered. A bad `lastEventId` throws, as for
   * a poll, and leaves the queue to whoever had it.
   */
  attach(queue: Queue, lastEventId: number, subscriber: QueueSubscriber): void {
    queue.buffer.acknowledge(lastEventId);
    this.takeOver(queue);
    queue.subscriber = subscriber;
    queue.pushedThrough = queue.buffer.newestPrunedId;
    queue.heartbeatAt = this.now() + jitter(this.timings.heartbeatMs);
    this.sweepSlots.lower(queue, queue.heartbeatAt);
    this.push(queue);
  }

  /** The subscriber's acknowledgement: drops the events up to `lastEventId`, with the rules of a poll's. */
  acknowledge(queue: Queue, subscriber: QueueSubscriber, lastEventId: number): void {
    // An evicted subscriber's late acknowledgement says nothing about what the queue's new holder has read.
    if (queue.subscriber !== subscriber) return;
    queue.buffer.acknowledge(lastEventId);
  }

  /** The subscriber's connection closed: the queue goes back to long-poll rules, its events stay queued. */
  detach(queue: Queue, subscriber: QueueSubscriber): void {
    if (queue.subscriber !== subscriber) return;
    queue.subscriber = null;
    queue.heartbeatAt = null;
    // The idle lifespan counts from the moment the client was last connected, as from a poll's start.
    queue.lastPollStartedAt = this.now();
  }

  /** Deletes a queue (DELETE /events, or a logged deletion or collection on replay). */
  remove(queue: Queue, reason: 'queue.delete' | 'queue.expire'): void {
    if (queue.held) this.complete(queue);
    const subscriber = queue.subscriber;
    if (subscriber) {
      queue.subscriber = null;
      subscriber.evict(badQueueId(queue.id));
    }
    queue.collected = endLifecycle(queue.context, { type: reason });
    queue.buffer.clear();
    this.forget(queue);
  }

  /** A new poll or subscriber takes the queue: the held poll completes, an attached subscriber is evicted. */
  private takeOver(queue: Queue): void {
    if (queue.held) this.complete(queue);
    const subscriber = queue.subscriber;
    if (!subscriber) return;
    queue.subscriber = null;
    queue.heartbeatAt = null;
    subscriber.evict(new ChatError(ErrorCode.BAD_REQUEST, 'A newer connection took over this event queue', 409, { queue_id: queue.id }));
  }

  /** Sends the subscriber the events it has not been sent yet, if any. */
  private push(queue: Queue, now = this.now()): void {
    const subscriber = queue.subscriber;
    if (!subscriber) return;
    const first = queue.buffer.handOutAfter(queue.pushedThrough);
    if (first < 0) return;
    const events = queue.buffer.events;
    queue.pushedThrough = events[events.length - 1]!.id;
    queue.heartbeatAt = now + jitter(this.timings.heartbeatMs);
    this.sweepSlots.lower(queue, queue.heartbeatAt);
    subscriber.push(events, first);
  }

  /** Completes the held poll of a queue with what it has buffered now. */
  private complete(queue: Queue): void {
    const held = queue.held;
    if (!held) return;
    queue.held = null;
    queue.heartbeatAt = null;
    held.settle(queue.buffer.handOutAll());
  }

  /**
   * Held polls are completed from a setImmediate, not from inside the request that caused the event:
   * that request's socket is corked, and completing other sockets from there costs many more syscalls.
   * They are completed a slice at a time, a setImmediate each (a held poll's answer is written as it is
   * completed, see later.ts), so that other requests are read between slices of a 10,000-queue fan-out.
   */
  private scheduleWake(queue: Queue): void {
    if (queue.wakePending) return;
    queue.wakePending = true;
    this.toWake.push(queue);
    if (this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(this.wakeSlice);
  }

  private wake(): void {
    const toWake = this.toWake;
    const end = Math.min(toWake.length, this.wakeNext + WAKE_SLICE);
    // One reading of the clock for the slice's heartbeat deadlines (50 s, jittered by 10 %) is close enough.
    const now = this.now();
    while (this.wakeNext < end) {
      const waking = toWake[this.wakeNext++]!;
      waking.wakePending = false;
      // A queue deleted since has neither a held poll nor a subscriber: nothing to do.
      if (waking.held) this.complete(waking);
      else this.push(waking, now);
    }
    if (this.wakeNext < toWake.length) {
      setImmediate(this.wakeSlice);
      return;
    }
    this.toWake = [];
    this.wakeNext = 0;
    this.wakeScheduled = false;
  }

  private forget(queue: Queue): void {
    const { queueId, realmId, userId } = queue.context;
    // Forgotten once, however often it is removed.
    if (this.byId.get(queueId) === queue) this.specKinds.drop(queue.specKind);
    this.byId.delete(queueId);
    this.byRealm.get(realmId)?.delete(queue);
    const users = this.byUser.get(realmId);
    const own = users?.get(userId);
    const at = own ? own.indexOf(queue) : -1;
    if (at >= 0) {
      own!.splice(at, 1);
      if (own!.length === 0) users!.delete(userId);
    }
    this.allPublicByRealm.get(realmId)?.delete(queue);
    this.sweepSlots.release(queue);
  }

  /**
   * Heartbeats for held polls and attached subscribers that are due (a subscriber's after that long without
   * a push: a browser cannot see WebSocket pings, so it learns the server is alive from these), and
   * collection of queues idle past their lifespan.
   */
  sweep(): void {
    const now = this.now();
    for (const queue of this.sweepSlots.due(now)) {
      // Removed since the list was made, by the removal of one before it.
      if (queue.collected) continue;
      if (queue.held || queue.subscriber) {
        if (queue.heartbeatAt !== null && queue.heartbeatAt <= now) {
          queue.buffer.pushEphemeral(this.payloads.create('heartbeat', '{"type":"heartbeat"}'));
          if (queue.held) this.complete(queue);
          else this.push(queue);
        }
      } else if (now - queue.lastPollStartedAt >= queue.context.spec.idleTimeoutMs) {
        this.remove(queue, 'queue.expire');
        this.onExpired(queue);
        continue;
      }
      this.sweepSlots.set(queue, sweepBound(queue));
    }
  }

  startSweeping(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => this.sweep(), this.timings.sweepMs);
    this.sweeper.unref();
  }

  /** Completes every held poll (at shutdown) and stops the sweep timer. */
  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    for (const queue of this.byId.values()) this.complete(queue);
  }
}

/**
 * The earliest the sweep may have something to do for a queue: its heartbeat if one is set (a poll is held
 * or a subscriber attached), or its idle collection, whichever is sooner. Exact for an idle queue; for a
 * held one it may be early (a lifespan shorter than the heartbeat), which costs the sweep a look. Later
 * polls only move both later, and a heartbeat set anew lowers it (SweepSlots.lower), so it is never late.
 */
function sweepBound(queue: Queue): number {
  const idleAt = queue.lastPollStartedAt + queue.context.spec.idleTimeoutMs;
  return queue.heartbeatAt !== null && queue.heartbeatAt < idleAt ? queue.heartbeatAt : idleAt;
}

const badQueueId = (queueId: string) => new ChatError(ErrorCode.BAD_EVENT_QUEUE_ID, `Bad event queue ID: ${queueId}`, 400, { queue_id: queueId });

/**
 * The original merges unacknowledged `update_message_flags` events of the same operation and flag, except
 * removing `read` (whose events carry per-message details): the key they merge by, or none.
 */
function flagMerge(event: ApiEvent): LoggedEvent['merge'] {
  if (event.type !== 'update_message_flags') return undefined;
  const op = event.op as string | undefined;
  const flag = event.flag as string | undefined;
  if (op === 'remove' && flag === 'read') return undefined;
  const messages = event.messages as number[] | undefined;
  if (!messages || event.all === true) return undefined;
  return { key: `${op}:${flag}`, messages, event: event as Record<string, unknown> };
}

/**
 * One delivery's recipients being resolved: the queues that take it, grouped by event and shape. A queue of
 * the same spec kind as the last one routed, given the same event, joins the last one's group without its
 * shape being asked again (the capability adapters read the spec's capabilities, one more object per queue):
 * most queues of a fan-out are registered alike, by the same client.
 */
class Routing {
  readonly out: Routed[] = [];
  private lastEvent: ApiEvent | null = null;
  private lastKind: SpecKind | null = null;
  private lastGroup: Routed | null = null;
  constructor(
    private readonly delivery: Delivery,
    private readonly types: readonly string[],
    private readonly gate: Gate | null,
  ) {}

  /** A realm's queues, or those registered with `all_public_streams`. */
  routeAll(queues: ReadonlySet<Queue> | undefined): void {
    if (queues) for (const queue of queues) this.take(queue);
  }

  /** One user's queues (a loop by index: no iterator per recipient). */
  routeUser(queues: readonly Queue[] | undefined): void {
    if (queues) for (let i = 0; i < queues.length; i++) this.take(queues[i]!);
  }

  private take(queue: Queue): void {
    const { delivery, gate } = this;
    if (!queue.acceptsAny(this.types)) return;
    const context = queue.context;
    if (gate && !gate(context.spec)) return;
    const event = delivery.select ? delivery.select(context) : delivery.event;
    if (event === null) return;
    if (queue.narrow && event.type === 'message' && !queue.narrow(event)) return;
    let group = this.lastGroup;
    if (group === null || event !== this.lastEvent || queue.specKind !== this.lastKind) {
      group = groupOf(this.out, event, shapeFor(event, context.spec));
      this.lastGroup = group;
      this.lastEvent = event;
      this.lastKind = queue.specKind;
    }
    group.queues.push(queue);
  }
}

/** Queues whose specs are equal (as JSON text): a queue's events take their shape from its spec alone (capabilities.ts). */
interface SpecKind {
  readonly key: string;
  /** the live queues of this kind: the kind is forgotten with the last */
  queues: number;
}

/** The kinds of the live queues' specs, one object per kind. */
class SpecKinds {
  private readonly kinds = new Map<string, SpecKind>();

  take(spec: QueueSpec): SpecKind {
    const key = JSON.stringify(spec);
    let kind = this.kinds.get(key);
    if (!kind) this.kinds.set(key, (kind = { key, queues: 0 }));
    kind.queues++;
    return kind;
  }

  drop(kind: SpecKind): void {
    if (--kind.queues === 0) this.kinds.delete(kind.key);
  }
}

/** The group of an event and shape; a delivery has one, or one per shape (a handful): a scan finds it. */
function groupOf(routes: Routed[], event: ApiEvent, shape: string | null): Routed {
  for (const routed of routes) if (routed.event === event && routed.shape === shape) return routed;
  const routed: Routed = { event, shape, queues: [] };
  routes.push(routed);
  return routed;
}

function setOf<K, V>(map: Map<K, Set<V>>, key: K): Set<V> {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  return set;
}

/** A random time within 10% either side, so that polls held together do not all wake together. */
function jitter(ms: number): number {
  return Math.round(ms * (0.9 + Math.random() * 0.2));
}
