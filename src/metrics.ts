import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { RequestMetrics } from './request-metrics.ts';
import type { Runtime } from '../actors/runtime.ts';

/**
 * How often the event loop's lag is sampled (prom-client's `eventLoopMonitoringPrecision`, the resolution of
 * Node's monitorEventLoopDelay). Its default of 10 ms is a timer that wakes an idle server 100 times a
 * second: 11 ms of CPU a second on this machine, against 1.9 at 100 ms (bench/README.md). Every stall of
 * 100 ms or more still delays a sample by its length; shorter ones are sampled in proportion to their length.
 */
const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * The server's Prometheus metrics. Gauges that mirror live state are read when scraped, so serving a
 * request costs one count in RequestMetrics.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly requests = new RequestMetrics(this.registry);
  readonly deliveries = new Counter({ name: 'chat_event_deliveries_total', help: 'events appended to event queues', registers: [this.registry] });
  readonly deliveryLatency = new Histogram({
    name: 'chat_event_delivery_seconds', help: 'from a change being applied to its events being queued (includes the durable commit)',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1], registers: [this.registry],
  });
  lastSnapshotAt = Date.now();

  constructor(runtime: () => Runtime | null, logEntries: () => number) {
    collectDefaultMetrics({ register: this.registry, prefix: 'chat_', eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    const gauge = (name: string, help: string, read: () => number) => this.gauge(name, help, read);
    gauge('chat_event_queues', 'live event queues', () => runtime()?.queues.size ?? 0);
    gauge('chat_held_polls', 'long-polls being held', () => runtime()?.queues.heldCount() ?? 0);
    gauge('chat_event_sockets', 'WebSockets attached to event queues', () => runtime()?.queues.attachedCount() ?? 0);
    gauge('chat_log_entries', 'write-ahead log entries not yet covered by a snapshot', logEntries);
    gauge('chat_log_position', 'sequence number of the last log entry', () => runtime()?.logPosition ?? 0);
    gauge('chat_last_snapshot_age_seconds', 'seconds since the last snapshot', () => (Date.now() - this.lastSnapshotAt) / 1000);
  }

  /** A gauge read when scraped. */
  gauge(name: string, help: string, read: () => number): void {
    new Gauge({ name, help, registers: [this.registry], collect() { this.set(read()); } });
  }

  observeDelivery(count: number, seconds: number): void {
    this.deliveries.inc(count);
    this.deliveryLatency.observe(seconds);
  }
}
