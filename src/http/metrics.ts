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
  private readonly histograms: { name: string; help: string; labelNames: string[]; buckets: number[]; pending: [Record<string, string>, number][]; real?: import('prom-client').Histogram<string> }[] = [];

  constructor(private readonly define: (m: MetricsBuilder) => void) {}

  /** Declare a histogram (before the first scrape); returns its observer (observations before the scrape are kept). */
  histogram(name: string, help: string, labelNames: string[], buckets: number[]): (labels: Record<string, string>, value: number) => void {
    const h = { name, help, labelNames, buckets, pending: [] as [Record<string, string>, number][], real: undefined as import('prom-client').Histogram<string> | undefined };
    this.histograms.push(h);
    return (labels, value) => {
      if (h.real) h.real.observe(labels, value);
      else if (h.pending.length < 10_000) h.pending.push([labels, value]);
    };
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
    for (const h of this.histograms) {
      h.real = new p.Histogram({ name: h.name, help: h.help, labelNames: h.labelNames, buckets: h.buckets, registers: [registry] });
      for (const [labels, v] of h.pending) h.real.observe(labels, v);
      h.pending = [];
    }
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

  values(): Labeled {
    return [...this.map.values()].map((e) => [e.labels, e.value]);
  }
}
