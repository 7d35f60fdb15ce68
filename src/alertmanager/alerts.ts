/**
 * The alert store: alerts keyed by label fingerprint, merged on re-post exactly as
 * provider/mem + types.Alert.Merge (0.25) do, written through to disk in one transaction per
 * batch, and garbage-collected once resolved. Unlike Alertmanager, alerts survive a restart.
 */
import type { Clock } from '../http/clock.js';
import { labelSetsEqual, type LabelSet } from './labels.js';
import type { AlertmanagerPersistence, StoredAlert } from './persist.js';
import { outcomeFlags } from './raw-batch.js';

export interface Alert extends StoredAlert {
  startsAtNs: number;
  endsAtNs: number;
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
  /** The aggregation group key per matched route (route id + group labels fingerprint); a string for one route. */
  groupKeys: string | string[] | undefined;
}

/** Where a batch of posted alerts came from: the request body and, per alert, its element index. */
export interface PostedBatch {
  body: Buffer;
  updatedAt: number;
  /** Elements in the body. */
  elements: number;
  /** `origin[j]` is the body element alerts[j] was decoded from. */
  origin: number[];
}

/**
 * What an alert's text weighs: its label and annotation names and values and its generator URL
 * (UTF-16 units). Each map is read through the variable its `for in` walks: V8 then loads the
 * values by the enumeration's field index; through `a.labels[k]` every load was a megamorphic
 * keyed lookup (10M of the ~530M instructions of a cold first burst of 10,000 alerts).
 */
export function alertBytes(a: { labels: LabelSet; annotations: LabelSet; generatorURL: string }): number {
  let n = a.generatorURL.length;
  const labels = a.labels;
  for (const k in labels) n += k.length + labels[k]!.length;
  const annotations = a.annotations;
  for (const k in annotations) n += k.length + annotations[k]!.length;
  return n;
}

export function isResolved(a: { endsAt: number }, now: number): boolean {
  return a.endsAt <= now;
}

/** Time x after time y, each as epoch ms and nanoseconds past it (Go's time.Time.After). */
function after(xMs: number, xNs: number, yMs: number, yNs: number): boolean {
  return xMs > yMs || (xMs === yMs && xNs > yNs);
}

/**
 * Every Alert in memory is built here, fields in one order, so all share one hidden class
 * (monomorphic property access on the hot paths, no map transitions when the cache is set).
 */
export function newAlert(s: StoredAlert, startsAt = s.startsAt, endsAt = s.endsAt, startsAtNs = s.startsAtNs ?? 0, endsAtNs = s.endsAtNs ?? 0): Alert {
  return {
    fingerprint: s.fingerprint,
    labels: s.labels,
    annotations: s.annotations,
    startsAt,
    endsAt,
    startsAtNs,
    endsAtNs,
    startsAtOff: s.startsAtOff,
    endsAtOff: s.endsAtOff,
    updatedAt: s.updatedAt,
    generatorURL: s.generatorURL,
    timeout: s.timeout,
    cache: undefined,
  };
}

/** types.Alert.Merge: the younger (by updatedAt) wins, keeping the earliest start and the right end. */
export function mergeAlerts(a: Alert, o: Alert, now: number): Alert {
  if (o.updatedAt < a.updatedAt) return mergeAlerts(o, a, now);
  const earlier = after(o.startsAt, o.startsAtNs, a.startsAt, a.startsAtNs) ? a : o;
  const laterEnd = after(a.endsAt, a.endsAtNs, o.endsAt, o.endsAtNs);
  let end = o;
  if (isResolved(o, now)) {
    if (isResolved(a, now) && laterEnd) end = a;
  } else if (laterEnd && !a.timeout) {
    end = a;
  }
  const m = newAlert(o, earlier.startsAt, end.endsAt, earlier.startsAtNs, end.endsAtNs);
  // Each time keeps the zone it was posted with (UTC, undefined, included).
  m.startsAtOff = earlier.startsAtOff;
  m.endsAtOff = end.endsAtOff;
  return m;
}

/**
 * A re-posted alert (Prometheus re-sends every firing alert each evaluation) keeps the stored
 * alert's fingerprint, labels and annotations objects when they are equal: those are long-lived
 * already, and the freshly decoded copies die young instead of filling the old generation.
 * `a` is a new state owned by the caller.
 */
function shareUnchanged(a: Alert, old: Alert): void {
  if (a.labels !== old.labels && labelSetsEqual(a.labels, old.labels)) {
    a.labels = old.labels;
    a.fingerprint = old.fingerprint;
  }
  if (a.annotations !== old.annotations && labelSetsEqual(a.annotations, old.annotations)) a.annotations = old.annotations;
}

