/**
 * Baseline: a raw uWebSockets.js handler answering a small JSON object, nothing else. The chat server's
 * HTTP scenarios are reported as ratios to this, measured in the same run on the same core.
 *
 *   node --import tsx bench/baselines/raw-json.ts [--port 0]
 */
import { parseArgs } from 'node:util';
import uWS from 'uWebSockets.js';
import { listenOnLoopback } from './listen.ts';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' } } });

// About the size of a small API answer (GET /users/me is a few hundred bytes).
const BODY = JSON.stringify({ result: 'success', msg: '', user_id: 8, email: 'raw@example.com', full_name: 'Raw Baseline', is_active: true });

const app = uWS.App();
app.any('/*', (res) => {
  res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(BODY);
});
listenOnLoopback(app, Number(values.port));
