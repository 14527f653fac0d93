import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket, us_socket_context_t, WebSocket } from 'uWebSockets.js';
import { Disconnect } from '../actors/disconnect.ts';
import { Later } from '../actors/later.ts';
import { MAX_UPLOAD_BYTES } from '../actors/realm/attachments/decide.ts';
import { uWS } from './uws-native.ts';
import { clientAddress } from './http/client-address.ts';
import type { Answer, Dispatch } from './http/dispatch.ts';
import type { ApiRequest, ApiResponse, BodyStream } from './http/request.ts';
import type { SocketConnection, SocketEndpoint } from './http/socket.ts';

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK',
  302: '302 Found',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  413: '413 Payload Too Large',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};

export interface HttpServer {
  port: number;
  /** stop accepting connections, close the WebSockets; resolves when the requests in flight have been answered */
  drain(): Promise<void>;
}

/** A WebSocket endpoint and how far behind one of its connections may fall before it is dropped. */
export interface SocketService<S> {
  endpoint: SocketEndpoint<S>;
  maxBufferedBytes: number;
}

/**
 * The thin uWS front end: copy what the request says synchronously (uWS request objects die with the
 * handler), register onAborted before any asynchronous step, read the body with a size cap, hand plain
 * data to dispatch, and write the answer corked.
 */
export function listen<S>(
  dispatch: Dispatch,
  host: string,
  port: number,
  maxBodyBytes: number,
  sockets?: SocketService<S>,
  /** reverse proxies whose X-Forwarded-For names the client */
  trustedProxies: ReadonlySet<string> = new Set(),
): Promise<HttpServer> {
  const app: TemplatedApp = uWS.App();
  let inFlight = 0;
  let drained: (() => void) | null = null;
  let draining = false;
  const closeSockets = sockets ? serveSockets(app, sockets, () => draining) : () => {};

  const finish = () => {
    inFlight--;
    if (draining && inFlight === 0) drained?.();
  };

  // No closure in here: one would keep this call's locals (the request and its header strings) alive for as
  // long as uWS keeps the abort handler, the whole time a long-poll is held. The handler is the exchange's
  // own method, bound (one small object, where a closure is two).
  app.any('/*', (res: HttpResponse, req: HttpRequest) => {
    const exchange = new Exchange(res, finish, trustedProxies.size === 0 ? '' : req.getHeader('x-forwarded-for'), trustedProxies);
    res.onAborted(exchange.abort.bind(exchange));
    if (draining) {
      exchange.done = true;
      write(res, { status: 503, headers: { 'Content-Type': 'application/json', Connection: 'close' }, body: '{"result":"error","msg":"Server is shutting down","code":"BAD_REQUEST"}' });
      return;
    }
    inFlight++;
    exchange.counted = true;
    const method = req.getCaseSensitiveMethod().toUpperCase();
    // A GET's body is never read, and no read records the client it came from: two header reads less for
    // every poll (a native call and a string each).
    const reads = method === 'GET' || method === 'HEAD';
    const request: ApiRequest = {
      method,
      path: req.getUrl(),
      query: req.getQuery() ?? '',
      host: req.getHeader('host'),
      authorization: req.getHeader('authorization'),
      userAgent: reads ? undefined : req.getHeader('user-agent'),
      contentType: reads ? '' : req.getHeader('content-type'),
      body: EMPTY,
      signal: exchange,
      connection: exchange,
    };
    const cap = request.method === 'POST' && UPLOAD_PATHS.has(request.path) ? Math.max(maxBodyBytes, UPLOAD_BODY_BYTES) : maxBodyBytes;
    const length = req.getHeader('content-length');
    if (length !== '' && !singleContentLength(req, length)) {
      exchange.respond(AMBIGUOUS_LENGTH);
      return;
    }
    const declared = Number(length || 0);
    if (declared > cap) {
      exchange.respond(tooLarge(cap));
      return;
    }
    if (reads || (declared === 0 && !req.getHeader('transfer-encoding'))) {
      exchange.run(dispatch, request);
      return;
    }
    const refusal = length && declared <= ADMIT_ABOVE_BYTES ? null : dispatch.admit(request, length ? declared : null);
    if (refusal) {
      exchange.respond(refusal);
      return;
    }
    readBody(res, exchange, request, cap, dispatch);
  });

  return new Promise((resolve, reject) => {
    app.listen(host, port, (token: us_listen_socket | false) => {
      if (!token) {
        reject(new Error(`cannot listen on ${host}:${port}`));
        return;
      }
      resolve({
        port: uWS.us_socket_local_port(token),
        drain() {
          draining = true;
          uWS.us_listen_socket_close(token);
          closeSockets();
          if (inFlight === 0) return Promise.resolve();
          return new Promise<void>((done) => (drained = done));
        },
      });
    });
  });
}

