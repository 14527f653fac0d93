/**
 * Baseline for the fan-out harness: a raw uWebSockets.js server that holds every GET as a long-poll and, when
 * a POST arrives, completes them all: from a setImmediate, each in its own `res.cork` (completing them from
 * inside the POST's handler would be 8x slower, see ARCHITECTURE.md). Each answer is an event envelope of
 * about the size the chat server sends, so both write the same bytes.
 *
 *   node --import tsx bench/baselines/raw-longpoll.ts [--port 0] [--bytes N]
 *
 * `--bytes`: the answer padded to about N bytes (the size of the server's answer in a fan-out of another
 * event type, e.g. a message event with its flags and rendered content).
 */
import { parseArgs } from 'node:util';
import uWS, { type HttpResponse } from 'uWebSockets.js';
import { listenOnLoopback } from './listen.ts';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, bytes: { type: 'string', default: '0' } } });

const PADDING_BASE = 180;
const padding = 'x'.repeat(Math.max(0, Number(values.bytes) - PADDING_BASE));

const held = new Set<HttpResponse>();
let eventId = 0;

function completeAll(): void {
  const id = eventId++;
  const body =
    `{"result":"success","msg":"","events":[{"id":${id},"type":"realm_user","op":"update",` +
    `"person":{"user_id":8,"full_name":"Bench Fanout ${id}"},"padding":"${padding}"}],"queue_id":"raw-longpoll-baseline"}`;
  const waiting = [...held];
  held.clear();
  for (const res of waiting) res.cork(() => res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(body));
}

const app = uWS.App();
app.get('/*', (res) => {
  res.onAborted(() => held.delete(res));
  held.add(res);
});
app.post('/*', (res) => {
  let aborted = false;
  res.onAborted(() => (aborted = true));
  res.onData((_chunk, isLast) => {
    if (!isLast || aborted) return;
    const count = held.size;
    res.cork(() => res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(`{"result":"success","held":${count}}`));
    setImmediate(completeAll);
  });
});
listenOnLoopback(app, Number(values.port));
