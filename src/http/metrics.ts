/**
 * `GET /metrics` for a component: the Prometheus text format through prom-client, loaded on the
 * first scrape (the hot paths only add to plain numbers the component keeps). A component gives
 * its metrics as gauges and counters read when Prometheus collects; the process metrics (CPU,
 * memory, event-loop lag, handles) come with every registry.
 */
import { lazyRequire } from './lazy.js';
import { sendText } from './respond.js';
import type { Route, Router } from './router.js';

type PromClient = typeof import('prom-client');
const prom = lazyRequire<PromClient>('prom-client');

export type Labeled = [Record<string, string>, number][];

export interface MetricsBuilder {
  /** A gauge set from `values()` at each scrape (which may read a database, hence the promise). */
  gauge(name: string, help: string, labelNames: string[], values: () => Labeled | Promise<Labeled>): void;
  /** A counter set from `values()` (running totals the component keeps) at each scrape. */
  counter(name: string, help: string, labelNames: string[], values: () => Labeled | Promise<Labeled>): void;
}

export class ComponentMetrics {
  private registry?: import('prom-client').Registry;
  private readonly histograms: BucketHistogram[] = [];

  constructor(private readonly define: (m: MetricsBuilder) => void) {}

  /** Declare a histogram (before the first scrape); returns its observer. */
  histogram(name: string, help: string, labelNames: string[], buckets: number[]): (labels: Record<string, string>, value: number) => void {
    const h = new BucketHistogram(name, help, labelNames, buckets);
    this.histograms.push(h);
    return (labels, value) => h.observe(labels, value);
  }

  async render(): Promise<{ text: string; contentType: string }> {
    const registry = (this.registry ??= this.build());
    return { text: await registry.metrics(), contentType: registry.contentType };
  }

  route(router: Router, path = '/metrics'): Route {
    return router.get(path, async (ctx) => {
      const { text, contentType } = await this.render();
      sendText(ctx.res, 200, text, contentType);
    });
  }

  private build(): import('prom-client').Registry {
    const p = prom();
    const registry = new p.Registry();
    p.collectDefaultMetrics({ register: registry });
    for (const h of this.histograms) registry.registerMetric(h as unknown as import('prom-client').Metric);
    const builder: MetricsBuilder = {
      gauge: (name, help, labelNames, values) =>
        void new p.Gauge({
          name,
          help,
          labelNames,
          registers: [registry],
          async collect() {
            const all = await values();
            this.reset();
            for (const [labels, v] of all) this.set(labels, v);
          },
        }),
      counter: (name, help, labelNames, values) =>
        void new p.Counter({
          name,
          help,
          labelNames,
          registers: [registry],
          async collect() {
            const all = await values();
            this.reset();
            for (const [labels, v] of all) this.inc(labels, v);
          },
        }),
    };
    this.define(builder);
    return registry;
  }
}

/** Running totals by label set (a Map keyed by the label values). */
export class LabeledCounts {
  private readonly map = new Map<string, { labels: Record<string, string>; value: number }>();

  add(labels: Record<string, string>, by = 1): void {
    const key = Object.values(labels).join('\u0000');
    const e = this.map.get(key);
    if (e) e.value += by;
    else this.map.set(key, { labels, value: by });
  }

  /**
   * The running total of one label set, to be added to directly (`cell.value += by`): a caller that
   * keeps the cell counts without a key, a label object or a lookup per addition. Creates the series
   * (at 0) when it is new, so take a cell only when there is something to add to it.
   */
  cell(labels: Record<string, string>): { value: number } {
    const key = Object.values(labels).join('\u0000');
    let e = this.map.get(key);
    if (!e) this.map.set(key, (e = { labels, value: 0 }));
    return e;
  }

  values(): Labeled {
    return [...this.map.values()].map((e) => [e.labels, e.value]);
  }
}

/**
 * A Prometheus histogram kept as per-bucket counts from its first observation: an observation is a
 * few additions (no prom-client on the request path, nothing held per observation, nothing lost
 * before the first scrape), and the registry reads it through `get()`, the way it reads its own
 * metrics, in prom-client's layout (cumulative `_bucket` series with `le` first, `+Inf`, `_sum`,
 * `_count`).
 */
export class BucketHistogram {
  readonly type = 'histogram';
  private readonly series = new Map<string, { labels: Record<string, string>; counts: number[]; sum: number; count: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
    private readonly buckets: readonly number[],
  ) {}

  observe(labels: Record<string, string>, value: number): void {
    const key = this.labelNames.length === 1 ? (labels[this.labelNames[0]!] ?? '') : this.labelNames.map((n) => labels[n] ?? '').join('\u0000');
    let s = this.series.get(key);
    if (!s) {
      const own: Record<string, string> = {};
      for (const n of this.labelNames) if (labels[n] !== undefined) own[n] = labels[n]!;
      this.series.set(key, (s = { labels: own, counts: new Array<number>(this.buckets.length).fill(0), sum: 0, count: 0 }));
    }
    let i = 0;
    while (i < this.buckets.length && value > this.buckets[i]!) i++;
    if (i < this.buckets.length) s.counts[i]!++;
    s.sum += value;
    s.count++;
  }

  get(): { name: string; help: string; type: string; aggregator: string; values: { metricName: string; labels: Record<string, string | number>; value: number }[] } {
    const values: { metricName: string; labels: Record<string, string | number>; value: number }[] = [];
    for (const s of this.series.values()) {
      let running = 0;
      this.buckets.forEach((le, i) => {
        running += s.counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { le, ...s.labels }, value: running });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...s.labels }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: 'sum', values };
  }

  reset(): void {
    this.series.clear();
  }
}
