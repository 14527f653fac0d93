/**
 * Baseline: a raw uWebSockets.js handler answering a small JSON object, nothing else. The chat server's
 * HTTP scenarios are reported as ratios to this, measured in the same run on the same core.
 *
 *   node --import tsx bench/baselines/raw-json.ts [--port 0]
 */
import { parseArgs } from 'node:util';
import uWS from 'uWebSockets.js';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' } } });

// About the size of a small API answer (GET /users/me is a few hundred bytes).
const BODY = JSON.stringify({ result: 'success', msg: '', user_id: 8, email: 'raw@example.com', full_name: 'Raw Baseline', is_active: true });

const app = uWS.App();
app.any('/*', (res) => {
  res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(BODY);
});
app.listen('127.0.0.1', Number(values.port), (token) => {
  if (!token) {
    console.error('cannot listen');
    process.exit(1);
  }
  console.log(`Listening on http://127.0.0.1:${uWS.us_socket_local_port(token)}`);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(0));
