/**
 * `GET /metrics` of the alert manager, with Alertmanager 0.25's metric names. The hot paths only add
 * to plain numbers (AlertmanagerMetrics); prom-client, its registry and the process metrics are
 * loaded on the first scrape, each metric reading those numbers when collected.
 */
import { lazyRequire } from '../http/lazy.js';

type PromClient = typeof import('prom-client');
const prom = lazyRequire<PromClient>('prom-client');

/** notify.go's latency buckets. */
const LATENCY_BUCKETS = [1, 5, 10, 15, 20];

export interface MetricSources {
  /** Current alerts by state (`active`, `suppressed`, `unprocessed`). */
  alertsByState(): Record<string, number>;
  /** Silences by state (`active`, `pending`, `expired`). */
  silencesByState(): Record<string, number>;
  aggregationGroups(): number;
  nflogEntries(): number;
}

export class AlertmanagerMetrics {
  readonly received = { firing: 0, resolved: 0 };
  invalid = 0;
  readonly notifications = new Map<string, number>();
  readonly notificationsFailed = new Map<string, number>();
  readonly requests = new Map<string, number>();
  readonly requestsFailed = new Map<string, number>();
  /** Latency observations not yet handed to the histogram (prom-client is loaded on first scrape). */
  private pendingLatency: { integration: string; seconds: number }[] = [];
  lastReloadOk = true;
  lastReloadAt = Date.now() / 1000;
  private registry?: import('prom-client').Registry;
  private latency?: import('prom-client').Histogram<'integration'>;

  constructor(private readonly sources: MetricSources) {}

  add(map: Map<string, number>, integration: string): void {
    map.set(integration, (map.get(integration) ?? 0) + 1);
  }

  observeLatency(integration: string, seconds: number): void {
    if (this.latency) this.latency.observe({ integration }, seconds);
    else if (this.pendingLatency.length < 10_000) this.pendingLatency.push({ integration, seconds });
  }

  /** The Prometheus text exposition and its content type. */
  async render(): Promise<{ text: string; contentType: string }> {
    const registry = (this.registry ??= this.build());
    return { text: await registry.metrics(), contentType: registry.contentType };
  }

  private build(): import('prom-client').Registry {
    const p = prom();
    const registry = new p.Registry();
    p.collectDefaultMetrics({ register: registry });
    const gauge = (name: string, help: string, labelNames: string[], collect: (this: import('prom-client').Gauge<string>) => void) =>
      new p.Gauge({ name, help, labelNames, registers: [registry], collect });
    const counter = (name: string, help: string, labelNames: string[], values: () => [Record<string, string>, number][]) =>
      new p.Counter({
        name,
        help,
        labelNames,
        registers: [registry],
        collect() {
          this.reset();
          for (const [labels, v] of values()) this.inc(labels, v);
        },
      });
    const sources = this.sources;
    gauge('alertmanager_alerts', 'How many alerts by state.', ['state'], function () {
      this.reset();
      for (const [state, n] of Object.entries(sources.alertsByState())) this.set({ state }, n);
    });
    counter('alertmanager_alerts_received_total', 'The total number of received alerts.', ['status', 'version'], () => [
      [{ status: 'firing', version: 'v2' }, this.received.firing],
      [{ status: 'resolved', version: 'v2' }, this.received.resolved],
    ]);
    counter('alertmanager_alerts_invalid_total', 'The total number of received alerts that were invalid.', ['version'], () => [[{ version: 'v2' }, this.invalid]]);
    const perIntegration = (map: Map<string, number>) => () => [...map].map(([integration, n]) => [{ integration }, n] as [Record<string, string>, number]);
    counter('alertmanager_notifications_total', 'The total number of attempted notifications.', ['integration'], perIntegration(this.notifications));
    counter('alertmanager_notifications_failed_total', 'The total number of failed notifications.', ['integration'], perIntegration(this.notificationsFailed));
    counter('alertmanager_notification_requests_total', 'The total number of attempted notification requests.', ['integration'], perIntegration(this.requests));
    counter('alertmanager_notification_requests_failed_total', 'The total number of failed notification requests.', ['integration'], perIntegration(this.requestsFailed));
    this.latency = new p.Histogram({ name: 'alertmanager_notification_latency_seconds', help: 'The latency of notifications in seconds.', labelNames: ['integration'], buckets: LATENCY_BUCKETS, registers: [registry] });
    for (const o of this.pendingLatency) this.latency.observe({ integration: o.integration }, o.seconds);
    this.pendingLatency = [];
    gauge('alertmanager_silences', 'How many silences by state.', ['state'], function () {
      this.reset();
      for (const [state, n] of Object.entries(sources.silencesByState())) this.set({ state }, n);
    });
    gauge('alertmanager_dispatcher_aggregation_groups', 'Number of active aggregation groups', [], function () {
      this.set(sources.aggregationGroups());
    });
    gauge('alertmanager_nflog_entries', 'Notification log entries kept.', [], function () {
      this.set(sources.nflogEntries());
    });
    const self = this;
    gauge('alertmanager_config_last_reload_successful', 'Whether the last configuration reload attempt was successful.', [], function () {
      this.set(self.lastReloadOk ? 1 : 0);
    });
    gauge('alertmanager_config_last_reload_success_timestamp_seconds', 'Timestamp of the last successful configuration reload.', [], function () {
      this.set(self.lastReloadAt);
    });
    return registry;
  }
}

/** alertmanager_alerts_received_total and _invalid_total, as 0.25's API counts a POST. */
export function countReceived(m: AlertmanagerMetrics, alerts: { endsAt?: number }[], invalid: number, now: number): void {
  for (const a of alerts) {
    if (a.endsAt !== undefined && a.endsAt <= now) m.received.resolved++;
    else m.received.firing++;
  }
  m.invalid += invalid;
}
