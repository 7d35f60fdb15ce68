/**
 * The alert store: alerts keyed by label fingerprint, merged on re-post exactly as
 * provider/mem + types.Alert.Merge (0.25) do, written through to disk in one transaction per
 * batch, and garbage-collected once resolved. Unlike Alertmanager, alerts survive a restart.
 */
import type { Clock } from '../http/clock.js';
import type { LabelSet } from './labels.js';
import type { AlertmanagerPersistence, StoredAlert } from './persist.js';

export interface Alert extends StoredAlert {
  /** Per-configuration caches (route matches, JSON fragments); rebuilt when stale. */
  cache?: AlertCache;
}

/** Route matches shared by every alert that matched the same route nodes. */
export interface RouteSet {
  routes: import('./config/runtime.js').RouteNode[];
  receivers: string[];
  /** `[{"name":...}]` in route order (/alerts) and sorted (groups). */
  receiversJson: string;
  sortedReceiversJson: string;
}

export interface AlertCache {
  configGen: number;
  set: RouteSet;
  /** Per matched route: the aggregation group key (route id + group labels fingerprint). */
  groupKeys?: string[];
  /** Recent renderings (at most two), with the receivers and status they show. */
  rendered: { receivers: string; inh: string; sil: string; json: Buffer }[];
}

export function isResolved(a: { endsAt: number }, now: number): boolean {
  return a.endsAt <= now;
}

/** types.Alert.Merge: the younger (by updatedAt) wins, keeping the earliest start and the right end. */
export function mergeAlerts(a: Alert, o: Alert, now: number): Alert {
  if (o.updatedAt < a.updatedAt) return mergeAlerts(o, a, now);
  const res: Alert = { ...o, cache: undefined };
  if (a.startsAt < o.startsAt) res.startsAt = a.startsAt;
  if (isResolved(o, now)) {
    if (isResolved(a, now) && a.endsAt > o.endsAt) res.endsAt = a.endsAt;
  } else if (a.endsAt > o.endsAt && !a.timeout) {
    res.endsAt = a.endsAt;
  }
  return res;
}

export class AlertStore {
  private readonly byFp = new Map<string, Alert>();
  private sorted: Alert[] | null = null;
  /** Bumped on every change (inhibition indexes key on it). */
  version = 0;

  constructor(
    private readonly persist: AlertmanagerPersistence,
    private readonly clock: Clock,
  ) {
    for (const a of persist.loadAlerts()) this.byFp.set(a.fingerprint, a);
  }

  get size(): number {
    return this.byFp.size;
  }

  get(fp: string): Alert | undefined {
    return this.byFp.get(fp);
  }

  /** Every stored alert (resolved ones included), sorted by fingerprint. */
  list(): readonly Alert[] {
    if (!this.sorted) this.sorted = [...this.byFp.values()].sort((x, y) => (x.fingerprint < y.fingerprint ? -1 : x.fingerprint > y.fingerprint ? 1 : 0));
    return this.sorted;
  }

  /**
   * mem.Alerts.Put: an alert overlapping the stored one's activity interval is merged into it,
   * otherwise it replaces it. One transaction for the whole batch.
   */
  put(alerts: Alert[]): void {
    if (alerts.length === 0) return;
    const now = this.clock.now();
    const next = new Map<string, Alert>();
    for (let a of alerts) {
      const old = next.get(a.fingerprint) ?? this.byFp.get(a.fingerprint);
      if (old) {
        const overlaps =
          (a.endsAt > old.startsAt && a.endsAt < old.endsAt) || (a.startsAt > old.startsAt && a.startsAt < old.endsAt);
        if (overlaps) a = mergeAlerts(old, a, now);
      }
      next.set(a.fingerprint, a);
    }
    const batch = [...next.values()];
    this.persist.write({ alerts: batch });
    let added = false;
    for (const a of batch) {
      if (!this.byFp.has(a.fingerprint)) added = true;
      this.byFp.set(a.fingerprint, a);
    }
    if (added) this.sorted = null;
    else if (this.sorted) this.sorted = this.sorted.map((a) => next.get(a.fingerprint) ?? a);
    this.version++;
  }

  /** Drop resolved alerts (Alertmanager's alert GC). Returns how many. */
  gc(): number {
    const now = this.clock.now();
    const gone: string[] = [];
    for (const [fp, a] of this.byFp) if (isResolved(a, now)) gone.push(fp);
    if (gone.length === 0) return 0;
    this.persist.write({ deleteAlerts: gone });
    for (const fp of gone) this.byFp.delete(fp);
    this.sorted = null;
    this.version++;
    return gone.length;
  }
}
