/**
 * The dispatcher of Alertmanager 0.25 (dispatch/dispatch.go, notify/notify.go): alerts go into aggregation groups (one per matched route and group labels); a group is
 * flushed group_wait after it starts (at once if its first alert is older than that), then every
 * group_interval (at once after a flush that took longer). A flush takes the group's alerts (firing ones with their end cleared), drops the
 * silenced and inhibited, and for each integration of the route's receiver asks the notification log
 * whether anything needs sending (new firing alerts, resolutions, or repeat_interval passed); a send
 * is retried with backoff until the next flush is due, and logged once it succeeds. Resolved alerts
 * that were part of a flush leave the group after it; an empty group is dropped.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../http/clock.js';
import type { Egress } from '../../egress/index.js';
import type { RouteNode } from '../config/runtime.js';
import { groupLabels, matchRoutes } from '../config/runtime.js';
import type { LoadedConfig } from '../config/load.js';
import type { Alert } from '../alerts.js';
import { compareAlertOrder, type LabelSet } from '../labels.js';
import { GO_ZERO_MS } from '../timefmt.js';
import { labelSetString, routeKeys } from './keys.js';
import { NotificationLog, needsUpdate, type NflogEntry, type NotificationLedger } from './nflog.js';
import { buildIntegrations, type Attempt, type Integration, type NotifyAlert } from '../receivers/index.js';
import type { Templates } from '../../gotemplate/index.js';
import { anyIntervalContains } from './time-intervals.js';
import type { AlertmanagerMetrics } from '../metrics.js';

export interface DispatcherDeps {
  clock: Clock;
  log: Logger;
  egress: Egress;
  nflog: NotificationLedger;
  /** The `externalURL` of notifications (read when one is sent: the listener's port may change). */
  externalURL(): string;
  /** The stored alert of a fingerprint (its latest state). */
  alert(fp: string): Alert | undefined;
  /** Every stored alert (at start and after a reload). */
  alerts(): readonly Alert[];
  /** True when a silence or an inhibition mutes the alert now. */
  muted(a: Alert, now: number): boolean;
  /**
   * Alerts firing here that the log shows resolved by a notification sent after this daemon last
   * heard of them (another daemon of the cluster got the resolution): end them at `at`.
   */
  resolvedElsewhere?(fps: string[], at: number): void;
  metrics?: AlertmanagerMetrics;
}

interface Group {
  /** Where the dispatcher keeps the group: the route node's id and the group labels. */
  id: string;
  /** 0.25's group key (`{}/{team="a"}:{alertname="X"}`): the webhook's `groupKey`, the log's key. */
  key: string;
  route: RouteNode;
  labels: LabelSet;
  fps: Set<string>;
  timer?: NodeJS.Timeout;
  flushed: boolean;
  flushing: boolean;
  /**
   * The timer fired while a flush was running: flush again as soon as it ends. 0.25's group loop
   * keeps such a tick in its timer's channel, so a flush slower than group_interval (an integration
   * retrying until its deadline) is followed at once by the next, never by none.
   */
  due: boolean;
  /** Its timer is set to fire at once (a group_wait cut short by an old alert, before the first flush). */
  dueNow: boolean;
  /** Its entry in the route's slot map (groupSlot), if it has one. */
  slot: string | undefined;
}

/**
 * A group's place among its route's groups, from the alert's group_by values alone (one string,
 * no label set or group key built): undefined for `group_by: [...]`, whose groups are found by
 * their full key. A missing label and an empty value are told apart, as groupLabels does.
 */
function groupSlot(route: RouteNode, labels: LabelSet): string | undefined {
  if (route.groupByAll) return undefined;
  const names = route.groupBy;
  if (names.length === 1) {
    const v = labels[names[0]!];
    return v === undefined ? '\u0001' : '\u0002' + v;
  }
  let slot = '';
  for (const n of names) {
    const v = labels[n];
    slot += v === undefined ? '\u0001' : '\u0002' + v.length + ':' + v;
  }
  return slot;
}

/** How long past a send's deadline a shared log keeps the key for the daemon sending it. */
const HOLD_MARGIN_MS = 5000;
/**
 * 0.25's notify.MinTimeout: a flush's sends are cancelled group_interval after it began, but never
 * sooner than this. An attempt still running then (a receiver that never answers) is given up, so
 * the group's other integrations wait no longer for it than in 0.25.
 */
