/** The parts of a loaded configuration the API evaluates: route tree, inhibit rules, time intervals. */
import type { Obj } from './decode.js';
import { Matcher, compareMatchers, matchesAll } from '../matchers.js';
import type { LabelSet } from '../labels.js';
import type { TimeRangeValue } from './schema.js';

export interface RouteNode {
  /** Position in the tree, e.g. `0.2.1`; unique per node (siblings may share matchers). */
  id: string;
  receiver: string;
  /** Effective group_by labels (sorted); ignored when groupByAll. */
  groupBy: string[];
  groupByAll: boolean;
  matchers: Matcher[];
  continue: boolean;
  routes: RouteNode[];
  muteTimeIntervals: string[];
  activeTimeIntervals: string[];
  groupWaitMs: number;
  groupIntervalMs: number;
  repeatIntervalMs: number;
}

export interface InhibitRuleRuntime {
  source: Matcher[];
  target: Matcher[];
  equal: string[];
}

export interface TimeIntervalRuntime {
  times?: TimeRangeValue[];
  weekdays?: { begin: number; end: number }[];
  daysOfMonth?: { begin: number; end: number }[];
  months?: { begin: number; end: number }[];
  years?: { begin: number; end: number }[];
  location?: string;
}

export interface RuntimeConfig {
  resolveTimeoutMs: number;
  route: RouteNode;
  /** Receiver names in configuration order. */
  receivers: string[];
  inhibitRules: InhibitRuleRuntime[];
  timeIntervals: Map<string, TimeIntervalRuntime[]>;
}

const DEFAULT_ROUTE_OPTS = { groupWaitMs: 30_000, groupIntervalMs: 300_000, repeatIntervalMs: 4 * 3_600_000 };

function equalityAndRegex(match: Record<string, string> | undefined, matchRe: Record<string, { source: string } | undefined> | undefined, more: Matcher[]): Matcher[] {
  const out: Matcher[] = [];
  for (const [k, v] of Object.entries(match ?? {})) out.push(new Matcher('=', k, v));
  // Alertmanager passes the compiled regexp's String() (`^(?:re)$`) to NewMatcher; same language.
  for (const [k, v] of Object.entries(matchRe ?? {})) out.push(new Matcher('=~', k, `^(?:${v!.source})$`));
  out.push(...more);
  return out.sort(compareMatchers);
}

function buildRoute(cr: Obj, parent: RouteNode | undefined, id: string): RouteNode {
  const node: RouteNode = {
    id,
    receiver: cr.receiver || parent?.receiver || '',
    groupBy: parent ? parent.groupBy : [],
    groupByAll: parent ? parent.groupByAll : false,
    matchers: equalityAndRegex(cr.match, cr.match_re, cr.matchers),
    continue: !!cr.continue,
    routes: [],
    muteTimeIntervals: cr.mute_time_intervals ?? [],
    activeTimeIntervals: cr.active_time_intervals ?? [],
    groupWaitMs: cr.group_wait ?? parent?.groupWaitMs ?? DEFAULT_ROUTE_OPTS.groupWaitMs,
    groupIntervalMs: cr.group_interval ?? parent?.groupIntervalMs ?? DEFAULT_ROUTE_OPTS.groupIntervalMs,
    repeatIntervalMs: cr.repeat_interval ?? parent?.repeatIntervalMs ?? DEFAULT_ROUTE_OPTS.repeatIntervalMs,
  };
  const names = (cr.group_by as string[]).filter((l) => l !== '...');
  if (names.length > 0) {
    node.groupBy = [...names].sort();
    node.groupByAll = false;
  } else if ((cr.group_by as string[]).includes('...')) {
    node.groupByAll = true;
  }
  node.routes = (cr.routes as Obj[]).map((sub, i) => buildRoute(sub, node, `${id}.${i}`));
  return node;
}

/**
 * dispatch.Route.Match: depth-first, children in order; a matching child without `continue`
 * stops its siblings; a node none of whose children match is itself the match. Not de-duplicated.
 */
export function matchRoutes(r: RouteNode, labels: LabelSet): RouteNode[] {
  const out: RouteNode[] = [];
  collectRoutes(r, labels, out);
  return out;
}

/** matchRoutes into one list (no list per node): appends the matches under `r`, returns how many. */
function collectRoutes(r: RouteNode, labels: LabelSet, out: RouteNode[]): number {
  if (!matchesAll(r.matchers, labels)) return 0;
  const start = out.length;
  for (const child of r.routes) {
    if (collectRoutes(child, labels, out) > 0 && !child.continue) break;
  }
  if (out.length === start) out.push(r);
  return out.length - start;
}

/** The group labels an alert gets on a route: its labels restricted to group_by (or all). */
export function groupLabels(r: RouteNode, labels: LabelSet): LabelSet {
  if (r.groupByAll) return { ...labels };
  const out: LabelSet = {};
  for (const n of r.groupBy) if (labels[n] !== undefined) out[n] = labels[n]!;
  return out;
}

export function buildRuntime(c: Obj): RuntimeConfig {
  const timeIntervals = new Map<string, TimeIntervalRuntime[]>();
  for (const ti of [...(c.mute_time_intervals as Obj[]), ...(c.time_intervals as Obj[])]) {
    timeIntervals.set(
      ti.name,
      (ti.time_intervals as Obj[]).map((x) => ({
        times: x.times?.length ? x.times : undefined,
        weekdays: x.weekdays?.length ? x.weekdays : undefined,
        daysOfMonth: x.days_of_month?.length ? x.days_of_month : undefined,
        months: x.months?.length ? x.months : undefined,
        years: x.years?.length ? x.years : undefined,
        location: x.location,
      })),
    );
  }
  return {
    resolveTimeoutMs: c.global.resolve_timeout,
    route: buildRoute(c.route, undefined, '0'),
    receivers: (c.receivers as Obj[]).map((r) => r.name),
    inhibitRules: (c.inhibit_rules as Obj[]).map((r) => ({
      source: equalityAndRegex(r.source_match, r.source_match_re, r.source_matchers),
      target: equalityAndRegex(r.target_match, r.target_match_re, r.target_matchers),
      equal: [...new Set(r.equal as string[])],
    })),
    timeIntervals,
  };
}