const EMPTY = Buffer.alloc(0);

/** Reads the request's body, up to `cap` bytes, then dispatches it. */
function readBody(res: HttpResponse, exchange: Exchange, request: ApiRequest, cap: number, dispatch: Dispatch): void {
  const chunks: Buffer[] = [];
  let size = 0;
  res.onData((chunk, isLast) => {
    if (exchange.done) return;
    size += chunk.byteLength;
    if (size > cap) {
      exchange.respond(tooLarge(cap));
      return;
    }
    // uWS reuses the chunk's memory after this callback returns: copy it.
    chunks.push(Buffer.from(chunk.slice(0)));
    if (isLast) {
      request.body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      exchange.run(dispatch, request);
    }
  });
}

/** A held answer's listener (see later.ts): a function made once, the exchange its argument. */
const respondTo = (response: ApiResponse, exchange: Exchange): void => exchange.respond(response);

/**
 * One HTTP request on its way: answered at most once (by dispatch, or by a refusal of its body), never after
 * the client went away, and counted as finished once it is answered, or once its client went away before
 * dispatch had it (a body cut off midway: nothing will answer it, and a graceful stop must not wait for it).
 * Its work is in methods rather than closures made per request. It is the request's Disconnect itself: a
 * fan-out holds thousands of requests, and every object one keeps is copied by the collector.
 */
class Exchange extends Disconnect {
  /** answered, or the client went away: nothing more is written */
  done = false;
  /** counted among the requests in flight, and not finished yet */
  counted = false;
  private dispatched = false;
  /** the body being sent a piece at a time, until it is all sent or the client went away */
  private streaming: AsyncIterator<Buffer> | null = null;
  /** resolves the piece waiting for the client to take more */
  private writable: ((more: boolean) => void) | null = null;

  constructor(
    private readonly res: HttpResponse,
    private readonly finished: () => void,
    private readonly forwardedFor: string,
    private readonly trustedProxies: ReadonlySet<string>,
  ) {
    super();
  }

  /** The client's address, while the request is unanswered (uWS frees the connection's data after). */
  clientAddress(): string {
    if (this.done) return 'gone';
    return clientAddress(Buffer.from(this.res.getRemoteAddressAsText()).toString(), this.forwardedFor, this.trustedProxies);
  }

  /** The client went away. */
  override abort(): void {
    this.done = true;
    super.abort();
    if (this.streaming) this.streamEnded(this.streaming);
    if (!this.dispatched) this.finish();
  }

  run(dispatch: Dispatch, request: ApiRequest): void {
    this.dispatched = true;
    let answer: Answer;
    try {
      answer = dispatch(request);
    } catch {
      answer = INTERNAL_ERROR;
    }
    if (answer instanceof Later) {
      answer.listen(respondTo, this);
    } else if (answer instanceof Promise) {
      answer.then(
        (response) => this.respond(response),
        () => this.respond(INTERNAL_ERROR),
      );
    } else {
      this.respond(answer);
    }
  }

  respond(response: ApiResponse): void {
    if (this.done) {
      void response.stream?.pieces.return?.().catch(() => {});
    } else if (response.stream) {
      this.done = true;
      void this.stream(response, response.stream);
    } else {
      this.done = true;
      writeCorked(this.res, response);
    }
    this.finish();
  }

  /**
   * Sends a body a piece at a time with uWS backpressure: the next piece is asked for only once the client
   * has taken the last, so memory holds one piece whatever the body's size. The request counts as answered
   * once its head is written, as one whose body uWS still buffers does: a graceful stop does not wait for a
   * slow download.
   */
  private async stream(response: ApiResponse, { pieces, size }: BodyStream): Promise<void> {
    const res = this.res;
    this.streaming = pieces;
    res.cork(() => writeHead(res, response));
    let sent = 0;
    try {
      for (;;) {
        const piece = await pieces.next();
        if (this.streaming !== pieces) return;
        if (piece.done) break;
        sent += piece.value.length;
        if (sent > size) throw new Error('the body is longer than its Content-Length');
        if (!(await this.sendPiece(piece.value, size))) return;
      }
      if (size === 0) {
        this.streamEnded(pieces);
        res.cork(() => res.end());
        return;
      }
      throw new Error('the body is shorter than its Content-Length');
    } catch {
      // The status is sent already: the connection is cut so that the client does not take the body as whole.
      if (this.streaming !== pieces) return;
      this.streamEnded(pieces);
      res.close();
    }
  }

