import type { Disconnect } from '../../actors/disconnect.ts';

/** A request as the front end copied it off the socket: plain data, so dispatch can run without uWS. */
export interface ApiRequest {
  method: string;
  /** the URL path, e.g. /api/v1/users/me */
  path: string;
  /** the raw query string, without '?' */
  query: string;
  host: string;
  /** the Origin header, where the request has one (browsers send it with every WebSocket upgrade) */
  origin?: string;
  authorization: string;
  /** the User-Agent header, where the request has one: the client a message is recorded as sent from */
  userAgent?: string;
  /**
   * The client's address (see client-address.ts), for the budgets of requests without credentials; absent
   * for a request made inside the process. Read off the connection only for those requests: the read costs
   * more than a request with credentials can spare.
   */
  clientAddress?: string;
  /**
   * Where `clientAddress` is read from when needed: dispatch reads it before its first await for requests
   * without credentials; later, a connection that went away answers 'gone'.
   */
  connection?: { clientAddress(): string };
  contentType: string;
  body: Buffer;
  /** aborted when the client disconnects (a held long-poll then lets go) */
  signal?: Disconnect;
}

export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** a body of bytes (uploaded files), sent instead of `body` */
  bytes?: Buffer;
  /** a body written only as it is sent (a poll's events), sent instead of `body` and `bytes` */
  written?: WrittenBody;
  /** a body read a piece at a time (a data export's file), sent as the client takes it instead of `body` */
  stream?: BodyStream;
}

/**
 * A body too large to hold in memory: the front end asks for the next piece only once the client has taken
 * the last, so a download holds one piece at a time whatever its size. A piece may be overwritten by the
 * next (a file read into one buffer); `return` closes the source when the client goes away.
 */
export interface BodyStream {
  pieces: AsyncIterator<Buffer, unknown>;
  /** its length in bytes, sent as Content-Length */
  size: number;
}

/**
 * A body written as UTF-8 when it is sent, into memory that the next body written reuses: the front end
 * sends what `write` returns at once (see envelope.ts, WrittenFields).
 */
export interface WrittenBody {
  write(): Uint8Array;
}
