/**
 * The alert manager's state and queries: configuration, alerts, silences and inhibition, and
 * the JSON the API answers with. Status (silenced/inhibited) is computed at query time, as
 * Alertmanager 0.25 does, after the cheap label filter has narrowed the alerts.
 */
import type { Clock } from '../http/clock.js';
import { AlertStore, alertBytes, type Alert, type AlertCache, type RouteSet } from './alerts.js';
import { groupLabels, matchRoutes, type RouteNode } from './config/runtime.js';
import type { LoadedConfig } from './config/load.js';
import { Inhibitor } from './inhibit.js';
import { compareAlertOrder, compareLabelSets, fingerprint, isValidLabelName, labelSetsEqual, sortedNames, withoutEmptyValues, type LabelSet } from './labels.js';
import type { Matcher } from './matchers.js';
import type { AnchoredRegex } from './regex.js';
import { SilenceStore, apiSilenceState, type Silence, type SilenceBackend, type SilenceIndex } from './silences.js';
import type { AlertmanagerPersistence } from './persist.js';
import { formatTime, formatTimeIn, goQuote } from './timefmt.js';
import { goJsonLabelSet, goJsonString } from './api/json.js';
import type { PostableAlert } from './api/bodies.js';
import { sortInSteps } from './sort-steps.js';

export interface AlertQuery {
  filter: Matcher[];
  receiver?: AnchoredRegex;
  active: boolean;
  silenced: boolean;
  inhibited: boolean;
}

/** api/v2 matchFilterLabels: an empty value on `=`/`=~` means "label absent", on `!=`/`!~` "present". */
export function matchFilterLabels(matchers: Matcher[], labels: LabelSet): boolean {
  for (const m of matchers) {
    const v = labels[m.name];
    if (m.type === '!=' || m.type === '!~') {
      if (m.value === '' && v !== undefined) continue;
    } else if (m.value === '' && v === undefined) continue;
    if (!m.matches(v ?? '')) return false;
  }
  return true;
}


/**
 * A JSON document as a sequence of pieces, rendered while it is being sent: a response never
 * holds the whole document, and the strings die young.
 */
export type JsonPieces = Iterable<string>;

/** ctl's paging of /alerts/groups (query `ctl_groups`, `ctl_alerts_per_group`); the totals go to `onTotals`. */
export interface GroupsPage {
  groups?: number;
  alertsPerGroup?: number;
  /** Called once the groups are made, before the answer's first piece. */
  onTotals?(totals: { groups: number; alerts: number }): void;
}

/**
 * Yielded by alertsJson and groupsJson every PAUSE_EVERY alerts they look at: no text, a point
 * where the sender gives the event loop back (a filter that keeps few alerts of a full store
 * would otherwise render nothing, and hold the loop, for seconds).
 */
export const PAUSE = '';
const PAUSE_EVERY = 512;

/** Strings per rendered piece: about 200 small alerts (sendAmJsonPieces writes ~64 KiB at a time). */
const PIECE_PARTS = 4096;
/**
 * Characters per rendered piece: a piece is cut at whichever of the two comes first. Counting parts
 * alone let a piece of 200 alerts with large annotations grow to the whole answer (40 MiB for
 * 200 alerts of 200 KiB), held once as parts and once joined by every concurrent GET.
 */
const PIECE_CHARS = 65536;

/**
 * Strings collected in an array and joined into one flat string per piece. Building the text with
 * `+` made a concatenation tree (a 32-byte node per `+`, about three times the text) that was then
 * flattened into a copy when written: a GET of 10,000 alerts allocated ~34 MiB for 4.5 MiB of
 * text. The array has a fixed length and is joined once it has no room for another alert (unused
 * slots hold '', which add nothing), so it is allocated once per answer and never grown or trimmed;
 * it is cleared after each join so that it keeps no string alive.
 */
class PieceBuffer {
  /** Unused slots hold '' (they add nothing to a join). */
  private readonly parts: string[] = new Array<string>(PIECE_PARTS).fill('');
  private n = 0;
  private chars = 0;

