import WebSocket from 'ws';
import type { Credentials } from './server.ts';

// Frames are JSON objects of a few shapes; tests read the fields they check.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Frame = any;

export interface Refusal {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export interface SocketOptions {
  queueId?: string;
  lastEventId?: number;
  credentials?: Credentials | null;
  ticket?: string;
  /** the Origin header a browser would send */
  origin?: string;
  /** extra query text, e.g. to test parameters */
  query?: Record<string, string>;
}

/**
 * A real WebSocket client for GET /api/v1/events/socket: collects the frames it receives, and tells how the
 * socket closed.
 */
export class EventSocketClient {
  private readonly frames: Frame[] = [];
  private waiting: ((frame: Frame) => void) | null = null;
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      const frame = JSON.parse(isBinary ? '' : String(data));
      if (this.waiting) {
        const waiting = this.waiting;
        this.waiting = null;
        waiting(frame);
      } else this.frames.push(frame);
    });
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
  }

  /** Opens a socket; resolves to the client once open, or to the HTTP answer that refused the upgrade. */
  static open(baseUrl: string, options: SocketOptions): Promise<EventSocketClient | Refusal> {
    const query = new URLSearchParams(options.query);
    if (options.queueId !== undefined) query.set('queue_id', options.queueId);
    if (options.lastEventId !== undefined) query.set('last_event_id', String(options.lastEventId));
    if (options.ticket !== undefined) query.set('ticket', options.ticket);
    const headers: Record<string, string> = {};
    if (options.credentials) {
      headers.Authorization = `Basic ${Buffer.from(`${options.credentials.email}:${options.credentials.key}`).toString('base64')}`;
    }
    const url = `${baseUrl.replace(/^http/, 'ws')}/api/v1/events/socket?${query}`;
    const ws = new WebSocket(url, { headers, ...(options.origin === undefined ? {} : { origin: options.origin }) });
    const client = new EventSocketClient(ws);
    return new Promise((resolve, reject) => {
      ws.on('open', () => resolve(client));
      ws.on('unexpected-response', (_request, response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
      });
      ws.on('error', (error) => reject(error));
    });
  }

  /** The next frame, waiting up to `ms` for it. */
  next(ms = 5000): Promise<Frame> {
    const queued = this.frames.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting = null;
        reject(new Error(`no frame within ${ms} ms`));
      }, ms);
      this.waiting = (frame) => {
        clearTimeout(timer);
        resolve(frame);
      };
    });
  }

  /** Frames received and not read yet. */
  get unread(): number {
    return this.frames.length;
  }

  acknowledge(lastEventId: number): void {
    this.ws.send(JSON.stringify({ last_event_id: lastEventId }));
  }

  send(text: string): void {
    this.ws.send(text);
  }

  close(): Promise<{ code: number; reason: string }> {
    this.ws.close();
    return this.closed;
  }
}

/** Opens a socket that must be accepted. */
export async function openSocket(baseUrl: string, options: SocketOptions): Promise<EventSocketClient> {
  const opened = await EventSocketClient.open(baseUrl, options);
  if (!(opened instanceof EventSocketClient)) throw new Error(`upgrade refused: ${opened.status} ${JSON.stringify(opened.body)}`);
  return opened;
}
