import { Agent, request as httpRequest } from 'node:http';
import type { ApiRequest, ApiResponse } from '../http/request.ts';

/** The query parameter that marks a request one node forwarded to another: it is not forwarded again. */
export const FORWARD_MARK = 'chat_forwarded=1';

/**
 * Removes the forward mark from a request's query, saying whether it was there: only as the last parameter
 * (where forwardHttp appends it) and whole, so that `xchat_forwarded=1` is not taken for it.
 */
export function takeForwardMark(request: { query: string }): boolean {
  if (request.query === FORWARD_MARK) {
    request.query = '';
    return true;
  }
  if (!request.query.endsWith(`&${FORWARD_MARK}`)) return false;
  request.query = request.query.slice(0, -FORWARD_MARK.length - 1);
  return true;
}

/** Response headers that belong to one connection, not to the answer passed on. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date']);

/**
 * An answer larger than this is passed on as it arrives rather than gathered first: a data export downloaded
 * through a replica must not be held whole in its memory. Smaller answers, nearly all of them, are gathered,
 * the cheaper way. (Every answer of a node tells its length: uWS sends none chunked.)
 */
const STREAM_ABOVE_BYTES = 1024 * 1024;

/** Connections to the other nodes are kept open: a forwarded write costs no new handshake. */
const agent = new Agent({ keepAlive: true, maxSockets: 256 });

/**
 * Sends a request as the client sent it (method, path, query, Host, credentials, body) to another node's
 * HTTP API and answers with that node's answer. The HTTP API is the one contract every route already has:
 * parsing, authentication and limits stay where they are, with nothing to serialize anew. A client that
 * disconnects aborts the forwarded request (a held long-poll lets go there too).
 */
export function forwardHttp(baseUrl: string, request: ApiRequest): Promise<ApiResponse> {
  const target = new URL(baseUrl);
  const query = request.query ? `${request.query}&${FORWARD_MARK}` : FORWARD_MARK;
  const headers: Record<string, string> = { host: request.host };
  if (request.authorization) headers.authorization = request.authorization;
  if (request.contentType) headers['content-type'] = request.contentType;
  if (request.userAgent) headers['user-agent'] = request.userAgent;
  const client = request.clientAddress ?? request.connection?.clientAddress();
  // The receiving node counts budgets of requests without credentials by this address when it trusts the
  // forwarding node as a proxy (CHAT_TRUSTED_PROXIES).
  if (client) headers['x-forwarded-for'] = client;
  const hasBody = request.body.length > 0;
  if (hasBody) headers['content-length'] = String(request.body.length);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      { agent, host: target.hostname, port: target.port, method: request.method, path: `${request.path}?${query}`, headers },
      (incoming) => {
        const answer: Record<string, string> = {};
        for (const [name, value] of Object.entries(incoming.headers)) {
          if (value === undefined || HOP_BY_HOP.has(name)) continue;
          answer[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        const status = incoming.statusCode ?? 502;
        const size = Number(incoming.headers['content-length'] ?? NaN);
        if (size > STREAM_ABOVE_BYTES) {
          // Until the front end reads it; a failure then ends its pieces, which cuts the client's connection.
          incoming.on('error', () => {});
          resolve({ status, headers: answer, body: '', stream: { pieces: incoming[Symbol.asyncIterator](), size } });
          return;
        }
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('error', reject);
        incoming.on('end', () => resolve({ status, headers: answer, body: '', bytes: Buffer.concat(chunks) }));
      },
    );
    outgoing.on('error', reject);
    request.signal?.onAbort(() => outgoing.destroy(new Error('the client went away')));
    outgoing.end(hasBody ? request.body : undefined);
  });
}