  push(s: string): void {
    // Never reached by whole alerts (full() is asked after each, with room for one); kept safe.
    if (this.n === PIECE_PARTS) {
      this.parts[0] = this.take();
      this.chars = this.parts[0].length;
      this.n = 1;
    }
    this.parts[this.n++] = s;
    this.chars += s.length;
  }

  /** The text so far as one string once it is long enough or has no room for another alert, else undefined. */
  full(): string | undefined {
    return this.chars >= PIECE_CHARS || this.n > PIECE_PARTS - 64 ? this.take() : undefined;
  }

  take(): string {
    const text = this.parts.join('');
    this.parts.fill('', 0, this.n);
    this.n = 0;
    this.chars = 0;
    return text;
  }
}

/** Groups of /alerts/groups in 0.25's order: by label set, then receiver name. */
function compareGroups(x: { labels: LabelSet; route: RouteNode }, y: { labels: LabelSet; route: RouteNode }): number {
  if (labelSetsEqual(x.labels, y.labels)) return x.route.receiver < y.route.receiver ? -1 : x.route.receiver > y.route.receiver ? 1 : 0;
  return compareLabelSets(x.labels, y.labels);
}

/** The aggregation group of an alert under a route: route id + fingerprint of its group labels. */
function groupKey(route: RouteNode, labels: LabelSet): string {
  return route.id + '\xff' + fingerprint(groupLabels(route, labels));
}

const NONE: string[] = [];

const ACTIVE_STATUS = '{"inhibitedBy":[],"mutedBy":[],"silencedBy":[],"state":"active"}';

function statusJson(silencedBy: string[], inhibitedBy: string[]): string {
  if (silencedBy.length === 0 && inhibitedBy.length === 0) return ACTIVE_STATUS;
  return '{"inhibitedBy":' + idList(inhibitedBy) + ',"mutedBy":[],"silencedBy":' + idList(silencedBy) + ',"state":"suppressed"}';
}

function idList(ids: string[]): string {
  if (ids.length === 0) return '[]';
  return '[' + ids.map(goJsonString).join(',') + ']';
}

function receiversJson(names: string[]): string {
  return '[' + names.map((n) => '{"name":' + goJsonString(n) + '}').join(',') + ']';
}

/** One gettableAlert in Go field order (generatorURL omitted when empty). */
function pushAlert(out: PieceBuffer, a: Alert, receivers: string, status: string): void {
  out.push('{"annotations":');
  out.push(goJsonLabelSet(a.annotations));
  out.push(',"endsAt":"');
  out.push(a.endsAtOff === undefined ? formatTime(a.endsAt) : formatTimeIn(a.endsAt, a.endsAtOff));
  out.push('","fingerprint":"');
  out.push(a.fingerprint);
  out.push('","receivers":');
  out.push(receivers);
  out.push(',"startsAt":"');
  out.push(a.startsAtOff === undefined ? formatTime(a.startsAt) : formatTimeIn(a.startsAt, a.startsAtOff));
  out.push('","status":');
  out.push(status);
  out.push(',"updatedAt":"');
  out.push(formatTime(a.updatedAt));
  if (a.generatorURL) {
    out.push('","generatorURL":');
    out.push(goJsonString(a.generatorURL));
    out.push(',"labels":');
  } else out.push('","labels":');
  out.push(goJsonLabelSet(a.labels));
  out.push('}');
}

/**
 * Bounds on what POSTed alerts may take (ctl.yaml `alertmanager:`): one alert's text, one request
 * body, and all stored alert text together. Alertmanager has none; one 30 MiB annotation at a time
 * once made a daemon that could not start again.
 */
export interface AlertLimits {
  maxAlertBytes: number;
  maxBatchBytes: number;
  maxStoredBytes: number;
}

export const DEFAULT_ALERT_LIMITS: AlertLimits = { maxAlertBytes: 256 << 10, maxBatchBytes: 16 << 20, maxStoredBytes: 256 << 20 };

export class Engine {
  config: LoadedConfig;
  private configGen = 1;
  readonly alerts: AlertStore;
  readonly silences: SilenceStore;
  private inhibitor: Inhibitor;
  private inhibitorKey = '';
  readonly startedAt: number;

