import type { RateLimitDecl, Route } from '../http/router.js';
import type { RouteOverride } from './config.js';
import { normalizePattern, routeKeyPrefix } from './key.js';

export type LimitSource = 'code' | 'file' | 'off';

/** The limit in force on one route of one server. */
export interface Policy {
  server: string;
  method: string;
  pattern: string;
  limit: number;
  /** Seconds, as declared. */
  interval: number;
  windowMs: number;
  /** Every part of the counter key but the client bucket. */
  keyPrefix: string;
  source: 'code' | 'file';
}

/** The decision for a route: a policy, or why there is none. */
export interface Effective {
  policy: Policy | null;
  source: LimitSource | null;
  /** The operator entry that applied, if any. */
  override: RouteOverride | null;
}

/** The operator entry for this route: an entry naming the method beats one that names none. */
export function findOverride(overrides: readonly RouteOverride[], server: string, method: string, pattern: string): RouteOverride | null {
  const p = normalizePattern(pattern);
  let any: RouteOverride | null = null;
  for (const o of overrides) {
    if (o.server !== server || o.route !== p) continue;
    if (o.method === method) return o;
    if (o.method === null) any = o;
  }
  return any;
}

/** Merge the code declaration with the operator's file: the file adds, changes or (limit 0) switches off. */
export function effectiveLimit(
  server: string,
  route: Route,
  declared: RateLimitDecl | undefined,
  overrides: readonly RouteOverride[],
  storePrefix: string,
): Effective {
  const override = findOverride(overrides, server, route.method, route.pattern);
  let limit: number;
  let interval: number;
  let source: 'code' | 'file';
  if (override) {
    if (override.limit === 0) return { policy: null, source: 'off', override };
    limit = override.limit;
    interval = override.interval ?? declared?.interval ?? 0;
    source = 'file';
  } else if (declared) {
    limit = declared.limit;
    interval = declared.interval;
    source = 'code';
  } else {
    return { policy: null, source: null, override: null };
  }
  return {
    policy: {
      server,
      method: route.method,
      pattern: route.pattern,
      limit,
      interval,
      windowMs: Math.max(1, Math.round(interval * 1000)),
      keyPrefix: routeKeyPrefix(storePrefix, server, route.method, route.pattern),
      source,
    },
    source,
    override,
  };
}
