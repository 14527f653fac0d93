import { z } from 'zod';
import { badRequest, ChatError, ErrorCode } from '../actors/errors.ts';
import { queueNode } from '../actors/replication.ts';
import type { BufferedEvent } from '../actors/queue/buffer.ts';
import { asciiJson, EventsWriter } from '../actors/queue/frame-bytes.ts';
import type { Queue, QueueSubscriber } from '../actors/queue/registry.ts';
import type { RealmState, UserProfile } from '../actors/realm/state.ts';
import { realmVersion } from '../actors/realm/version.ts';
import { authenticate, realmForHost, requireActive } from './http/auth.ts';
import { API_PREFIX, checkRateLimit, rateLimitKey } from './http/dispatch.ts';
import { errorResponse } from './http/envelope.ts';
import { p, readParams } from './http/params.ts';
import type { ApiRequest } from './http/request.ts';
import type { SocketConnection, SocketEndpoint, SocketHandler } from './http/socket.ts';
import type { AppServices } from './services.ts';

/**
 * The event queues over WebSocket: GET /api/v1/events/socket?queue_id=Q&last_event_id=N upgrades, with
 * the credentials of the REST API (HTTP Basic, or a `ticket` from POST /events/socket/ticket for browsers).
 * The server then sends every unacknowledged event at once and each new one as it is delivered, in frames
 * shaped like a GET /events answer; the client acknowledges with `{"last_event_id": N}`. Whatever goes
 * wrong after the upgrade ends the socket with one error frame (the API's error envelope) and the close
 * code 4000 + the HTTP status the same error has over REST.
 */
export const EVENT_SOCKET_PATH = `${API_PREFIX}/events/socket`;

const attachParams = {
  queue_id: p.string(),
  last_event_id: p.int(),
  ticket: p.string().optional(),
};

const acknowledgement = z.object({ last_event_id: z.number().int() });

/** Every socket's frames are written here in turn, and sent at once. */
const frames = new EventsWriter();

/** The close code of an error frame: 4000 + the HTTP status of the same error (4400, 4409, ...). */
const closeCodeOf = (error: ChatError) => 4000 + error.status;

export function eventSocketEndpoint(services: AppServices): SocketEndpoint<SocketHandler> {
  const { cluster } = services;
  return {
    path: EVENT_SOCKET_PATH,
    accept(request) {
      // In a cluster, a socket another node forwarded is for a queue of this node's.
      const forwarded = cluster?.takeForwardMark(request) ?? false;
      let values: Map<string, string>;
      let realm: RealmState;
      let user: UserProfile;
      try {
        checkOrigin(request);
        realm = realmForHost(services.runtime, request.host, services.externalUrl.hostname);
        values = new Map(new URLSearchParams(request.query));
        user = caller(services, realm, request, values.get('ticket'));
        checkRateLimit(services, rateLimitKey(realm.realmId, user));
      } catch (error) {
        // No socket for a caller the REST API would refuse: the refusal is the same HTTP answer.
        if (error instanceof ChatError) return { refuse: errorResponse(error) };
        throw error;
      }
      let target: { queueId: string; lastEventId: number } | ChatError;
      try {
        const { params } = readParams(attachParams, values);
        target = { queueId: params.queue_id, lastEventId: params.last_event_id };
      } catch (error) {
        if (!(error instanceof ChatError)) throw error;
        target = error;
      }
      const node = cluster && !forwarded && !(target instanceof ChatError) ? queueNode(target.queueId) : null;
      if (cluster && node !== null && node !== cluster.nodeId) {
        // A browser's ticket is good at this node only: the queue's node hears the user's own key.
        const authorization = request.authorization || `Basic ${Buffer.from(`${user.email}:${user.apiKey}`).toString('base64')}`;
        return { state: cluster.forwardSocket(node, (target as { queueId: string }).queueId, request, authorization) };
      }
      return { state: new EventSocket(services, realm, user, target) };
    },
    open: (socket, connection) => socket.open(connection),
    message: (socket, text) => socket.message(text),
    close: (socket) => socket.closed(),
  };
}

/**
 * A WebSocket is outside the browser's same-origin policy, and a browser sends the Basic credentials it
 * remembers for this server with an upgrade that a page of any other site starts: that page could read the
 * user's events. So an upgrade with an Origin (every browser sends one) must come from a page of the
 * organization's own host; clients outside browsers send none.
 */
function checkOrigin(request: ApiRequest): void {
  if (request.origin === undefined || request.origin === '') return;
  let host: string | null = null;
  try {
    host = new URL(request.origin).host;
  } catch {
    // 'null' (a sandboxed or file page) or a malformed value: not this server's origin.
  }
  if (host === null || host.toLowerCase() !== request.host.toLowerCase()) {
    throw new ChatError(ErrorCode.CSRF_FAILED, `CSRF error: the WebSocket upgrade comes from the page of another site (${request.origin})`, 403);
  }
}

