import { ApiError, type Api, type Json } from './api.ts';

/** What the client asks the server to send it, and the state it wants at registration. */
export const EVENT_TYPES = [
  'message', 'update_message', 'delete_message', 'reaction', 'typing', 'update_message_flags', 'subscription', 'stream',
  'realm_user', 'user_settings', 'drafts', 'realm', 'realm_emoji', 'presence', 'user_status', 'scheduled_messages', 'saved_snippets',
];
const FETCH_EVENT_TYPES = ['message', 'update_message_flags', 'subscription', 'realm_user', 'user_settings', 'drafts', 'realm', 'realm_emoji', 'presence', 'user_status', 'scheduled_messages', 'saved_snippets'];
const CLIENT_CAPABILITIES = { notification_settings_null: true, bulk_message_deletion: true, user_settings_object: true, stream_typing_notifications: true };

/** How the client is connected: shown in the header, and in a banner while the connection is down. */
export type Connection =
  | { state: 'connecting' }
  | { state: 'live'; transport: 'websocket' | 'long-polling' }
  /** the last attempt failed; the next one is in `retryInMs` */
  | { state: 'reconnecting'; retryInMs: number };

export interface QueueHandlers {
  /** a new queue and the state it starts from (after a restart of the queue too: everything is reloaded) */
  registered(state: Json): void;
  events(events: Json[]): void;
  /** the key no longer works: the user must sign in again */
  unauthorized(): void;
  connection(connection: Connection): void;
}

/** The socket could not be opened although the server answers over HTTP: a proxy or an old server. */
class SocketUnavailable extends Error {}

/** Sockets that fail to open, in a row, before the client settles for long-polling. */
const SOCKET_ATTEMPTS = 2;

/**
 * The event queue: register, then receive its events over the WebSocket of GET /events/socket (a ticket from
 * POST /events/socket/ticket stands for the Basic credentials a browser cannot send there), acknowledging each
 * frame. A dropped socket is opened again with the last event id seen, so the queue resumes where it was and
 * nothing is lost or reloaded. Where the socket cannot be opened, the client long-polls GET /events instead.
 * A queue the server no longer knows (BAD_EVENT_QUEUE_ID: collected while the laptop slept, or lost in a
 * server crash) is registered anew, and the new state replaces the old. Failures are retried with a growing
 * pause.
 */
export class EventQueue {
  private queueId: string | null = null;
  private lastEventId = -1;
  private stopped = false;
  private readonly abort = new AbortController();
  private socket: WebSocket | null = null;
  private useSocket = typeof WebSocket === 'function';
  private socketMisses = 0;
  /** a poll has succeeded since the last failure */
  private liveByPolling = false;

  constructor(
    private readonly api: Api,
    private readonly handlers: QueueHandlers,
  ) {}

  start(): void {
    void this.run();
    addEventListener('pagehide', this.release);
  }

  stop(): void {
    this.stopped = true;
    this.abort.abort();
    this.socket?.close();
    removeEventListener('pagehide', this.release);
    this.release();
  }

  /** Tells the server the queue is done with, so it does not hold it for ten minutes. */
  private readonly release = () => {
    if (this.queueId) void this.api.delete('/events', { queue_id: this.queueId }, { keepalive: true }).catch(() => {});
    this.queueId = null;
  };

  private async run(): Promise<void> {
    let failures = 0;
    this.handlers.connection({ state: 'connecting' });
    const live = (transport: 'websocket' | 'long-polling') => {
      failures = 0;
      this.handlers.connection({ state: 'live', transport });
    };
    while (!this.stopped) {
      try {
        if (!this.queueId) await this.register();
        if (this.useSocket) await this.socketSession(() => live('websocket'));
        else {
          // The first poll after a start or a failure returns at once, so the state shown is confirmed soon.
          const answer = await this.api.get('/events', { queue_id: this.queueId, last_event_id: this.lastEventId, dont_block: !this.liveByPolling }, { signal: this.abort.signal });
          if (this.stopped) return;
          if (!this.liveByPolling) live('long-polling');
          this.liveByPolling = true;
          this.receive(answer.events ?? []);
        }
      } catch (error) {
        if (this.stopped) return;
        if (error instanceof SocketUnavailable) {
          if (++this.socketMisses >= SOCKET_ATTEMPTS) this.useSocket = false;
          continue;
        }
        // A queue the server forgot, or one another connection took over: a queue of one's own, anew.
        if (error instanceof ApiError && (error.code === 'BAD_EVENT_QUEUE_ID' || error.status === 409)) {
          this.queueId = null;
          continue;
        }
        if (error instanceof ApiError && error.status === 401) {
          this.handlers.unauthorized();
          return;
        }
        failures++;
        this.liveByPolling = false;
        // 0.5 s, 1 s, 2 s, ... up to 30 s, with jitter so that a restarted server is not hit all at once.
        const pause = Math.min(30_000, 500 * 2 ** (failures - 1)) * (0.75 + Math.random() / 2);
        this.handlers.connection({ state: 'reconnecting', retryInMs: pause });
        await sleep(pause);
      }
    }
  }

  private receive(events: Json[]): void {
    for (const event of events) this.lastEventId = Math.max(this.lastEventId, event.id);
    const wanted = events.filter((event) => event.type !== 'heartbeat');
    if (wanted.length) this.handlers.events(wanted);
  }

  /**
   * One socket, from opening to closing: resolves never, rejects when it closes, with the API's error for an
   * error frame (close code 4000 + HTTP status, the error code as reason), SocketUnavailable when it never
   * opened, or a network error when it dropped.
   */
  private async socketSession(opened: () => void): Promise<never> {
    let ticket: string;
    try {
      ticket = (await this.api.post('/events/socket/ticket', {}, { signal: this.abort.signal })).ticket;
    } catch (error) {
      // A server without the socket endpoint: long-polling it is.
      if (error instanceof ApiError && error.status === 404) this.useSocket = false;
      throw error instanceof ApiError && error.status === 404 ? new SocketUnavailable() : error;
    }
    const url = new URL('/api/v1/events/socket', location.href);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.search = new URLSearchParams({ queue_id: this.queueId!, last_event_id: String(this.lastEventId), ticket }).toString();
    return new Promise<never>((_resolve, reject) => {
      const socket = new WebSocket(url);
      this.socket = socket;
      let open = false;
      socket.onopen = () => {
        open = true;
        this.socketMisses = 0;
        opened();
      };
      socket.onmessage = (message) => {
        let frame: Json;
        try {
          frame = JSON.parse(String(message.data));
        } catch {
          return;
        }
        this.receive(frame.events ?? []);
        if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ last_event_id: this.lastEventId }));
      };
      socket.onclose = (event) => {
        if (this.socket === socket) this.socket = null;
        if (event.code >= 4000 && event.code < 5000) reject(new ApiError(event.code - 4000, event.reason || 'BAD_RESPONSE', `The event socket closed: ${event.reason}`));
        else if (!open) reject(new SocketUnavailable());
        else reject(new ApiError(0, 'NETWORK', 'The connection to the server was lost'));
      };
    });
  }
  private async register(): Promise<void> {
    const state = await this.api.post('/register', {
      event_types: EVENT_TYPES,
      fetch_event_types: FETCH_EVENT_TYPES,
      apply_markdown: true,
      slim_presence: true,
      client_capabilities: CLIENT_CAPABILITIES,
    });
    this.queueId = state.queue_id;
    this.lastEventId = state.last_event_id;
    this.handlers.registered(state);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
