/**
 * Baseline for the WebSocket fan-out: a raw uWebSockets.js server whose every WebSocket subscribes to one
 * topic; a POST answers, then publishes one frame to the topic from a setImmediate (as raw-longpoll.ts
 * completes its polls). The frame is padded to about `--bytes` (the size of the server's frame).
 *
 *   node --import tsx bench/baselines/raw-websocket.ts [--port 0] [--bytes N]
 */
import { parseArgs } from 'node:util';
import uWS from 'uWebSockets.js';
import { listenOnLoopback } from './listen.ts';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, bytes: { type: 'string', default: '0' } } });

const PADDING_BASE = 130;
const padding = 'x'.repeat(Math.max(0, Number(values.bytes) - PADDING_BASE));
let eventId = 0;

const app = uWS.App();
app.ws('/*', { idleTimeout: 0, maxBackpressure: 1024 * 1024, open: (ws) => void ws.subscribe('events') });
app.post('/*', (res) => {
  let aborted = false;
  res.onAborted(() => (aborted = true));
  res.onData((_chunk, isLast) => {
    if (!isLast || aborted) return;
    res.cork(() => res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(`{"result":"success","subscribers":${app.numSubscribers('events')}}`));
    setImmediate(() => {
      const id = eventId++;
      app.publish('events', `{"result":"success","msg":"","events":[{"id":${id},"type":"message","padding":"${padding}"}],"queue_id":"raw-websocket-baseline"}`);
    });
  });
});
listenOnLoopback(app, Number(values.port));
