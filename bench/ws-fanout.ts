import WebSocket from 'ws';
import { mapLimit } from './lib/api.ts';
import { CpuTally, waitForIdle } from './lib/proc.ts';
import { percentile } from './lib/stats.ts';
import { summarizeRounds, type FanoutOptions, type FanoutResult, type RoundResult } from './fanout.ts';
import type { RawResponse } from './lib/raw-http.ts';

/**
 * The WebSocket fan-out harness: N sockets held open by the target; one trigger per round; for every socket
 * the time from sending the trigger to receiving a frame that carries the round's event. Against the chat
 * server (GET /api/v1/events/socket on registered queues, a send as the trigger; frames are not
 * acknowledged during the rounds, as the raw baseline takes none) and the raw uWS publish baseline.
 */
export interface WsTarget {
  label: string;
  port: number;
  pid: number;
  /** the URL and headers of socket i */
  socket(i: number): { url: string; headers: Record<string, string> };
  /** whether a frame is the delivery the round waits for */
  isDelivery(frame: string): boolean;
  trigger(round: number): Promise<{ sentAt: number; response: RawResponse }>;
}

/** Sockets opened at a time: each upgrade authenticates (the server) before the next batch. */
const OPEN_CONCURRENCY = 64;

export async function runWsFanout(target: WsTarget, n: number, options: FanoutOptions): Promise<FanoutResult> {
  const arrivals: number[] = new Array(n).fill(NaN);
  let armed = false;
  let count = 0;
  let allDone: () => void = () => {};
  const sockets = await mapLimit(Array.from({ length: n }, (_, i) => i), OPEN_CONCURRENCY, (i) => {
    const { url, headers } = target.socket(i);
    const ws = new WebSocket(url, { headers, perMessageDeflate: false });
    ws.on('message', (data) => {
      if (!armed || !Number.isNaN(arrivals[i]!)) return;
      if (!target.isDelivery(String(data))) return;
      arrivals[i] = performance.now();
      if (++count === n) allDone();
    });
    return new Promise<WebSocket>((resolve, reject) => {
      ws.once('open', () => resolve(ws));
      ws.once('error', reject);
      ws.once('unexpected-response', (_request, response) => reject(new Error(`${target.label}: upgrade refused with ${response.statusCode}`)));
    });
  });
  try {
    const rounds: RoundResult[] = [];
    const cpu = new CpuTally(target.pid);
    let errors = 0;
    for (let r = 0; r < options.warmupRounds + options.rounds; r++) {
      await waitForIdle(target.pid);
      arrivals.fill(NaN);
      count = 0;
      const done = new Promise<void>((resolve) => (allDone = resolve));
      const start = cpu.mark();
      armed = true;
      const { sentAt, response } = await target.trigger(r);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([done, new Promise<void>((resolve) => (timer = setTimeout(resolve, options.roundTimeoutMs)))]);
      clearTimeout(timer);
      armed = false;
      const latencies = arrivals.filter((at) => !Number.isNaN(at)).map((at) => at - sentAt);
      errors += n - latencies.length;
      if (r >= options.warmupRounds) {
        cpu.add(start);
        const last = Math.max(...latencies);
        rounds.push({
          firstMs: percentile(latencies, 0),
          p50Ms: percentile(latencies, 50),
          p99Ms: percentile(latencies, 99),
          maxMs: last,
          deliveriesPerSecond: latencies.length / (last / 1000),
          triggerAckMs: response.at - sentAt,
          errors: n - latencies.length,
          early: 0,
        });
      }
      if (latencies.length < n) throw new Error(`${target.label}: only ${latencies.length} of ${n} sockets got the round's event within ${options.roundTimeoutMs} ms`);
    }
    return summarizeRounds(target.label, n, rounds, errors, cpu);
  } finally {
    for (const ws of sockets) ws.terminate();
  }
}