const MIN_TIMEOUT_MS = 10_000;

export class Dispatcher {
  private groups = new Map<string, Group>();
  /**
   * The groups of each route by their slot (groupSlot): an alert finds its group from its
   * group_by values, without its group labels, their string and the key being built per alert
   * (the first burst of a restarted alert manager is thousands of alerts in a few groups).
   */
  private slots = new Map<RouteNode, Map<string, Group>>();
  private keys = new Map<RouteNode, string>();
  private integrations = new Map<string, Integration[]>();
  private config!: LoadedConfig;
  private templates!: Templates;
  private stopped = false;

  constructor(private readonly deps: DispatcherDeps) {}

  /** Start (or restart after a reload, as 0.25 does): groups are rebuilt from the stored alerts. */
  start(config: LoadedConfig, templates: Templates): void {
    for (const g of this.groups.values()) clearTimeout(g.timer);
    this.groups = new Map();
    this.slots = new Map();
    this.config = config;
    this.templates = templates;
    this.keys = routeKeys(config.route);
    this.integrations = buildIntegrations((config.tree.receivers ?? []) as Record<string, unknown>[], this.deps.egress);
    // Receivers will send over HTTP: load the client while the daemon is idle after start, not
    // during the first burst of alerts (a restarted alert manager's backlog arrives at once).
    if ([...this.integrations.values()].some((list) => list.length > 0)) setTimeout(() => this.deps.egress.warm(), 0).unref();
    this.stopped = false;
    this.ingest(this.deps.alerts());
  }

  get groupCount(): number {
    return this.groups.size;
  }

  stop(): void {
    this.stopped = true;
    for (const g of this.groups.values()) clearTimeout(g.timer);
    this.groups.clear();
    this.slots.clear();
  }

  /** New or updated alerts (after they are stored). */
  ingest(alerts: readonly Alert[]): void {
    if (this.stopped) return;
    const now = this.deps.clock.now();
    // Indexed, not for-of: the lists come from more than one place (a POST, the store at start)
    // and for-of's iterator check deoptimised the compiled loop on the second kind of list.
    for (let i = 0; i < alerts.length; i++) {
      const a = alerts[i]!;
      for (const route of matchRoutes(this.config.route, a.labels)) {
        // An alert older than group_wait in a group not flushed yet: flush at once. A group already
        // due at once keeps its timer (a backlog's groups are many old alerts each: one timer per
        // group, not one per alert); a new group starts with the delay it needs.
        const old = a.startsAt + route.groupWaitMs < now;
        const g = this.groupOf(route, a.labels, old);
        g.fps.add(a.fingerprint);
        if (old && !g.flushed && !g.dueNow) this.schedule(g, 0);
      }
    }
  }

  /** The alert's group on `route`, created (and its group_wait started) if there is none. */
  private groupOf(route: RouteNode, alertLabels: LabelSet, old: boolean): Group {
    const slot = groupSlot(route, alertLabels);
    let bySlot: Map<string, Group> | undefined;
    if (slot !== undefined) {
      bySlot = this.slots.get(route);
      if (!bySlot) this.slots.set(route, (bySlot = new Map()));
      const known = bySlot.get(slot);
      if (known) return known;
    }
    const labels = groupLabels(route, alertLabels);
    const key = `${this.keys.get(route)}:${labelSetString(labels)}`;
    // Groups are per route node, as 0.25's map per *Route: sibling routes with the same
    // matchers have the same group key but are groups of their own (each notifies its receiver).
    const id = `${route.id}\u0000${key}`;
    let g = this.groups.get(id);
    if (!g) {
      g = { id, key, route, labels, fps: new Set(), flushed: false, flushing: false, due: false, dueNow: false, slot };
      this.groups.set(id, g);
      this.schedule(g, old ? 0 : route.groupWaitMs);
    }
    if (bySlot && slot !== undefined && g.slot === slot) bySlot.set(slot, g);
    return g;
  }

  private schedule(g: Group, ms: number): void {
    clearTimeout(g.timer);
    g.dueNow = ms === 0;
    g.timer = setTimeout(() => this.tick(g), ms);
    g.timer.unref();
  }