  /** Sends one piece; resolves true once the client has taken it and more may follow, false at the end. */
  private sendPiece(piece: Buffer, size: number): boolean | Promise<boolean> {
    const res = this.res;
    const pieces = this.streaming!;
    const offset = res.getWriteOffset();
    let [sent, last] = [false, false];
    res.cork(() => ([sent, last] = res.tryEnd(piece, size)));
    if (last) this.streamEnded(pieces);
    if (sent || last) return !last;
    return new Promise((resolve) => {
      this.writable = resolve;
      // uWS keeps none of what tryEnd could not send: the rest of the piece is offered again, in this callback
      // (uWS sends nothing by itself while one is registered).
      res.onWritable((at) => {
        [sent, last] = res.tryEnd(piece.subarray(at - offset), size);
        if (last) this.streamEnded(pieces);
        if (sent || last) {
          this.writable = null;
          resolve(!last);
        }
        return sent || last;
      });
    });
  }

  /** No more of the body is sent: its source is closed, and a piece waiting for the client is dropped. */
  private streamEnded(pieces: AsyncIterator<Buffer>): void {
    if (this.streaming !== pieces) return;
    this.streaming = null;
    void pieces.return?.().catch(() => {});
    this.writable?.(false);
    this.writable = null;
  }

  private finish(): void {
    if (!this.counted) return;
    this.counted = false;
    this.finished();
  }
}

/** Status of `WebSocket.send`: the frame was not sent because the socket's backlog was over the limit. */
const SEND_DROPPED = 2;

/** What a connection carries through uWS (its user data, whose fields uWS copies onto the socket). */
interface SocketData<S> {
  link: SocketLink<S>;
}

/**
 * A connection as its endpoint sees it: the endpoint's state, whether the socket is gone, and, once open,
 * the socket. A frame of a fan-out reaches the socket through this one object (not a closure, its context
 * and a holder of its own, each a fetch from memory per frame).
 */
class SocketLink<S> implements SocketConnection {
  gone = false;
  ws: WebSocket<SocketData<S>> | null = null;

  constructor(readonly state: S) {}

  send(text: string | Uint8Array): void {
    const ws = this.ws;
    if (this.gone || !ws) return;
    // A frame larger than the limit (a reconnect's whole backlog) is sent; a frame that finds the unsent
    // bytes still over the limit (uWS's maxBackpressure, set to it) is skipped by uWS: a gap in the
    // events, so the connection is dropped instead. uWS corks a send made outside a handler itself.
    if (ws.send(text, false, false) === SEND_DROPPED) {
      this.gone = true;
      ws.close();
    }
  }

  close(code: number, reason: string, lastFrame?: string): void {
    const ws = this.ws;
    if (this.gone || !ws) return;
    this.gone = true;
    ws.cork(() => {
      if (lastFrame !== undefined) ws.send(lastFrame, false, false);
      ws.end(code, reason);
    });
  }
}

/**
 * Serves a WebSocket endpoint: the upgrade request is copied and accepted or refused synchronously (with the
 * endpoint's HTTP answer), frames go to the endpoint as text. A connection whose unsent bytes are past the
 * limit when the next frame comes is closed at once: the endpoint must keep what it sent until acknowledged. Returns what closes every
 * open connection (at shutdown: 1001, going away).
 */
function serveSockets<S>(app: TemplatedApp, { endpoint, maxBufferedBytes }: SocketService<S>, draining: () => boolean): () => void {
  const open = new Set<WebSocket<SocketData<S>>>();
  app.ws<SocketData<S>>(endpoint.path, {
    // Clients send only acknowledgements.
    maxPayloadLength: 4096,
    // Dead peers are found by pings; the endpoint's own messages keep browsers (which see no pings) informed.
    idleTimeout: 120,
    sendPingsAutomatically: true,
    maxBackpressure: maxBufferedBytes,
    upgrade(res: HttpResponse, req: HttpRequest, context: us_socket_context_t) {
      if (draining()) {
        write(res, { status: 503, headers: { 'Content-Type': 'application/json', Connection: 'close' }, body: '{"result":"error","msg":"Server is shutting down","code":"BAD_REQUEST"}' });
        return;
      }
      const request: ApiRequest = {
        method: 'GET',
        path: req.getUrl(),
        query: req.getQuery() ?? '',
        host: req.getHeader('host'),
        origin: req.getHeader('origin'),
        authorization: req.getHeader('authorization'),
        contentType: '',
        body: EMPTY,
      };
      const outcome = endpoint.accept(request);
      if ('refuse' in outcome) {
        write(res, outcome.refuse);
        return;
      }
      // No subprotocol is offered: a client that asks for one gets none and decides for itself.
      res.upgrade<SocketData<S>>({ link: new SocketLink(outcome.state) }, req.getHeader('sec-websocket-key'), '', req.getHeader('sec-websocket-extensions'), context);
    },
    open(ws) {
      open.add(ws);
      // Read once: every frame of a fan-out would otherwise ask uWS for it again.
      const { link } = ws.getUserData();
      link.ws = ws;
      endpoint.open(link.state, link);
    },
    message(ws, message, isBinary) {
      const { link } = ws.getUserData();
      if (link.gone) return;
      endpoint.message(link.state, isBinary ? null : Buffer.from(message).toString('utf8'));
    },
    close(ws) {
      open.delete(ws);
      const { link } = ws.getUserData();
      link.gone = true;
      link.ws = null;
      endpoint.close(link.state);
    },
  });
  return () => {
    for (const ws of open) {
      const { link } = ws.getUserData();
      if (link.gone) continue;
      link.gone = true;
      ws.end(1001, 'Server is shutting down');
    }
  };
}

