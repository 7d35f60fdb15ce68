/**
 * Usage and request logs:
 *   GET /api/usage/history        aggregates per day or hour (`days`, `period`, `groupBy`)
 *   GET /api/usage/logs           one text line per recent request (`limit`)
 *   GET /api/usage/request-logs   full rows with every attempt (`limit`, `offset`, filters)
 *   GET /api/usage/request-logs/stream
 *                                 the same rows live (Server-Sent Events, one `log` event per finished
 *                                 request, the same filters); the dashboard's request log follows it
 * Readers flush the batched writer first, so every finished request is visible.
 */
import { badRequest } from '../../../http/errors.js';
import type { RequestContext } from '../../../http/context.js';
import type { Router } from '../../../http/router.js';
import { formatCost } from '../../pricing.js';
import type { GatewayServices } from '../../services.js';
import { HttpError } from '../../../http/errors.js';
import { openSse } from '../../../http/sse.js';
import { LOG_COLUMNS, pushLogValues, toLogRow, type LogQuery, type RequestLogEntry, type RequestLogRow } from '../../request-log/store.js';
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

/** Live request-log readers per daemon at most (each holds a connection open); more get 503. */
export const MAX_LOG_STREAMS = 64;
/** A comment line this often keeps proxies from closing an idle stream. */
const HEARTBEAT_MS = 15_000;

const COLUMNS = LOG_COLUMNS.split(',').map((c) => c.trim());

/** A just-recorded entry as GET /api/usage/request-logs will answer it (through the same row mapping). */
function liveRow(e: RequestLogEntry, id: string): RequestLogRow {
  const values: unknown[] = [];
  pushLogValues(e, values);
  const record: Record<string, unknown> = { id };
  COLUMNS.forEach((c, i) => (record[c] = values[i]));
  return toLogRow(record);
}

function matches(q: Omit<LogQuery, 'limit' | 'offset'>, e: RequestLogEntry): boolean {
  if (q.since !== undefined && e.ts < q.since) return false;
  if (q.until !== undefined && e.ts >= q.until) return false;
  if (q.model !== undefined && e.model !== q.model && e.requestedModel !== q.model) return false;
  if (q.provider !== undefined && e.provider !== q.provider) return false;
  if (q.combo !== undefined && e.combo !== q.combo) return false;
  if (q.apiKeyId !== undefined && e.apiKeyId !== q.apiKeyId) return false;
  if (q.status === 'ok' && e.status >= 400) return false;
  if (q.status === 'error' && e.status < 400) return false;
  return true;
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
          cacheHits: t.cacheHits + b.cacheHits,
          costSaved: t.costSaved + b.costSaved,
        }),
        { requests: 0, errors: 0, tokensIn: 0, tokensOut: 0, cost: 0, cacheHits: 0, costSaved: 0 },
      );
      ok(ctx, {
        since: iso(since),
        ...(until !== undefined ? { until: iso(until) } : {}),
        period,
        ...(groupParam ? { groupBy: groupParam } : {}),
        totals: { ...totals, cost: Number(totals.cost.toFixed(10)), costSaved: Number(totals.costSaved.toFixed(10)) },
        history: buckets.map((b) => ({ ...b, cost: Number(b.cost.toFixed(10)), costSaved: Number(b.costSaved.toFixed(10)) })),
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
    r.get('/api/usage/request-logs/stream', (ctx) => {
      const q = filters(ctx);
      if (svc.usage.subscribers >= MAX_LOG_STREAMS) throw new HttpError(503, `too many live request-log readers (${MAX_LOG_STREAMS}); close one`, { code: 'too_many_streams', headers: { 'Retry-After': '5' } });
      let seq = 0;
      // A reader whose socket is backed up misses rows (it can reload the list) rather than queueing them.
      let stop: () => unknown = () => undefined;
      const stream = openSse(ctx, { keepAliveMs: HEARTBEAT_MS, retryMs: 3000, onClose: () => stop() });
      stop = svc.usage.subscribe((e) => {
        if (matches(q, e)) stream.send('log', rowView(liveRow(e, `live-${++seq}`)));
      });
      if (stream.closed) stop();
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
