import { ApiError, type Api, type Json } from './api.ts';

/** What the client asks the server to send it, and the state it wants at registration. */
export const EVENT_TYPES = [
  'message', 'update_message', 'delete_message', 'reaction', 'typing', 'update_message_flags', 'subscription', 'stream',
  'realm_user', 'user_settings', 'drafts', 'realm',
];
const FETCH_EVENT_TYPES = ['message', 'update_message_flags', 'subscription', 'realm_user', 'user_settings', 'drafts', 'realm'];
const CLIENT_CAPABILITIES = { notification_settings_null: true, bulk_message_deletion: true, user_settings_object: true, stream_typing_notifications: true };

export interface QueueHandlers {
  /** a new queue and the state it starts from (after a restart of the queue too: everything is reloaded) */
  registered(state: Json): void;
  events(events: Json[]): void;
  /** the key no longer works: the user must sign in again */
  unauthorized(): void;
  /** the server cannot be reached (true) or can again (false) */
  offline(offline: boolean): void;
}

/**
 * The event queue, by long-polling: register, then GET /events for ever. A queue the server no longer knows
 * (BAD_EVENT_QUEUE_ID: collected while the laptop slept, or lost in a server crash) is registered anew, and
 * the new state replaces the old. Network errors are retried with a growing pause.
 */
export class EventQueue {
  private queueId: string | null = null;
  private lastEventId = -1;
  private stopped = false;
  private readonly abort = new AbortController();

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
    while (!this.stopped) {
      try {
        if (!this.queueId) await this.register();
        const answer = await this.api.get('/events', { queue_id: this.queueId, last_event_id: this.lastEventId }, { signal: this.abort.signal });
        if (this.stopped) return;
        if (failures > 0) this.handlers.offline(false);
        failures = 0;
        const events: Json[] = answer.events ?? [];
        for (const event of events) this.lastEventId = Math.max(this.lastEventId, event.id);
        const wanted = events.filter((event) => event.type !== 'heartbeat');
        if (wanted.length) this.handlers.events(wanted);
      } catch (error) {
        if (this.stopped) return;
        if (error instanceof ApiError && error.code === 'BAD_EVENT_QUEUE_ID') {
          this.queueId = null;
          continue;
        }
        if (error instanceof ApiError && error.status === 401) {
          this.handlers.unauthorized();
          return;
        }
        failures++;
        if (failures === 2) this.handlers.offline(true);
        // 0.5 s, 1 s, 2 s, ... up to 30 s, with jitter so that a restarted server is not hit all at once.
        await sleep(Math.min(30_000, 500 * 2 ** (failures - 1)) * (0.75 + Math.random() / 2));
      }
    }
  }

  private async register(): Promise<void> {
    const state = await this.api.post('/register', {
      event_types: EVENT_TYPES,
      fetch_event_types: FETCH_EVENT_TYPES,
      apply_markdown: true,
      client_capabilities: CLIENT_CAPABILITIES,
    });
    this.queueId = state.queue_id;
    this.lastEventId = state.last_event_id;
    this.handlers.registered(state);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
