/**
 * Analytics over the request log (auth M):
 *   GET /api/usage/model-latency-stats  `windowHours` (24), `minSamples` (1), `maxRows` (10000), `provider`, `model`
 *   GET /api/usage/cache-health         `range` 1h|24h|7d|30d (24h), `model`: prompt-cache health and verdict
 *   GET /api/telemetry/summary          `windowHours` (24): per provider {p50, p95, p99, count}
 *   GET /api/analytics/auto-routing     `days` (1): strategy and price-tier breakdown, top providers
 *   GET /api/analytics/diversity        `days` (1): Shannon entropy of the provider shares
 * Readers flush the batched request-log writer first.
 */
import { badRequest } from '../../../http/errors.js';
import type { RequestContext } from '../../../http/context.js';
import type { Router } from '../../../http/router.js';
import { autoRouting, cacheHealth, diversity, latencyStats, providerLatency } from '../../analytics/summaries.js';
import type { GatewayServices } from '../../services.js';
import { intQuery, ok } from '../common.js';

const HOUR = 3_600_000;
const RANGES: Record<string, number> = { '1h': HOUR, '24h': 24 * HOUR, '7d': 7 * 24 * HOUR, '30d': 30 * 24 * HOUR };

function numQuery(ctx: RequestContext, name: string, def: number, min: number, max: number): number {
  const v = ctx.query.get(name);
  if (v === null || v === '') return def;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min || n > max) throw badRequest(`query parameter ${name} must be a number between ${min} and ${max}`, { code: 'invalid_request' });
  return n;
}

function windowName(days: number): string {
  return days === 1 ? '24h' : `${days}d`;
}

export function analyticsRoutes(r: Router, svc: GatewayServices): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');
  const db = svc.state.db.logs;

  m(
    r.get('/api/usage/model-latency-stats', async (ctx) => {
      svc.usage.flush();
      const windowHours = numQuery(ctx, 'windowHours', 24, 0.01, 24 * 30);
      const minSamples = intQuery(ctx, 'minSamples', 1, 1, 10_000);
      const maxRows = intQuery(ctx, 'maxRows', 10_000, 1, 100_000);
      const provider = ctx.query.get('provider') || undefined;
      const model = ctx.query.get('model') || undefined;
      const rows = await db.latencyRows({ since: svc.clock.now() - windowHours * HOUR, maxRows, ...(provider ? { provider } : {}), ...(model ? { model } : {}) });
      const entries = latencyStats(rows, minSamples);
      ok(ctx, { windowHours, minSamples, maxRows, truncated: rows.length >= maxRows, count: entries.length, entries });
    }),
  );

  m(
    r.get('/api/usage/cache-health', async (ctx) => {
      svc.usage.flush();
      const range = ctx.query.get('range') || '24h';
      const span = RANGES[range];
      if (span === undefined) throw badRequest('range must be one of 1h, 24h, 7d, 30d', { code: 'invalid_request' });
      const model = ctx.query.get('model') || undefined;
      const since = svc.clock.now() - span;
      const maxRows = 5000;
      const rows = await db.cacheRows({ since, maxRows: maxRows + 1, ...(model ? { model } : {}) });
      ok(ctx, {
        range,
        since: new Date(since).toISOString(),
        ...(model ? { model } : {}),
        truncated: rows.length > maxRows,
        ...cacheHealth(rows.slice(0, maxRows)),
      });
    }),
  );

  m(
    r.get('/api/telemetry/summary', async (ctx) => {
      svc.usage.flush();
      const windowHours = numQuery(ctx, 'windowHours', 24, 0.01, 24 * 30);
      const rows = await db.latencyRows({ since: svc.clock.now() - windowHours * HOUR, maxRows: 50_000 });
      ok(ctx, { windowHours, providers: providerLatency(rows) });
    }),
  );

  m(
    r.get('/api/analytics/auto-routing', async (ctx) => {
      svc.usage.flush();
      const days = intQuery(ctx, 'days', 1, 1, 366);
      const rows = await db.routingRows(svc.clock.now() - days * 24 * HOUR, 100_000);
      ok(ctx, autoRouting(rows, svc.state.catalog.pricing, windowName(days)));
    }),
  );

  m(
    r.get('/api/analytics/diversity', async (ctx) => {
      svc.usage.flush();
      const days = intQuery(ctx, 'days', 1, 1, 366);
      const enabled = [...svc.state.catalog.providers.values()].filter((p) => p.config.enabled).length;
      ok(ctx, diversity(await db.providerCounts(svc.clock.now() - days * 24 * HOUR), enabled, windowName(days)));
    }),
  );
}
