import type { ApiRequest, ApiResponse } from './request.ts';

/** One open WebSocket as its endpoint sees it: the uWS front end implements it. */
export interface SocketConnection {
  /**
   * Sends a text frame: a string, or its UTF-8 bytes (read before this returns). A connection that has fallen
   * too far behind (its unsent bytes past the front end's limit) is dropped instead, and its endpoint hears
   * `close`.
   */
  send(text: string | Uint8Array): void;
  /** Sends a last text frame if given, then closes with the code and the short reason. */
  close(code: number, reason: string, lastFrame?: string): void;
}

/**
 * A WebSocket endpoint as plain functions over plain data, like `Dispatch` for HTTP: the front end copies
 * the upgrade request, asks `accept`, and reports the connection's life to the state it got.
 */
export interface SocketEndpoint<S> {
  /** the URL path, e.g. /api/v1/events/socket */
  path: string;
  /** the upgrade request: the new connection's state, or the response that refuses the upgrade */
  accept(request: ApiRequest): { state: S } | { refuse: ApiResponse };
  open(state: S, connection: SocketConnection): void;
  /** a frame from the client: its text, or null for a binary frame */
  message(state: S, text: string | null): void;
  /** the connection is gone, whoever closed it */
  close(state: S): void;
}

/** What an endpoint keeps for one connection and tells of its life (the `S` of a SocketEndpoint). */
export interface SocketHandler {
  open(connection: SocketConnection): void;
  message(text: string | null): void;
  closed(): void;
}
