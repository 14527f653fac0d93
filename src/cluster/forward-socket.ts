import WebSocket from 'ws';
import type { ChatError } from '../../actors/errors.ts';
import { errorResponse } from '../http/envelope.ts';
import type { ApiRequest } from '../http/request.ts';
import type { SocketConnection, SocketHandler } from '../http/socket.ts';
import { FORWARD_MARK } from './forward.ts';

/** Close codes of a socket that ended without a word from its node (RFC 6455: 1005 none, 1006 abnormal). */
const ABNORMAL_CLOSE = new Set([1005, 1006]);

/**
 * A client sends only acknowledgements, one per event frame it got; none can come before the queue's node
 * answered. More than this many frames held for a socket that is not open yet is a misbehaving client.
 */
const MAX_EARLY_FRAMES = 64;

/** How long the queue's node may take to accept the relayed socket before it counts as gone. */
const UPSTREAM_HANDSHAKE_MS = 10_000;

/**
 * An event WebSocket for a queue of another node: this node holds the client's socket and relays frames
 * both ways over a socket of its own to the queue's node, which attaches it to the queue as usual (with the
 * caller's credentials, the forward mark keeping it there). Every frame and the closing code pass as they
 * are. A node that cannot be reached or whose socket breaks is gone, and its queues with it: the client
 * hears BAD_EVENT_QUEUE_ID (close 4400) and registers again, as after a poll of such a queue.
 */
export class ForwardedSocket implements SocketHandler {
  private connection: SocketConnection | null = null;
  private upstream: WebSocket | null = null;
  /** the client's frames that came before the upstream socket opened */
  private readonly early: (string | null)[] = [];

  constructor(
    private readonly nodeUrl: Promise<string | null>,
    private readonly request: ApiRequest,
    private readonly authorization: string,
    private readonly gone: () => ChatError,
    private readonly onForward: () => void,
  ) {}

  open(connection: SocketConnection): void {
    this.connection = connection;
    this.nodeUrl.then(
      (url) => (url ? this.connect(url) : this.fail(this.gone())),
      () => this.fail(this.gone()),
    );
  }

  private connect(baseUrl: string): void {
    if (!this.connection) return;
    this.onForward();
    const query = this.request.query ? `${this.request.query}&${FORWARD_MARK}` : FORWARD_MARK;
    const upstream = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}${this.request.path}?${query}`, {
      headers: { host: this.request.host, authorization: this.authorization },
      perMessageDeflate: false,
      handshakeTimeout: UPSTREAM_HANDSHAKE_MS,
    });
    this.upstream = upstream;
    let opened = false;
    upstream.on('open', () => {
      opened = true;
      for (const text of this.early.splice(0)) this.relay(text);
    });
    upstream.on('message', (data, isBinary) => {
      if (!isBinary) this.connection?.send(String(data));
    });
    // Refused by the node (the queue is not the caller's, a limit): the same error, as a frame and a close.
    upstream.on('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      response.on('end', () => {
        const status = response.statusCode ?? 500;
        let code = 'BAD_REQUEST';
        try {
          code = (JSON.parse(body) as { code?: string }).code ?? code;
        } catch {
          // not the API's envelope: the status says enough
        }
        this.closeClient(4000 + status, code, body);
        upstream.terminate();
      });
    });
    upstream.on('error', () => {
      if (!opened) this.fail(this.gone());
    });
    upstream.on('close', (code, reason) => {
      if (ABNORMAL_CLOSE.has(code)) this.fail(this.gone());
      else this.closeClient(code, String(reason));
    });
  }

  message(text: string | null): void {
    if (this.upstream?.readyState === WebSocket.OPEN) this.relay(text);
    else if (this.early.length < MAX_EARLY_FRAMES) this.early.push(text);
    // RFC 6455 1008: a policy violation
    else this.closeClient(1008, 'Too many frames before the event queue answered');
  }

  private relay(text: string | null): void {
    // A binary frame stays one: the queue's node refuses it as it would from the client.
    this.upstream!.send(text === null ? Buffer.alloc(0) : text, { binary: text === null });
  }

  closed(): void {
    this.connection = null;
    const upstream = this.upstream;
    this.upstream = null;
    if (upstream && upstream.readyState !== WebSocket.CLOSED) upstream.close();
  }

  private fail(error: ChatError): void {
    this.closeClient(4000 + error.status, error.code, errorResponse(error).body);
  }

  private closeClient(code: number, reason: string, lastFrame?: string): void {
    const connection = this.connection;
    this.connection = null;
    connection?.close(code, reason, lastFrame);
    const upstream = this.upstream;
    this.upstream = null;
    if (upstream && upstream.readyState === WebSocket.OPEN) upstream.close();
  }
}
