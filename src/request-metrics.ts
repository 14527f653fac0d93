import type { Registry } from 'prom-client';

/** The latency buckets, in seconds (long-polls included: up to the heartbeat's 90 s). */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 90];

/** One method and route: its requests by status, and the latency of those answered through dispatch. */
interface RouteSeries {
  statuses: Map<number, number>;
  /** observations per bucket (not cumulative); past the last bound they count only in `count` */
  buckets: number[];
  sum: number;
  count: number;
}

/** A series as prom-client's registry formats it. */
interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/**
 * API requests by method, route and status (`chat_http_requests_total`), and their latency by method and
 * route (`chat_http_request_duration_seconds`): counted in plain maps and arrays, and given to the registry
 * as Prometheus series when scraped. prom-client's labelled counter and histogram build and hash a labels
 * string per call, about 1 us a request: as much as the rest of a long-poll's own work.
 */
export class RequestMetrics {
  /** method -> route -> series */
  private readonly series = new Map<string, Map<string, RouteSeries>>();

  constructor(registry: Registry) {
    // prom-client takes any object with these members as a metric (it reads `get()` when scraped).
    const metric = (name: string, help: string, type: 'counter' | 'histogram', values: () => MetricValue[]) => ({
      name, help, type, aggregator: 'sum',
      get: () => Promise.resolve({ name, help, type, aggregator: 'sum', values: values() }),
      reset: () => this.series.clear(),
    });
    const register = (value: ReturnType<typeof metric>) => registry.registerMetric(value as unknown as Parameters<Registry['registerMetric']>[0]);
    register(metric('chat_http_requests_total', 'API requests by route and status', 'counter', () => this.counts()));
    register(metric('chat_http_request_duration_seconds', 'API request latency by route (long-polls included)', 'histogram', () => this.latencies()));
  }

  /** A request answered; `seconds`: how long it took, null if it was refused before dispatch had it. */
  record(method: string, route: string, status: number, seconds: number | null): void {
    let routes = this.series.get(method);
    if (!routes) this.series.set(method, (routes = new Map()));
    let series = routes.get(route);
    if (!series) routes.set(route, (series = { statuses: new Map(), buckets: LATENCY_BUCKETS.map(() => 0), sum: 0, count: 0 }));
    series.statuses.set(status, (series.statuses.get(status) ?? 0) + 1);
    if (seconds === null) return;
    for (let i = 0; i < LATENCY_BUCKETS.length; i++) {
      if (seconds <= LATENCY_BUCKETS[i]!) {
        series.buckets[i]!++;
        break;
      }
    }
    series.sum += seconds;
    series.count++;
  }

  private counts(): MetricValue[] {
    const values: MetricValue[] = [];
    for (const [method, routes] of this.series) {
      for (const [route, series] of routes) {
        for (const [status, count] of series.statuses) values.push({ labels: { method, route, status }, value: count });
      }
    }
    return values;
  }

  private latencies(): MetricValue[] {
    const name = 'chat_http_request_duration_seconds';
    const values: MetricValue[] = [];
    for (const [method, routes] of this.series) {
      for (const [route, series] of routes) {
        if (series.count === 0) continue;
        let total = 0;
        LATENCY_BUCKETS.forEach((bound, i) => {
          total += series.buckets[i]!;
          values.push({ labels: { le: bound, method, route }, value: total, metricName: `${name}_bucket` });
        });
        values.push(
          { labels: { le: '+Inf', method, route }, value: series.count, metricName: `${name}_bucket` },
          { labels: { method, route }, value: series.sum, metricName: `${name}_sum` },
          { labels: { method, route }, value: series.count, metricName: `${name}_count` },
        );
      }
    }
    return values;
  }
}
