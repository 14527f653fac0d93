import uWS from 'uWebSockets.js';

/**
 * Starts a raw baseline server on loopback and prints the line the bench waits for (`Listening on URL`), as the
 * chat server does; SIGINT and SIGTERM end it at once.
 */
export function listenOnLoopback(app: uWS.TemplatedApp, port: number): void {
  app.listen('127.0.0.1', port, (token) => {
    if (!token) {
      console.error('cannot listen');
      process.exit(1);
    }
    console.log(`Listening on http://127.0.0.1:${uWS.us_socket_local_port(token)}`);
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(0));
}
