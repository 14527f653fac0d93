import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export type StandInHandler = (url: URL, body: URLSearchParams | Record<string, unknown>, request: IncomingMessage) => { status?: number; body: unknown };

/**
 * A stand-in for a service the server calls (a push bouncer, an OAuth provider): a real HTTP server on a free
 * port answering JSON, its handler checking what the real service checks. Closed by `t.teardown`.
 */
export async function standIn(t: { teardown(fn: () => unknown): void }, handle: StandInHandler): Promise<string> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString();
      const body = request.headers['content-type']?.includes('json') ? JSON.parse(text) : new URLSearchParams(text);
      const answer = handle(new URL(request.url!, 'http://stand-in'), body, request);
      response.writeHead(answer.status ?? 200, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