  constructor(
    config: LoadedConfig,
    persist: AlertmanagerPersistence,
    readonly clock: Clock,
    retentionMs?: number,
    readonly limits: AlertLimits = DEFAULT_ALERT_LIMITS,
    /** Where silences live when not in `persist` (the database several daemons share). */
    silenceBackend?: SilenceBackend,
    onSilenceGcError?: (e: unknown) => void,
  ) {
    this.config = config;
    this.alerts = new AlertStore(persist, clock);
    this.silences = new SilenceStore(silenceBackend ?? persist, clock, retentionMs, onSilenceGcError);
    this.inhibitor = new Inhibitor(config.inhibitRules);
    this.startedAt = clock.now();
  }

  setConfig(config: LoadedConfig): void {
    this.config = config;
    this.configGen++;
    this.routeSets = new Map();
    this.groupKeyStrings = new Map();
    this.inhibitor = new Inhibitor(config.inhibitRules);
    this.inhibitorKey = '';
  }

  // ---- ingestion -----------------------------------------------------------------------------

  /**
   * postAlertsHandler: defaults, validation, best-effort store. Returns the validation errors.
   * `body` is the request body `input` was decoded from by the plain path, if it was (the store
   * may journal it as it is; see raw-batch.ts).
   */
  postAlerts(input: PostableAlert[], body?: Buffer): string[] {
    const now = this.clock.now();
    const errors: string[] = [];
    const valid: Alert[] = [];
    const origin: number[] = [];
    // Room left in the store for text this batch adds (a re-post or resolution of a stored alert of
    // the same size adds none, so it always goes through; only growth can be refused).
    let room = this.limits.maxStoredBytes - this.alerts.storedBytes;
    for (let i = 0; i < input.length; i++) {
      const p = input[i]!;
      let startsAt = p.startsAt;
      let endsAt = p.endsAt;
      let startsAtNs = p.startsAtNs ?? 0;
      let endsAtNs = p.endsAtNs ?? 0;
      let startsAtOff = p.startsAtOff;
      let endsAtOff = p.endsAtOff;
      let timeout = false;
      // The times picked here are in Go's Local zone, as 0.25's time.Now() (offset 0: Local on a UTC host).
      if (startsAt === undefined) {
        startsAt = endsAt === undefined ? now : endsAt;
        startsAtNs = endsAtNs;
        startsAtOff = endsAt === undefined ? 0 : endsAtOff;
      }
      if (endsAt === undefined) {
        timeout = true;
        endsAt = now + this.config.resolveTimeoutMs;
        endsAtNs = 0;
        endsAtOff = 0;
      }
      const labels = withoutEmptyValues(p.labels);
      const err = validateAlert(startsAt, endsAt, labels, p.annotations, endsAt === startsAt && endsAtNs < startsAtNs);
      if (err) {
        errors.push(err);
        continue;
      }
      const bytes = alertBytes({ labels, annotations: p.annotations, generatorURL: p.generatorURL });
      if (bytes > this.limits.maxAlertBytes) {
        errors.push(`alert too large: ${bytes} bytes of labels, annotations and generator URL (max-alert-bytes ${this.limits.maxAlertBytes})`);
        continue;
      }
      const fp = fingerprint(labels);
      const stored = this.alerts.get(fp);
      const growth = stored ? bytes - alertBytes(stored) : bytes;
      if (growth > 0 && growth > room) {
        errors.push(`alert store full: ${this.alerts.storedBytes} bytes stored (max-stored-bytes ${this.limits.maxStoredBytes}); alert not stored`);
        continue;
      }
      room -= Math.max(0, growth);
      valid.push({
        fingerprint: fp,
        labels,
        annotations: p.annotations,
        startsAt,
        endsAt,
        startsAtNs,
        endsAtNs,
        startsAtOff,
        endsAtOff,
        updatedAt: now,
        generatorURL: p.generatorURL,
        timeout,
        cache: undefined,
      });
      origin.push(i);
    }
    this.alerts.put(valid, body && { body, updatedAt: now, elements: input.length, origin });
    if (this.onStored && valid.length > 0) {
      // A list built by push has one elements kind whatever tier runs this code; map()'s result is
      // packed from the builtin and holey from TurboFan's inlined copy, and the dispatcher's
      // compiled loop was deoptimised when the second kind arrived.
      const stored: Alert[] = [];
      for (let i = 0; i < valid.length; i++) stored.push(this.alerts.get(valid[i]!.fingerprint)!);
      this.onStored(stored);
    }
    return errors;
  }