/** HTTP Basic when the request has an Authorization header, else the ticket a browser got over REST. */
function caller(services: AppServices, realm: RealmState, request: ApiRequest, ticket: string | undefined): UserProfile {
  if (request.authorization || ticket === undefined) return authenticate(realm, request.authorization);
  const userId = services.socketTickets.redeem(ticket, realm.realmId);
  const user = userId === null ? undefined : realm.users.get(userId);
  if (!user) throw new ChatError(ErrorCode.UNAUTHORIZED, 'Invalid or expired WebSocket ticket', 401);
  requireActive(realm, user);
  return user;
}

/** One WebSocket attached to one event queue: the queue's subscriber. */
class EventSocket implements QueueSubscriber, SocketHandler {
  private connection: SocketConnection | null = null;
  private queue: Queue | null = null;
  /** `{"result":"success","msg":"","queue_id":...,"events":` (ASCII) made once: a frame is this, the events, `}` */
  private frameHead = '';
  /**
   * The organization's state and its version (realm/version.ts) when the credentials were last found
   * good: an account's or the organization's deactivation is a change that moves the version.
   */
  private checkedRealm: RealmState | null = null;
  private checkedVersion = -1;

  constructor(
    private readonly services: AppServices,
    private readonly realm: RealmState,
    private readonly user: UserProfile,
    private readonly target: { queueId: string; lastEventId: number } | ChatError,
  ) {}

  open(connection: SocketConnection): void {
    this.connection = connection;
    const { target } = this;
    if (target instanceof ChatError) {
      this.fail(target);
      return;
    }
    const { queues } = this.services.runtime;
    try {
      const queue = queues.get(target.queueId, this.realm.realmId, this.user.userId);
      this.frameHead = `{"result":"success","msg":"","queue_id":${asciiJson(queue.id)},"events":`;
      // Set first: attaching pushes the queued events at once, and a push may already drop the connection.
      this.queue = queue;
      queues.attach(queue, target.lastEventId, this);
    } catch (error) {
      this.queue = null;
      this.fail(error);
    }
  }

  message(text: string | null): void {
    const queue = this.queue;
    if (!queue) return;
    try {
      const { last_event_id: lastEventId } = readAcknowledgement(text);
      this.services.runtime.queues.acknowledge(queue, this, lastEventId);
    } catch (error) {
      this.fail(error);
    }
  }

  closed(): void {
    this.connection = null;
    this.release();
  }

  push(events: readonly BufferedEvent[], first: number): void {
    // Credentials are checked once, at the upgrade: an account or organization deactivated since loses the
    // socket at its next push (a heartbeat at the latest), as its next poll would be refused.
    try {
      this.checkStillActive();
    } catch (error) {
      this.fail(error);
      return;
    }
    this.connection?.send(frames.write(this.frameHead, events, first, '}'));
  }

  /** The user's account and organization are still active; looked up again only once the organization changed. */
  private checkStillActive(): void {
    const realm = this.services.runtime.realmState(this.realm.realmId);
    const version = realmVersion(realm);
    if (realm === this.checkedRealm && version === this.checkedVersion) return;
    const user = realm.users.get(this.user.userId);
    if (!user) throw new ChatError(ErrorCode.USER_DEACTIVATED, 'Account is deactivated', 401);
    requireActive(realm, user);
    this.checkedRealm = realm;
    this.checkedVersion = version;
  }

  evict(reason: ChatError): void {
    // The registry has already let go of this subscriber.
    this.queue = null;
    this.fail(reason);
  }

  /** Ends the socket with one error frame; the queue, if attached, goes back to long-poll rules. */
  private fail(error: unknown): void {
    this.release();
    const connection = this.connection;
    this.connection = null;
    if (!connection) return;
    if (!(error instanceof ChatError)) {
      this.services.log.error({ err: error, path: EVENT_SOCKET_PATH }, 'event socket failed');
      error = new ChatError(ErrorCode.INTERNAL_SERVER_ERROR, 'Internal server error', 500);
    }
    const chatError = error as ChatError;
    connection.close(closeCodeOf(chatError), chatError.code, errorResponse(chatError).body);
  }

  private release(): void {
    const queue = this.queue;
    this.queue = null;
    if (queue) this.services.runtime.queues.detach(queue, this);
  }
}

function readAcknowledgement(text: string | null): z.infer<typeof acknowledgement> {
  const expected = 'expected a text frame {"last_event_id": N}';
  if (text === null) throw badRequest(`Invalid acknowledgement: ${expected}`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest(`Invalid acknowledgement: not JSON; ${expected}`);
  }
  const parsed = acknowledgement.safeParse(value);
  if (!parsed.success) throw badRequest(`Invalid acknowledgement: ${expected}`);
  return parsed.data;
}