/** How much a new state adds to the stored text (unchanged label and annotation objects cost nothing to compare). */
export function weightChange(old: Alert | undefined, next: Alert): number {
  if (!old) return alertBytes(next);
  if (next.labels === old.labels && next.annotations === old.annotations) return next.generatorURL.length - old.generatorURL.length;
  return alertBytes(next) - alertBytes(old);
}

const byFingerprint = (x: Alert, y: Alert): number => (x.fingerprint < y.fingerprint ? -1 : x.fingerprint > y.fingerprint ? 1 : 0);

export class AlertStore {
  private readonly byFp = new Map<string, Alert>();
  private sorted: Alert[] | null = null;
  /** `sorted` holds the right fingerprints but may hold replaced states. */
  private sortedStale = false;
  /** Fingerprints stored since `sorted` was made (merged in at the next list(), not re-sorted). */
  private addedFps: string[] = [];
  /** Bumped on every change (inhibition indexes key on it). */
  version = 0;
  /** Answers being rendered from stored alerts: while any is, stored alerts are not updated in place. */
  private readers = 0;
  /** alertBytes of every stored alert together (bounded by the engine's max-stored-bytes). */
  storedBytes = 0;

  constructor(
    private readonly persist: AlertmanagerPersistence,
    private readonly clock: Clock,
  ) {
    for (const a of persist.loadAlerts()) {
      this.byFp.set(a.fingerprint, newAlert(a));
      this.storedBytes += alertBytes(a);
    }
  }

  get size(): number {
    return this.byFp.size;
  }

  get(fp: string): Alert | undefined {
    return this.byFp.get(fp);
  }

  /** Every stored alert (resolved ones included), sorted by fingerprint. */
  list(): readonly Alert[] {
    if (!this.sorted) {
      this.sorted = [...this.byFp.values()].sort(byFingerprint);
      this.addedFps = [];
    } else if (this.addedFps.length > 0) {
      // A few new alerts in a large store: sort those and merge them into a new array, O(n)
      // instead of an O(n log n) re-sort of everything (200,000 alerts: 127-220 ms in one turn of
      // the loop). A new array, as answers being rendered keep the one they were given.
      this.sorted = this.mergedWithAdded(this.sorted);
    } else if (this.sortedStale) {
      // Same fingerprints, some replaced by newer states: refresh in place, no re-sort.
      const s = this.sorted;
      for (let i = 0; i < s.length; i++) s[i] = this.byFp.get(s[i]!.fingerprint)!;
    }
    this.sortedStale = false;
    return this.sorted;
  }