  /**
   * Take a resolution another daemon of the cluster notified: each alert still firing here whose
   * last state this daemon received (`updatedAt`) is older than that notification (`at`) ends at
   * `at`. A daemon that was down or missed the resolving POST would otherwise go on sending it as
   * firing. Returns the alerts changed.
   */
  resolveFromCluster(fps: readonly string[], at: number): Alert[] {
    const now = this.clock.now();
    const states: Alert[] = [];
    for (const fp of fps) {
      const a = this.alerts.get(fp);
      // Still firing here, last heard of before the notification, started before it (not a new firing).
      if (!a || a.endsAt <= now || a.updatedAt >= at || a.startsAt >= at || at > now) continue;
      states.push({ ...a, endsAt: at, endsAtNs: 0, endsAtOff: undefined, updatedAt: now, timeout: false, cache: undefined });
    }
    if (states.length === 0) return [];
    this.alerts.put(states);
    const stored = states.map((a) => this.alerts.get(a.fingerprint)!);
    this.onStored?.(stored);
    return stored;
  }

  /** Called with the stored states of alerts after every POST (the dispatcher groups them). */
  onStored?: (alerts: Alert[]) => void;

  /** alertmanager_alerts{state}: alerts not resolved, active or suppressed. */
  alertCounts(): Record<string, number> {
    const now = this.clock.now();
    const out: Record<string, number> = { active: 0, suppressed: 0, unprocessed: 0 };
    for (const a of this.alerts.list()) {
      if (a.endsAt <= now) continue;
      out[this.muted(a, now) ? 'suppressed' : 'active']!++;
    }
    return out;
  }

  /** alertmanager_silences{state}. */
  silenceCounts(): Record<string, number> {
    const now = this.clock.now();
    const out: Record<string, number> = { active: 0, expired: 0, pending: 0 };
    for (const s of this.silences.all()) out[apiSilenceState(s, now)]!++;
    return out;
  }

  /** Silenced or inhibited now (the notification pipeline's mute stage). */
  muted(a: Alert, now: number): boolean {
    if (this.silences.index(now).silencedBy(a.labels).length > 0) return true;
    return this.config.inhibitRules.length > 0 && this.readyInhibitor().inhibitedBy(a.labels, now) !== undefined;
  }

  // ---- per-alert caches ----------------------------------------------------------------------

  private routeSets = new Map<string, RouteSet>();
  /**
   * One string per distinct group key: alerts of one group share it in their caches instead of
   * each keeping a concatenation of its own (groups are few, alerts many).
   */
  private groupKeyStrings = new Map<string, string>();

  private groupKeyOf(route: RouteNode, labels: LabelSet): string {
    const k = groupKey(route, labels);
    const known = this.groupKeyStrings.get(k);
    if (known !== undefined) return known;
    this.groupKeyStrings.set(k, k);
    return k;
  }

  private cacheOf(a: Alert): AlertCache {
    let c = a.cache;
    if (!c || c.configGen !== this.configGen) {
      const routes = matchRoutes(this.config.route, a.labels);
      const key = routes.length === 1 ? routes[0]!.id : routes.map((r) => r.id).join(',');
      let set = this.routeSets.get(key);
      if (!set) {
        const receivers = routes.map((r) => r.receiver);
        const json = receiversJson(receivers);
        const sorted = receiversJson([...receivers].sort());
        set = { routes, receivers, receiversJson: json, sortedReceiversJson: sorted === json ? json : sorted };
        this.routeSets.set(key, set);
      }
      c = a.cache = { configGen: this.configGen, set, groupKeys: undefined };
    }
    return c;
  }

  private readyInhibitor(): Inhibitor {
    const key = `${this.configGen}/${this.alerts.version}`;
    if (key !== this.inhibitorKey) {
      this.inhibitor.rebuild(this.alerts.list());
      this.inhibitorKey = key;
    }
    return this.inhibitor;
  }

