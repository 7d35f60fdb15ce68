/**
 * Usage and request logs:
 *   GET /api/usage/history        aggregates per day or hour (`days`, `period`, `groupBy`)
 *   GET /api/usage/logs           one text line per recent request (`limit`)
 *   GET /api/usage/request-logs   full rows with every attempt (`limit`, `offset`, filters)
 * Readers flush the batched writer first, so every finished request is visible.
 */
import { badRequest } from '../../../http/errors.js';
import type { RequestContext } from '../../../http/context.js';
import type { Router } from '../../../http/router.js';
import { formatCost } from '../../pricing.js';
import type { GatewayServices } from '../../services.js';
import type { LogQuery, RequestLogRow } from '../../store.js';
import { intQuery, iso, ok, timeQuery } from '../common.js';

const DAY = 24 * 3600 * 1000;

function filters(ctx: RequestContext): Omit<LogQuery, 'limit' | 'offset'> {
  const q: Omit<LogQuery, 'limit' | 'offset'> = {};
  const since = timeQuery(ctx, 'since');
  const until = timeQuery(ctx, 'until');
  if (since !== undefined) q.since = since;
  if (until !== undefined) q.until = until;
  for (const [param, field] of [
    ['model', 'model'],
    ['provider', 'provider'],
    ['combo', 'combo'],
    ['apiKeyId', 'apiKeyId'],
    ['api_key_id', 'apiKeyId'],
  ] as const) {
    const v = ctx.query.get(param);
    if (v) q[field] = v;
  }
  const status = ctx.query.get('status');
  if (status) {
    if (status !== 'ok' && status !== 'error') throw badRequest('status must be ok or error');
    q.status = status;
  }
  return q;
}

function rowView(r: RequestLogRow): Record<string, unknown> {
  return { ...r, timestamp: iso(r.ts), cost: Number(r.cost.toFixed(10)) };
}

export function logLine(r: RequestLogRow): string {
  const target = r.provider ? `${r.provider}/${r.model}` : '-';
  return [
    new Date(r.ts).toISOString(),
    r.status,
    r.endpoint,
    r.requestedModel ?? '-',
    '->',
    target,
    `in=${r.tokensIn}`,
    `out=${r.tokensOut}`,
    `$${formatCost(r.cost)}`,
    `${r.latencyMs}ms`,
    r.stream ? 'stream' : '',
    r.fallbackAttempts > 0 ? `fallbacks=${r.fallbackAttempts}` : '',
    r.error ? `error=${JSON.stringify(r.error.slice(0, 200))}` : '',
  ]
    .filter((s) => s !== '')
    .join(' ');
}

export function usageRoutes(r: Router, svc: GatewayServices): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');

  m(
    r.get('/api/usage/history', async (ctx) => {
      svc.usage.flush();
      const days = intQuery(ctx, 'days', 7, 1, 366);
      const period = ctx.query.get('period') ?? 'day';
      if (period !== 'day' && period !== 'hour') throw badRequest('period must be day or hour');
      const groupParam = ctx.query.get('groupBy') ?? ctx.query.get('group_by');
      const groupMap = { provider: 'provider', model: 'model', combo: 'combo', key: 'api_key_id', apiKeyId: 'api_key_id', modality: 'modality' } as const;
      if (groupParam && !(groupParam in groupMap)) throw badRequest('groupBy must be provider, model, combo, key or modality');
      const groupBy = groupParam ? groupMap[groupParam as keyof typeof groupMap] : undefined;
      const since = timeQuery(ctx, 'since') ?? svc.clock.now() - days * DAY;
      const until = timeQuery(ctx, 'until');
      const buckets = await svc.state.db.logs.history({ since, ...(until !== undefined ? { until } : {}), period, ...(groupBy ? { groupBy } : {}) });
      const totals = buckets.reduce(
        (t, b) => ({
          requests: t.requests + b.requests,
          errors: t.errors + b.errors,
          tokensIn: t.tokensIn + b.tokensIn,
          tokensOut: t.tokensOut + b.tokensOut,
          cost: t.cost + b.cost,
        }),
        { requests: 0, errors: 0, tokensIn: 0, tokensOut: 0, cost: 0 },
      );
      ok(ctx, {
        since: iso(since),
        ...(until !== undefined ? { until: iso(until) } : {}),
        period,
        ...(groupParam ? { groupBy: groupParam } : {}),
        totals: { ...totals, cost: Number(totals.cost.toFixed(10)) },
        history: buckets.map((b) => ({ ...b, cost: Number(b.cost.toFixed(10)) })),
      });
    }),
  );

  m(
    r.get('/api/usage/logs', async (ctx) => {
      svc.usage.flush();
      const limit = intQuery(ctx, 'limit', 100, 1, 1000);
      const { rows } = await svc.state.db.logs.requestLogs({ ...filters(ctx), limit, offset: 0 });
      ok(ctx, { logs: rows.map(logLine) });
    }),
  );

  m(
    r.get('/api/usage/request-logs', async (ctx) => {
      svc.usage.flush();
      const limit = intQuery(ctx, 'limit', 50, 1, 1000);
      const offset = intQuery(ctx, 'offset', 0, 0, 1_000_000_000);
      const { total, rows } = await svc.state.db.logs.requestLogs({ ...filters(ctx), limit, offset });
      ok(ctx, { total, limit, offset, items: rows.map(rowView) });
    }),
  );
}
