/**
 * Alerts components raise in ctl's own alert manager. Each component gets one InternalAlerts (in
 * its context): what it reports firing is posted to the alert manager's handle with `component`
 * added to the labels, as a POST to /api/v2/alerts would be, with an end time a few refresh periods
 * ahead; a timer re-posts what still fires (so a daemon that dies leaves alerts that resolve by
 * themselves, as Prometheus' do), and a resolution is posted with the end time now. When the alert
 * manager is absent or down, the alerts wait and the next refresh delivers them.
 */
import type { Logger } from 'pino';
import type { Clock } from '../http/clock.js';
import type { InternalAlert, InternalAlerts } from '../http/component.js';

/** What the alert manager's handle offers for this (the same path as POST /api/v2/alerts). */
export interface AlertSink {
  post(alerts: { labels: Record<string, string>; annotations: Record<string, string>; startsAt?: number; endsAt?: number; generatorURL: string }[]): string[];
}

export const REFRESH_MS = 60_000;
/** A firing alert's end: three refreshes ahead (missed refreshes resolve it). */
const AHEAD_MS = 3 * REFRESH_MS;

interface Active {
  alert: InternalAlert;
  startsAt: number;
  /** For events: when it resolves by itself. */
  until?: number;
}

const keyOf = (alertname: string, labels: Record<string, string>) =>
  alertname +
  '\u0000' +
  Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join('\u0000');

export class ComponentAlerts implements InternalAlerts {
  private readonly active = new Map<string, Active>();
  /** Resolutions not delivered yet (the alert manager was unavailable). */
  private readonly unsent = new Map<string, InternalAlert>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly component: string,
    readonly enabled: boolean,
    private readonly sink: () => AlertSink | undefined,
    private readonly baseUrl: () => string,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  reconcile(alertname: string, firing: readonly InternalAlert[]): void {
    if (!this.enabled) return;
    const now = this.clock.now();
    const keep = new Set<string>();
    const fresh: Active[] = [];
    for (const a of firing) {
      const key = keyOf(alertname, a.labels);
      keep.add(key);
      if (!this.active.has(key)) {
        const entry = { alert: { ...a, alertname }, startsAt: now };
        this.active.set(key, entry);
        this.unsent.delete(key);
        fresh.push(entry);
      }
    }
    const resolved: InternalAlert[] = [];
    for (const [key, e] of this.active) {
      if (e.alert.alertname !== alertname || keep.has(key) || e.until !== undefined) continue;
      this.active.delete(key);
      resolved.push(e.alert);
    }
    this.send(fresh, resolved);
  }

  fire(alert: InternalAlert): void {
    if (!this.enabled) return;
    const key = keyOf(alert.alertname, alert.labels);
    const e = this.active.get(key);
    if (e && e.until === undefined) return;
    const entry = { alert, startsAt: e?.startsAt ?? this.clock.now() };
    this.active.set(key, entry);
    this.unsent.delete(key);
    this.send([entry], []);
  }

  resolve(alertname: string, labels: Record<string, string>): void {
    if (!this.enabled) return;
    const key = keyOf(alertname, labels);
    const e = this.active.get(key);
    if (!e) return;
    this.active.delete(key);
    this.send([], [e.alert]);
  }

  event(alert: InternalAlert, forMs: number): void {
    if (!this.enabled) return;
    const now = this.clock.now();
    const key = keyOf(alert.alertname, alert.labels);
    const e = this.active.get(key);
    const entry = { alert, startsAt: e?.startsAt ?? now, until: now + forMs };
    this.active.set(key, entry);
    this.send([entry], []);
  }

  firing(): InternalAlert[] {
    return [...this.active.values()].map((e) => e.alert);
  }

  /** Start the refresh timer (the daemon calls it once components are up). */
  start(): void {
    if (!this.enabled || this.timer) return;
    this.timer = setInterval(() => this.refresh(), REFRESH_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Re-post what fires (and resolutions still owed); drop events whose time is over. */
  refresh(): void {
    const now = this.clock.now();
    for (const [key, e] of this.active) if (e.until !== undefined && e.until <= now) this.active.delete(key);
    this.send([...this.active.values()], [...this.unsent.values()]);
  }

  private send(firing: Active[], resolved: InternalAlert[]): void {
    if (firing.length === 0 && resolved.length === 0) return;
    const now = this.clock.now();
    const base = this.baseUrl();
    const body = [
      ...firing.map((e) => this.postable(e.alert, base, e.startsAt, e.until ?? now + AHEAD_MS)),
      ...resolved.map((a) => this.postable(a, base, undefined, now)),
    ];
    const sink = this.sink();
    if (!sink) {
      // No alert manager now: remember the resolutions; firing ones go out with the next refresh.
      for (const a of resolved) this.unsent.set(keyOf(a.alertname, a.labels), a);
      return;
    }
    try {
      const errors = sink.post(body);
      for (const a of resolved) this.unsent.delete(keyOf(a.alertname, a.labels));
      if (errors.length > 0) this.log.warn({ errors }, `${this.component}: internal alerts refused: ${errors.join('; ')}`);
    } catch (e) {
      for (const a of resolved) this.unsent.set(keyOf(a.alertname, a.labels), a);
      this.log.warn({ err: (e as Error).message }, `${this.component}: internal alerts not delivered: ${(e as Error).message}`);
    }
  }

  private postable(a: InternalAlert, base: string, startsAt: number | undefined, endsAt: number) {
    return {
      labels: { ...a.labels, alertname: a.alertname, component: this.component },
      annotations: a.annotations ?? {},
      ...(startsAt !== undefined ? { startsAt } : {}),
      endsAt,
      generatorURL: base && a.path ? base + a.path : '',
    };
  }
}

/** ctl.yaml `alerts`: `{nodes: true, gateway: false, ...}`; every component on unless set false. */
export function alertsEnabled(section: Record<string, unknown> | undefined, component: string): boolean {
  const v = section?.[component];
  if (v === undefined || v === null) return true;
  if (typeof v !== 'boolean') throw new Error(`ctl.yaml: alerts.${component} must be true or false`);
  return v;
}