/**
 * The upload endpoint takes bodies up to the realm's file size limit plus room for the multipart framing;
 * every other route keeps the general cap, so a large body is buffered only where one is expected. The
 * route itself refuses a file over the limit with the API's error (the body cap answers 413 beyond it).
 */
const UPLOAD_PATHS = new Set(['/api/v1/user_uploads']);

/**
 * A body this small is read before anything is decided (the route checks it all the same): asking the
 * route first would cost every message send a second route lookup for nothing.
 */
const ADMIT_ABOVE_BYTES = 64 * 1024;
const UPLOAD_BODY_BYTES = MAX_UPLOAD_BYTES + 1024 * 1024;

const INTERNAL_ERROR: ApiResponse = {
  status: 500,
  headers: { 'Content-Type': 'application/json' },
  body: '{"result":"error","msg":"Internal server error","code":"INTERNAL_SERVER_ERROR"}',
};

/**
 * Whether the request's length is told once, as digits, and without Transfer-Encoding beside it. uWS reads
 * the first Content-Length; a proxy in front that reads the last (or the chunked encoding) would see a
 * different end of the body, and the rest would pass as another request that the proxy never checked
 * (request smuggling). RFC 9112 section 6.3 asks for 400 in these cases.
 */
function singleContentLength(req: HttpRequest, first: string): boolean {
  if (!/^\d+$/.test(first) || req.getHeader('transfer-encoding') !== '') return false;
  let count = 0;
  req.forEach((name) => {
    if (name === 'content-length') count++;
  });
  return count === 1;
}

const AMBIGUOUS_LENGTH: ApiResponse = {
  status: 400,
  headers: { 'Content-Type': 'application/json', Connection: 'close' },
  body: '{"result":"error","msg":"Ambiguous request length (Content-Length repeated, malformed, or with Transfer-Encoding)","code":"BAD_REQUEST"}',
};

function tooLarge(limit: number): ApiResponse {
  return {
    status: 413,
    headers: { 'Content-Type': 'application/json', Connection: 'close' },
    body: JSON.stringify({ result: 'error', msg: `Request body too large (limit ${limit} bytes)`, code: 'BAD_REQUEST' }),
  };
}

function write(res: HttpResponse, response: ApiResponse): void {
  const close = writeHead(res, response);
  res.end(response.written?.write() ?? response.bytes ?? response.body, close);
}

/**
 * What `writeCorked` writes, set just before it corks: cork runs its callback at once, so the callback can be
 * one function made once instead of a closure per answer (a fan-out writes thousands in a row).
 */
let corkedRes: HttpResponse | null = null;
let corkedResponse: ApiResponse | null = null;
const writeCorkedNow = () => write(corkedRes!, corkedResponse!);

/** Writes a whole answer corked: its status line, headers and body go out in one send. */
function writeCorked(res: HttpResponse, response: ApiResponse): void {
  corkedRes = res;
  corkedResponse = response;
  try {
    res.cork(writeCorkedNow);
  } finally {
    corkedRes = null;
    corkedResponse = null;
  }
}

/** Writes the status and headers; says whether the answer asks to close the connection. */
function writeHead(res: HttpResponse, response: ApiResponse): boolean {
  // uWS writes `200 OK` itself before the first header: one native call less for most answers.
  if (response.status !== 200) res.writeStatus(STATUS_TEXT[response.status] ?? String(response.status));
  let close = false;
  const headers = response.headers;
  for (const name in headers) {
    // uWS writes the Connection header itself; it closes the connection when asked through end().
    if (name === 'Connection') close = headers[name] === 'close';
    else res.writeHeader(name, headers[name]!);
  }
  return close;
}
