import { connect, type Socket } from 'node:net';
import { sleep } from './proc.ts';

export interface RawResponse {
  status: number;
  body: Buffer;
  /** performance.now() when the last byte of the response was read */
  at: number;
}

const HEADER_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /\r\ncontent-length:\s*(\d+)/i;
/** Responses parsed from one read, at most: a guard, far above what one keep-alive connection receives. */
const MAX_RESPONSES_PER_READ = 10_000;

/**
 * One HTTP/1.1 keep-alive connection with a hand-written response parser: a Node http.Agent costs 5-8x the
 * server's own time at 10,000 polls, which would make the harness the bottleneck. Expects Content-Length
 * framing (what uWS writes for `end(body)`); anything else is an error.
 */
export class RawConnection {
  private pending: Buffer | null = null;
  /** called for every complete response, in order */
  onResponse: ((response: RawResponse) => void) | null = null;
  error: Error | null = null;

  constructor(readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', (error) => (this.error ??= error));
    socket.on('close', () => (this.error ??= new Error('connection closed by the server')));
  }

  send(request: string): void {
    this.socket.write(request);
  }

  /** Sends one request and resolves with its response (the connection must have nothing else in flight). */
  request(text: string, timeoutMs = 30_000): Promise<RawResponse> {
    return new Promise((resolve, reject) => {
      if (this.error || this.socket.destroyed) {
        reject(this.error ?? new Error('connection closed'));
        return;
      }
      const fail = (error: Error) => {
        clearTimeout(timer);
        this.onResponse = null;
        reject(error);
      };
      const timer = setTimeout(() => fail(new Error(`no response within ${timeoutMs} ms`)), timeoutMs);
      const closed = () => fail(this.error ?? new Error('connection closed before the response'));
      this.socket.once('close', closed);
      this.onResponse = (response) => {
        clearTimeout(timer);
        this.socket.off('close', closed);
        this.onResponse = null;
        resolve(response);
      };
      this.send(text);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    const at = performance.now();
    let data = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = null;
    for (let i = 0; i < MAX_RESPONSES_PER_READ && data.length > 0; i++) {
      const headerEnd = data.indexOf(HEADER_END);
      if (headerEnd < 0) break;
      const head = data.toString('latin1', 0, headerEnd);
      const length = CONTENT_LENGTH.exec(head);
      if (!length) {
        this.error ??= new Error(`response without Content-Length: ${head.slice(0, 200)}`);
        this.socket.destroy();
        return;
      }
      const end = headerEnd + 4 + Number(length[1]);
      if (data.length < end) break;
      this.onResponse?.({ status: Number(head.slice(9, 12)), body: data.subarray(headerEnd + 4, end), at });
      data = data.subarray(end);
    }
    if (data.length > 0) this.pending = data;
  }
}

/** Opens one connection to 127.0.0.1:port. */
export function openConnection(port: number, timeoutMs = 10_000): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`connect to port ${port} timed out`));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeListener('error', reject);
      resolve(new RawConnection(socket));
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/**
 * Opens `count` connections in batches (so the listen backlog never overflows), pausing briefly between
 * batches. On any failure every connection opened so far is closed.
 */
export async function openConnections(port: number, count: number, batch = 250): Promise<RawConnection[]> {
  const out: RawConnection[] = [];
  try {
    for (let start = 0; start < count; start += batch) {
      const size = Math.min(batch, count - start);
      out.push(...(await Promise.all(Array.from({ length: size }, () => openConnection(port)))));
      await sleep(1);
    }
  } catch (error) {
    for (const connection of out) connection.close();
    throw error;
  }
  return out;
}

/** The text of one request; the body, if any, is form-encoded. */
export function requestText(method: string, path: string, port: number, headers: Record<string, string>, body = ''): string {
  let text = `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`;
  for (const [name, value] of Object.entries(headers)) text += `${name}: ${value}\r\n`;
  if (body || method !== 'GET') {
    text += `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
  }
  return `${text}\r\n${body}`;
}