  private tick(g: Group): void {
    if (g.flushing) g.due = true;
    else void this.run(g);
  }

  /** Flush, then again at once for each tick that came meanwhile (the timer restarts with each flush). */
  private async run(g: Group): Promise<void> {
    do {
      g.due = false;
      await this.flush(g);
    } while (g.due && !this.stopped && this.groups.get(g.id) === g);
  }

  private async flush(g: Group): Promise<void> {
    if (this.stopped || this.groups.get(g.id) !== g) return;
    g.flushing = true;
    g.flushed = true;
    const now = this.deps.clock.now();
    this.schedule(g, g.route.groupIntervalMs);
    const snapshot: { alert: Alert; resolved: boolean }[] = [];
    for (const fp of g.fps) {
      const a = this.deps.alert(fp);
      if (!a) {
        g.fps.delete(fp);
        continue;
      }
      snapshot.push({ alert: a, resolved: a.endsAt <= now });
    }
    let delivered = true;
    try {
      // TimeMuteStage / TimeActiveStage: the route's time intervals can hold back the whole flush.
      const r = g.route;
      const intervals = this.config.timeIntervals;
      const timeMuted =
        (r.muteTimeIntervals.length > 0 && anyIntervalContains(r.muteTimeIntervals, intervals, now)) ||
        (r.activeTimeIntervals.length > 0 && !anyIntervalContains(r.activeTimeIntervals, intervals, now));
      const visible = timeMuted ? [] : snapshot.filter((s) => !this.deps.muted(s.alert, now));
      // Nothing left once time intervals, silences and inhibitions had their say: 0.25's pipeline
      // stops there, before the notification log is asked or written (the flush still counts as
      // done). The log keeps what was last sent, so an alert that resolved under a silence over its
      // whole group is not sent again when the silence ends, nor are the group's others re-sent.
      if (visible.length > 0) {
        const alerts = visible.map((s) => notifyAlert(s.alert, s.resolved)).sort((x, y) => compareAlertOrder(x.labels, y.labels));
        const deadline = now + g.route.groupIntervalMs;
        const limit = now + Math.max(g.route.groupIntervalMs, MIN_TIMEOUT_MS);
        const heard = new Map(visible.map((s) => [s.alert.fingerprint, s.alert.updatedAt]));
        const results = await Promise.all((this.integrations.get(g.route.receiver) ?? []).map((i) => this.notify(g, i, alerts, deadline, limit, heard)));
        delivered = results.every(Boolean);
      }
    } catch (e) {
      delivered = false;
      this.deps.log.error({ err: e, group: g.key }, 'alertmanager: flushing a group failed');
    } finally {
      g.flushing = false;
    }
    // After a successful flush, the resolved alerts it covered leave the group, unless they fired
    // again meanwhile; after a failed one they stay, to be sent at the next flush (as 0.25).
    if (!delivered) return;
    for (const s of snapshot) {
      const cur = this.deps.alert(s.alert.fingerprint);
      if (s.resolved && (!cur || cur.endsAt <= this.deps.clock.now())) g.fps.delete(s.alert.fingerprint);
    }
    if (g.fps.size === 0) {
      clearTimeout(g.timer);
      this.groups.delete(g.id);
      if (g.slot !== undefined) this.slots.get(g.route)?.delete(g.slot);
    }
  }

