import type { Disconnect } from '../../actors/disconnect.ts';

/** A request as the front end copied it off the socket: plain data, so dispatch can run without uWS. */
export interface ApiRequest {
  method: string;
  /** the URL path, e.g. /api/v1/users/me */
  path: string;
  /** the raw query string, without '?' */
  query: string;
  host: string;
  authorization: string;
  /** the client's address (see client-address.ts); absent for a request made inside the process */
  clientAddress?: string;
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
}
