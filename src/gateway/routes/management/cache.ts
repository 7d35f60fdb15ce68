/**
 * Response cache and idempotency management (auth M):
 *   GET|DELETE /api/cache/stats     the seed's stats shape; DELETE empties the cache and its counters
 *   GET|PATCH  /api/cache           settings and stats; PATCH changes settings
 *   GET|DELETE /api/cache/entries   entries (filters `model`, `signature`, `apiKeyId`, `olderThan`);
 *                                   DELETE removes the matching ones (all without a filter)
 *   GET|DELETE /api/cache/reasoning reasoning of tool-calling answers kept for the next turn (filters
 *                                   `toolCallId`, `provider`; DELETE without one empties it)
 */
import type { RequestContext } from '../../../http/context.js';
import { badRequest } from '../../../http/errors.js';
import type { Router } from '../../../http/router.js';
import type { CacheFilter } from '../../cache/response-cache.js';
import type { GatewayServices } from '../../services.js';
import { intQuery, ok } from '../common.js';
import { readSettingsBody } from './resilience.js';

/** The seed's cache statistics: `semanticCache` {memorySize, memoryMaxSize, dbSize, hitRate}, `idempotency` {activeKeys, windowMs}. */
export function cacheStats(svc: GatewayServices): Record<string, unknown> {
  const s = svc.runtime.cache.value;
  const c = svc.cache;
  c.flush(); // batched writes first, so dbSize counts them
  return {
    semanticCache: {
      memorySize: c.memorySize,
      memoryMaxSize: s.memoryMaxSize,
      dbSize: c.dbSize,
      hitRate: Number(c.hitRate.toFixed(4)),
      hits: c.hits,
      misses: c.misses,
      enabled: s.enabled,
      mode: s.mode,
      ttlMs: s.ttlMs,
    },
    idempotency: { activeKeys: svc.idempotency.activeKeys(), windowMs: svc.idempotency.windowMs },
  };
}

/** `olderThan`: epoch ms, an ISO time, or an age such as `30m`, `2h`, `7d`, `90s`. */
function olderThan(v: string, now: number): number {
  const age = /^(\d+)\s*(ms|s|m|h|d)$/.exec(v.trim());
  if (age) {
    const n = Number(age[1]);
    const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[age[2] as 'ms' | 's' | 'm' | 'h' | 'd'];
    return now - n * unit;
  }
  const t = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(t)) throw badRequest('olderThan must be an age (30m, 2h, 7d), an ISO time or epoch milliseconds', { code: 'invalid_request' });
  return t;
}

function filterOf(ctx: RequestContext, body: Record<string, unknown>, now: number): CacheFilter {
  const get = (k: string, ...alts: string[]): string | undefined => {
    for (const name of [k, ...alts]) {
      const q = ctx.query.get(name);
      if (q) return q;
      const b = body[name];
      if (typeof b === 'string' && b) return b;
      if (typeof b === 'number') return String(b);
      if (b !== undefined && b !== null) throw badRequest(`${name} must be a string`, { code: 'invalid_request' });
    }
    return undefined;
  };
  const f: CacheFilter = {};
  const model = get('model');
  const signature = get('signature');
  const ns = get('apiKeyId', 'namespace');
  const older = get('olderThan');
  if (model !== undefined) f.model = model;
  if (signature !== undefined) f.signature = signature;
  if (ns !== undefined) f.namespace = ns;
  if (older !== undefined) f.olderThan = olderThan(older, now);
  return f;
}

export function cacheRoutes(r: Router, svc: GatewayServices): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');

  m(r.get('/api/cache/stats', (ctx) => ok(ctx, cacheStats(svc))));
  m(
    r.delete('/api/cache/stats', async (ctx) => {
      const cleared = svc.cache.clear();
      svc.idempotency.clear();
      await svc.cache.sharedDeleted();
      ok(ctx, { cleared, ...cacheStats(svc) });
    }),
  );

  m(r.get('/api/cache', (ctx) => ok(ctx, { settings: svc.runtime.cache.value, overrides: svc.runtime.cache.overrides, stats: cacheStats(svc) })));
  m(
    r.patch('/api/cache', async (ctx) => {
      const settings = await svc.runtime.cache.save(await readSettingsBody(ctx));
      ok(ctx, { settings, overrides: svc.runtime.cache.overrides, stats: cacheStats(svc) });
    }),
  );

  m(
    r.get('/api/cache/entries', (ctx) => {
      const limit = intQuery(ctx, 'limit', 50, 1, 1000);
      const offset = intQuery(ctx, 'offset', 0, 0, 1_000_000_000);
      const { total, entries } = svc.cache.list(filterOf(ctx, {}, svc.clock.now()), limit, offset);
      ok(ctx, { total, limit, offset, entries });
    }),
  );
  m(
    r.delete('/api/cache/entries', async (ctx) => {
      const body = await readSettingsBody(ctx);
      const deleted = svc.cache.delete(filterOf(ctx, body, svc.clock.now()));
      await svc.cache.sharedDeleted();
      ok(ctx, { deleted });
    }),
  );
  const reasoningFilter = (ctx: RequestContext) => ({
    ...(ctx.query.get('toolCallId') ? { toolCallId: ctx.query.get('toolCallId')! } : {}),
    ...(ctx.query.get('provider') ? { provider: ctx.query.get('provider')! } : {}),
  });
  m(
    r.get('/api/cache/reasoning', (ctx) => {
      const rc = svc.reasoningCache;
      const limit = intQuery(ctx, 'limit', 50, 1, 1000);
      const offset = intQuery(ctx, 'offset', 0, 0, 1_000_000_000);
      const all = rc.list(reasoningFilter(ctx)).reverse(); // newest first
      ok(ctx, {
        total: all.length,
        limit,
        offset,
        entries: all.slice(offset, offset + limit).map((e) => ({
          toolCallId: e.toolCallId,
          provider: e.provider,
          model: e.model,
          reasoningChars: e.reasoning.length,
          reasoningPreview: e.reasoning.slice(0, 200),
          hasSignature: e.signature !== undefined,
          hits: e.hits,
          createdAt: new Date(e.createdAt).toISOString(),
        })),
        stats: { entries: rc.size, bytes: rc.sizeBytes, maxEntries: rc.maxEntries, maxBytes: rc.maxBytes, ttlMs: rc.ttlMs, ...rc.stats },
      });
    }),
  );
  m(r.delete('/api/cache/reasoning', (ctx) => ok(ctx, { deleted: svc.reasoningCache.delete(reasoningFilter(ctx)) })));
}