  private mergedWithAdded(s: readonly Alert[]): Alert[] {
    const fresh: Alert[] = [];
    for (const fp of this.addedFps) {
      const a = this.byFp.get(fp);
      if (a) fresh.push(a);
    }
    this.addedFps = [];
    fresh.sort(byFingerprint);
    const stale = this.sortedStale;
    const out: Alert[] = new Array(s.length + fresh.length);
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < s.length || j < fresh.length) {
      if (j >= fresh.length || (i < s.length && s[i]!.fingerprint < fresh[j]!.fingerprint)) {
        const a = s[i++]!;
        out[k++] = stale ? this.byFp.get(a.fingerprint)! : a;
      } else out[k++] = fresh[j++]!;
    }
    return out;
  }

  /**
   * mem.Alerts.Put: an alert overlapping the stored one's activity interval is merged into it,
   * otherwise it replaces it. One transaction for the whole batch.
   */
  put(alerts: Alert[], source?: PostedBatch): void {
    if (alerts.length === 0) return;
    const now = this.clock.now();
    // New states go into the map at once (a later duplicate in the batch merges into an earlier
    // one); `previous` undoes them if the write fails, so memory never runs ahead of the disk.
    const states: Alert[] = new Array(alerts.length);
    const previous: (Alert | undefined)[] = new Array(alerts.length);
    let added = false;
    // The outcome of each body element, for journaling the body as it is (raw-batch.ts); not
    // possible when a merge keeps the stored alert as the base (it is younger: the clock went back).
    let outcome = source ? new Float64Array(source.elements * 3).fill(NaN) : undefined;
    for (let j = 0; j < alerts.length; j++) {
      let a = alerts[j]!;
      const old = this.byFp.get(a.fingerprint);
      previous[j] = old;
      if (old) {
        const overlaps =
          (after(a.endsAt, a.endsAtNs, old.startsAt, old.startsAtNs) && after(old.endsAt, old.endsAtNs, a.endsAt, a.endsAtNs)) ||
          (after(a.startsAt, a.startsAtNs, old.startsAt, old.startsAtNs) && after(old.endsAt, old.endsAtNs, a.startsAt, a.startsAtNs));
        if (overlaps) {
          if (a.updatedAt < old.updatedAt) outcome = undefined;
          a = mergeAlerts(old, a, now);
        }
        shareUnchanged(a, old);
      } else added = true;
      states[j] = a;
      this.byFp.set(a.fingerprint, a);
      // The raw journal has room for the Local zone (offset 0) only: a state with another offset is journaled as JSON.
      if (outcome && ((a.startsAtOff ?? 0) !== 0 || (a.endsAtOff ?? 0) !== 0)) outcome = undefined;
      if (outcome) {
        const k = 3 * source!.origin[j]!;
        outcome[k] = a.startsAt;
        outcome[k + 1] = a.endsAt;
        outcome[k + 2] = outcomeFlags(a.timeout, a.startsAtNs, a.endsAtNs, a.startsAtOff === 0, a.endsAtOff === 0);
      }
    }
    try {
      // In batch order: a fingerprint written twice ends with its last state, as on replay.
      this.persist.write({ alerts: states, previous, raw: outcome && { body: source!.body, updatedAt: source!.updatedAt, outcome } });
      for (let j = 0; j < states.length; j++) this.storedBytes += weightChange(previous[j], states[j]!);
    } catch (e) {
      for (let j = alerts.length - 1; j >= 0; j--) {
        const old = previous[j];
        if (old) this.byFp.set(old.fingerprint, old);
        else this.byFp.delete(states[j]!.fingerprint);
      }
      throw e;
    }
    // Written: a new state of an alert whose labels did not change is copied into the stored
    // object, which stays (with its route cache). Prometheus re-posts every firing alert each
    // evaluation, and replacing them would turn the whole set into old-generation garbage each
    // time. Not while an answer is being rendered from the stored objects (it must not see a
    // later state than its statuses were computed for).
    let replaced = false;
    const inPlace = this.readers === 0;
    for (let j = 0; j < states.length; j++) {
      const old = previous[j];
      if (!old) continue;
      const a = states[j]!;
      if (inPlace && a.labels === old.labels && this.byFp.get(a.fingerprint) === a) {
        old.annotations = a.annotations;
        old.startsAt = a.startsAt;
        old.endsAt = a.endsAt;
        old.startsAtNs = a.startsAtNs;
        old.endsAtNs = a.endsAtNs;
        old.startsAtOff = a.startsAtOff;
        old.endsAtOff = a.endsAtOff;
        old.updatedAt = a.updatedAt;
        old.generatorURL = a.generatorURL;
        old.timeout = a.timeout;
        this.byFp.set(a.fingerprint, old);
      } else replaced = true;
    }
    if (added && this.sorted) {
      for (let j = 0; j < states.length; j++) if (!previous[j]) this.addedFps.push(states[j]!.fingerprint);
    }
    if (replaced) this.sortedStale = true;
    this.version++;
  }

  /**
   * Take states decided elsewhere (the database several daemons share, shared/alerts.ts) as they
   * are: no merge and nothing written; `gone` fingerprints are dropped. New objects replace the
   * stored ones, so an answer being rendered keeps what it pinned.
   */
  replace(states: readonly Alert[], gone: readonly string[] = []): void {
    if (states.length === 0 && gone.length === 0) return;
    let reshaped = false;
    for (const a of states) {
      const old = this.byFp.get(a.fingerprint);
      if (!old && this.sorted) this.addedFps.push(a.fingerprint);
      this.storedBytes += weightChange(old, a);
      this.byFp.set(a.fingerprint, a);
    }
    for (const fp of gone) {
      const old = this.byFp.get(fp);
      if (!old) continue;
      this.storedBytes -= alertBytes(old);
      this.byFp.delete(fp);
      reshaped = true;
    }
    // Gone ones need a rebuild; new ones are merged in at the next list().
    if (reshaped) this.sorted = null;
    this.sortedStale = true;
    this.version++;
  }

  /**
   * Keep stored alert objects unchanged until the returned function is called (an answer is
   * being rendered from them); updates replace them meanwhile.
   */
  pin(): () => void {
    this.readers++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.readers--;
    };
  }

  /** Drop resolved alerts (Alertmanager's alert GC). Returns how many. */
  gc(): number {
    const now = this.clock.now();
    const gone: string[] = [];
    for (const [fp, a] of this.byFp) if (isResolved(a, now)) gone.push(fp);
    if (gone.length === 0) return 0;
    this.persist.write({ deleteAlerts: gone });
    for (const fp of gone) {
      this.storedBytes -= alertBytes(this.byFp.get(fp)!);
      this.byFp.delete(fp);
    }
    this.sorted = null;
    this.version++;
    return gone.length;
  }
}