  /**
   * alertFilter: hides resolved alerts, computes status, applies the state flags and label
   * filter. Returns the status as JSON (a shared constant for the common active alert).
   */
  private filterAlert(a: Alert, q: AlertQuery, now: number, silences: SilenceIndex, inhibitor: Inhibitor): string | undefined {
    if (a.endsAt < now) return undefined;
    if (!matchFilterLabels(q.filter, a.labels)) return undefined;
    let inhibitedBy: string[] = NONE;
    if (this.config.inhibitRules.length > 0) {
      const fp = inhibitor.inhibitedBy(a.labels, now);
      if (fp !== undefined) inhibitedBy = [fp];
    }
    const silencedBy = silences.silencedBy(a.labels);
    const suppressed = inhibitedBy.length > 0 || silencedBy.length > 0;
    if (!q.active && !suppressed) return undefined;
    if (!q.silenced && silencedBy.length > 0) return undefined;
    if (!q.inhibited && inhibitedBy.length > 0) return undefined;
    return statusJson(silencedBy, inhibitedBy);
  }

  /**
   * GET /api/v2/alerts as JSON (sorted by fingerprint), rendered piece by piece: each alert is
   * filtered and its status computed as it is rendered, so an answer holds no array over the whole
   * store (three per GET once: 60 MB each on a full store of small alerts, times every concurrent
   * GET), and the sender may give the event loop back (PAUSE) every PAUSE_EVERY alerts looked at,
   * whatever the filter keeps. Each alert is rendered with the status of the state it is rendered from (stored
   * alerts are not updated in place while an answer is being rendered: AlertStore.pin).
   */
  alertsJson(q: AlertQuery): JsonPieces {
    const now = this.clock.now();
    const silences = this.silences.index(now);
    const inhibitor = this.config.inhibitRules.length > 0 ? this.readyInhibitor() : this.inhibitor;
    const list = this.alerts.list();
    const store = this.alerts;
    const engine = this;
    return (function* () {
      const release = store.pin();
      try {
        const out = new PieceBuffer();
        out.push('[');
        let first = true;
        for (let i = 0; i < list.length; i++) {
          if (i % PAUSE_EVERY === PAUSE_EVERY - 1) yield PAUSE;
          const a = list[i]!;
          if (a.endsAt < now) continue;
          const c = engine.cacheOf(a);
          if (q.receiver && !c.set.receivers.some((r) => q.receiver!.test(r))) continue;
          const st = engine.filterAlert(a, q, now, silences, inhibitor);
          if (st === undefined) continue;
          if (!first) out.push(',');
          first = false;
          pushAlert(out, a, c.set.receiversJson, st);
          const piece = out.full();
          if (piece !== undefined) yield piece;
        }
        out.push(']\n');
        yield out.take();
      } finally {
        release();
      }
    })();
  }