  /** One integration's part of a flush; false when its send failed. */
  private async notify(g: Group, integration: Integration, all: NotifyAlert[], deadline: number, limit: number, heard: Map<string, number>): Promise<boolean> {
    const receiver = g.route.receiver;
    const logKey = NotificationLog.key(g.key, receiver, integration.kind, integration.index);
    const now = this.deps.clock.now();
    // Held past the send's deadline: a daemon that dies mid-send leaves the key to another after that.
    const turn = await this.deps.nflog.begin(logKey, now, deadline - now + HOLD_MARGIN_MS);
    // Another daemon of the cluster is notifying for this key now; the next flush looks again.
    if (!turn) return false;
    const overruled = resolvedSince(turn.entry, all, heard);
    if (overruled.length > 0) {
      // Not sent as firing again: they leave this flush, and the store takes the resolution.
      const gone = new Set(overruled);
      all = all.filter((a) => !gone.has(a.fingerprint));
      this.deps.resolvedElsewhere?.(overruled, turn.entry!.at);
    }
    const firing = new Set(all.filter((a) => !a.resolved).map((a) => a.fingerprint));
    const resolved = new Set(all.filter((a) => a.resolved).map((a) => a.fingerprint));
    let sent: NflogEntry | undefined;
    try {
      if (!needsUpdate(turn.entry, firing, resolved, integration.sendResolved, g.route.repeatIntervalMs, now)) return true;
      const alerts = integration.sendResolved ? all : all.filter((a) => !a.resolved);
      if (alerts.length > 0) {
        const m = this.deps.metrics;
        m?.add(m.notifications, integration.kind);
        const started = performance.now();
        const n = { receiver, groupKey: g.key, groupLabels: g.labels, alerts, externalURL: this.deps.externalURL(), templates: this.templates, deadline };
        const ok = await this.send(integration, n, receiver, limit);
        if (!ok) {
          m?.add(m.notificationsFailed, integration.kind);
          return false;
        }
        m?.observeLatency(integration.kind, (performance.now() - started) / 1000);
      }
      sent = { firing: [...firing], resolved: [...resolved], at: this.deps.clock.now() };
      return true;
    } finally {
      await turn.finish(sent);
    }
  }

  /**
   * Attempts with backoff (up to 10 s apart) until one succeeds, one fails for good, or the next
   * flush is due; an attempt still unanswered at `limit` fails.
   */
  private async send(i: Integration, n: Parameters<Integration['send']>[0], receiver: string, limit: number): Promise<boolean> {
    let wait = 100;
    let last: Attempt | undefined;
    const m = this.deps.metrics;
    for (let attempt = 1; !this.stopped; attempt++) {
      m?.add(m.requests, i.kind);
      try {
        last = await beforeLimit(i.send(n), limit);
      } catch (e) {
        last = { ok: false, retry: true, error: (e as Error).message };
      }
      if (last.ok) return true;
      m?.add(m.requestsFailed, i.kind);
      if (!last.retry) break;
      if (Date.now() + wait >= n.deadline) break;
      await new Promise((r) => setTimeout(r, wait).unref());
      wait = Math.min(wait * 2, 10_000);
      if (attempt > 1000) break;
    }
    const name = `${i.kind}[${i.index}]`;
    this.deps.log.error({ receiver, integration: name, err: last?.error }, `alertmanager: notify ${receiver} ${name} failed: ${last?.error ?? 'stopped'}`);
    return false;
  }
}

/** The attempt's outcome, or a failure (not retried) if it has none by `limit` (epoch ms). */
async function beforeLimit(attempt: Promise<Attempt>, limit: number): Promise<Attempt> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<Attempt>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, retry: false, error: 'context deadline exceeded' }), Math.max(0, limit - Date.now()));
    timer.unref();
  });
  try {
    return await Promise.race([attempt, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Firing alerts that the log's last notification carried as resolved, sent after this daemon last
 * received them: the cluster resolved them while this daemon was down or missed the resolving POST.
 */
function resolvedSince(entry: NflogEntry | undefined, all: NotifyAlert[], heard: Map<string, number>): string[] {
  if (!entry || entry.resolved.length === 0) return [];
  const resolved = new Set(entry.resolved);
  const out: string[] = [];
  for (const a of all) if (!a.resolved && resolved.has(a.fingerprint) && (heard.get(a.fingerprint) ?? Infinity) < entry.at && a.startsAt < entry.at) out.push(a.fingerprint);
  return out;
}

/** A stored alert as a notification carries it: a firing alert's end cleared (it has not ended). */
function notifyAlert(a: Alert, resolved: boolean): NotifyAlert {
  return {
    labels: a.labels,
    annotations: a.annotations,
    startsAt: a.startsAt,
    endsAt: resolved ? a.endsAt : GO_ZERO_MS,
    startsAtNs: a.startsAtNs,
    endsAtNs: resolved ? a.endsAtNs : 0,
    startsAtOff: a.startsAtOff,
    endsAtOff: resolved ? a.endsAtOff : undefined,
    generatorURL: a.generatorURL,
    fingerprint: a.fingerprint,
    resolved,
  };
}