  /**
   * GET /api/v2/alerts/groups as JSON, rendered piece by piece. The groups are made as the answer
   * starts being sent; the sender may give the event loop back (PAUSE) every PAUSE_EVERY alerts
   * looked at, and every PAUSE_EVERY comparisons or so while the groups, and the alerts of each,
   * are put in order (sortInSteps). With `page` (ctl's paging of the answer, for the web console's first render): only
   * the first `page.groups` groups, each with its first `page.alertsPerGroup` alerts and their
   * number before the cut (`ctlAlertsTotal`); `page.onTotals` is told the groups and alerts of the
   * whole answer before its first piece is rendered.
   */
  groupsJson(q: AlertQuery, page?: GroupsPage): JsonPieces {
    const now = this.clock.now();
    const silences = this.silences.index(now);
    const inhibitor = this.config.inhibitRules.length > 0 ? this.readyInhibitor() : this.inhibitor;
    const list = this.alerts.list();
    const store = this.alerts;
    const engine = this;
    return (function* () {
      const release = store.pin();
      try {
        interface Group {
          route: RouteNode;
          labels: LabelSet;
          alerts: Alert[];
          statuses: string[];
        }
        const groups = new Map<string, Group>();
        /** Receivers of the groups an alert landed in, when not simply all of its routes. */
        const partial = new Map<Alert, string[]>();
        for (let k = 0; k < list.length; k++) {
          if (k % PAUSE_EVERY === PAUSE_EVERY - 1) yield PAUSE;
          const a = list[k]!;
          if (a.endsAt < now) continue;
          const c = engine.cacheOf(a);
          const routes = c.set.routes;
          let st: string | undefined | null = null;
          // One route (the common case) keeps its key as a string, several as an array.
          const keys = (c.groupKeys ??=
            routes.length === 1 ? engine.groupKeyOf(routes[0]!, a.labels) : routes.map((r) => engine.groupKeyOf(r, a.labels)));
          let taken = 0;
          for (let i = 0; i < routes.length; i++) {
            const route = routes[i]!;
            if (q.receiver && !q.receiver.test(route.receiver)) continue;
            if (st === null) st = engine.filterAlert(a, q, now, silences, inhibitor);
            if (!st) break;
            const key = typeof keys === 'string' ? keys : keys[i]!;
            let g = groups.get(key);
            if (!g) groups.set(key, (g = { route, labels: groupLabels(route, a.labels), alerts: [], statuses: [] }));
            g.alerts.push(a);
            g.statuses.push(st);
            taken++;
          }
          if (taken > 0 && taken < routes.length) {
            partial.set(a, routes.filter((r) => !q.receiver || q.receiver.test(r.receiver)).map((r) => r.receiver).sort());
          }
        }
        const receiversFor = (a: Alert): string => {
          const p = partial.get(a);
          return p ? receiversJson(p) : a.cache!.set.sortedReceiversJson;
        };
        // Put in order a bounded number of comparisons at a time (sortInSteps: the order
        // Array.prototype.sort gives): 100,000 groups held the loop 1.8 s in one sort.
        const sorted = yield* sortInSteps([...groups.values()], compareGroups, PAUSE, PAUSE_EVERY);
        if (page?.onTotals) {
          let alerts = 0;
          for (const g of sorted) alerts += g.alerts.length;
          page.onTotals({ groups: sorted.length, alerts });
        }
        const groupCount = page?.groups === undefined ? sorted.length : Math.min(page.groups, sorted.length);
        const perGroup = page?.alertsPerGroup;
        const out = new PieceBuffer();
        out.push('[');
        for (let i = 0; i < groupCount; i++) {
          const g = sorted[i]!;
          const alerts = g.alerts;
          const order = yield* sortInSteps(
            alerts.map((_, j) => j),
            (x, y) => compareAlertOrder(alerts[x]!.labels, alerts[y]!.labels),
            PAUSE,
            PAUSE_EVERY,
          );
          out.push(i > 0 ? ',{"alerts":[' : '{"alerts":[');
          const shown = perGroup === undefined ? order.length : Math.min(perGroup, order.length);
          for (let n = 0; n < shown; n++) {
            const a = g.alerts[order[n]!]!;
            if (n > 0) out.push(',');
            pushAlert(out, a, receiversFor(a), g.statuses[order[n]!]!);
            const piece = out.full();
            if (piece !== undefined) yield piece;
          }
          out.push('],"labels":' + goJsonLabelSet(g.labels) + ',"receiver":{"name":' + goJsonString(g.route.receiver) + (perGroup === undefined ? '}}' : '},"ctlAlertsTotal":' + order.length + '}'));
        }
        out.push(']\n');
        yield out.take();
      } finally {
        release();
      }
    })();
  }

  // ---- silences ------------------------------------------------------------------------------

  /**
   * One gettableSilence. Not cached per silence: the unfiltered list is cached whole (below), and
   * a second copy per silence (a tree of concatenations, several times the size of its text)
   * would cost more memory than rendering a changed list again costs time.
   */
  silenceJson(s: Silence, now: number): string {
    return this.renderSilence(s, apiSilenceState(s, now));
  }

  private renderSilence(s: Silence, state: string): string {
    return (
      '{"id":' + goJsonString(s.id) +
      ',"status":{"state":"' + state + '"}' +
      ',"updatedAt":"' + formatTime(s.updatedAt) + '"' +
      ',"comment":' + goJsonString(s.comment) +
      ',"createdBy":' + goJsonString(s.createdBy) +
      ',"endsAt":"' + formatTime(s.endsAt) + '"' +
      ',"matchers":[' + s.matchers.map((m) => '{"isEqual":' + m.isEqual + ',"isRegex":' + m.isRegex + ',"name":' + goJsonString(m.name) + ',"value":' + goJsonString(m.value) + '}').join(',') + ']' +
      ',"startsAt":"' + formatTime(s.startsAt) + '"}'
    );
  }

  /** GET /api/v2/silences: structural filter, then active (endsAt ↑), pending (startsAt ↑), expired (endsAt ↓). */
  private silenceListCache?: { version: number; validFrom: number; validUntil: number; body: Buffer };

  /**
   * GET /api/v2/silences as JSON bytes. The unfiltered list is cached until a silence changes or
   * one of them changes state (starts or ends).
   */
  silencesJson(filter: Matcher[]): Buffer {
    const now = this.clock.now();
    if (filter.length > 0) return Buffer.from(this.renderSilenceList(filter, now) + '\n');
    const c = this.silenceListCache;
    if (c && c.version === this.silences.version && now >= c.validFrom && now < c.validUntil) return c.body;
    let validUntil = Infinity;
    for (const s of this.silences.all()) {
      if (now < s.startsAt) validUntil = Math.min(validUntil, s.startsAt);
      else if (now < s.endsAt) validUntil = Math.min(validUntil, s.endsAt);
    }
    const body = Buffer.from(this.renderSilenceList(filter, now) + '\n');
    this.silenceListCache = { version: this.silences.version, validFrom: now, validUntil, body };
    return body;
  }

  private renderSilenceList(filter: Matcher[], now: number): string {
    const order = { active: 1, pending: 2, expired: 3 } as const;
    const list = this.silences
      .all()
      .filter((s) =>
        filter.every((f) =>
          s.matchers.some(
            (m) => m.name === f.name && m.value === f.value && m.isRegex === f.isRegex && m.isEqual === f.isEqual,
          ),
        ),
      )
      .map((s) => ({ s, state: apiSilenceState(s, now) }));
    list.sort((x, y) => {
      if (x.state !== y.state) return order[x.state] - order[y.state];
      if (x.state === 'active') return x.s.endsAt - y.s.endsAt;
      if (x.state === 'pending') return x.s.startsAt - y.s.startsAt;
      return y.s.endsAt - x.s.endsAt;
    });
    return '[' + list.map(({ s }) => this.silenceJson(s, now)).join(',') + ']';
  }

  /** Periodic maintenance: drop resolved alerts and silences past retention. */
  gcAlerts(): number {
    const n = this.alerts.gc();
    // Start the shared group keys afresh now and then, so keys of groups gone do not pile up.
    if (n > 0) this.groupKeyStrings = new Map();
    return n;
  }

  gcSilences(): number {
    return this.silences.gc();
  }
}

/** Label names seen valid, so the regex runs once per distinct name (bounded: names are few). */
const validNames = new Set<string>();

function knownValidName(n: string): boolean {
  if (validNames.has(n)) return true;
  if (!isValidLabelName(n)) return false;
  if (validNames.size < 4096) validNames.add(n);
  return true;
}

/** The first invalid name (in Go string order), if any. */
function invalidName(ls: LabelSet): string | undefined {
  for (const n in ls) if (!knownValidName(n)) return sortedNames(ls).find((x) => !isValidLabelName(x));
  return undefined;
}

function isEmpty(ls: LabelSet): boolean {
  for (const _ in ls) return false;
  return true;
}

/** types.Alert.Validate (0.25 messages). */
/** `endsBeforeInMs`: the times share their millisecond and the end's nanoseconds are before the start's. */
function validateAlert(startsAt: number, endsAt: number, labels: LabelSet, annotations: LabelSet, endsBeforeInMs = false): string | undefined {
  if (endsAt < startsAt || endsBeforeInMs) return 'start time must be before end time';
  let bad = invalidName(labels);
  if (bad !== undefined) return `invalid label set: invalid name ${goQuote(bad)}`;
  if (isEmpty(labels)) return 'at least one label pair required';
  bad = invalidName(annotations);
  if (bad !== undefined) return `invalid annotations: invalid name ${goQuote(bad)}`;
  return undefined;
}
