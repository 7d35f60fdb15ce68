/**
 * Budgets and token limits (auth M):
 *   GET    /api/usage/budget[?apiKeyId]    budgets with their windows' spend
 *   POST   /api/usage/budget               set one (setBudgetSchema; the legacy {keyId, limit, period} → 400)
 *   DELETE /api/usage/budget?apiKeyId=     remove one
 *   GET    /api/usage/token-limits[?apiKeyId]  limits with tokensUsed, remaining, windowStart, periodStartAt, nextResetAt
 *   POST   /api/usage/token-limits         create (no id, 201) or update (id) (setTokenLimitSchema)
 *   DELETE /api/usage/token-limits?id=     remove one
 */
import { readJson } from '../../../http/body.js';
import type { RequestContext } from '../../../http/context.js';
import { badRequest, HttpError, notFound } from '../../../http/errors.js';
import type { Router } from '../../../http/router.js';
import { camelizeKeys } from '../../case.js';
import { DEFAULT_WARNING_THRESHOLD, validateSetBudget } from '../../limits/budgets.js';
import type { BudgetConfig } from '../../limits/store.js';
import { validateSetTokenLimit } from '../../limits/token-limits.js';
import type { GatewayServices } from '../../services.js';
import { MANAGEMENT_BODY_LIMIT, ok, validated } from '../common.js';

function knownKey(svc: GatewayServices, id: string): void {
  if (!svc.state.catalog.keysById.has(id)) throw notFound(`API key ${id} not found`);
}

async function body(ctx: RequestContext): Promise<Record<string, unknown>> {
  const b = await readJson(ctx, { limit: MANAGEMENT_BODY_LIMIT });
  if (b === undefined) throw badRequest('request body is empty; send a JSON object', { code: 'invalid_request' });
  if (b === null || typeof b !== 'object' || Array.isArray(b)) throw badRequest('request body must be a JSON object', { code: 'invalid_request' });
  return camelizeKeys(b) as Record<string, unknown>;
}

export function limitRoutes(r: Router, svc: GatewayServices): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');

  m(
    r.get('/api/usage/budget', async (ctx) => {
      const now = svc.clock.now();
      const id = ctx.query.get('apiKeyId') ?? ctx.query.get('api_key_id');
      if (id) {
        const b = svc.budgets.get(id);
        if (!b) throw new HttpError(404, `no budget for API key ${id}`, { code: 'not_found' });
        await svc.budgets.refresh(id, now);
        return ok(ctx, svc.budgets.view(b, now));
      }
      const list = svc.budgets.list();
      // With shared windows the spend is the cluster's, read from Redis.
      if (svc.budgets.shared) await Promise.all(list.map((b) => svc.budgets.refresh(b.apiKeyId, now)));
      ok(ctx, { budgets: list.map((b) => svc.budgets.view(b, now)) });
    }),
  );

  m(
    r.post('/api/usage/budget', async (ctx) => {
      const raw = await body(ctx);
      if ('keyId' in raw || 'limit' in raw || 'period' in raw) {
        throw badRequest(
          'the legacy budget shape {keyId, limit, period} is not supported; send {apiKeyId, hourlyLimitUsd?, dailyLimitUsd?, weeklyLimitUsd?, monthlyLimitUsd?, warningThreshold?, resetInterval?, resetTime?}',
          { code: 'invalid_request' },
        );
      }
      const b = validated(validateSetBudget, raw);
      if (!((b.hourlyLimitUsd ?? 0) > 0 || (b.dailyLimitUsd ?? 0) > 0 || (b.weeklyLimitUsd ?? 0) > 0 || (b.monthlyLimitUsd ?? 0) > 0)) {
        throw badRequest('at least one of hourlyLimitUsd, dailyLimitUsd, weeklyLimitUsd, monthlyLimitUsd must be greater than 0', { code: 'invalid_request' });
      }
      knownKey(svc, b.apiKeyId);
      const now = svc.clock.now();
      const prev = svc.budgets.get(b.apiKeyId);
      const cfg: BudgetConfig = {
        apiKeyId: b.apiKeyId,
        ...(b.hourlyLimitUsd ? { hourlyLimitUsd: b.hourlyLimitUsd } : {}),
        ...(b.dailyLimitUsd ? { dailyLimitUsd: b.dailyLimitUsd } : {}),
        ...(b.weeklyLimitUsd ? { weeklyLimitUsd: b.weeklyLimitUsd } : {}),
        ...(b.monthlyLimitUsd ? { monthlyLimitUsd: b.monthlyLimitUsd } : {}),
        warningThreshold: b.warningThreshold ?? DEFAULT_WARNING_THRESHOLD,
        ...(b.resetInterval ? { resetInterval: b.resetInterval } : {}),
        resetTime: b.resetTime ?? '00:00',
        createdAt: prev?.createdAt ?? now,
        updatedAt: now,
      };
      svc.budgets.set(cfg);
      await svc.state.db.settled();
      await svc.budgets.refresh(cfg.apiKeyId, now);
      ok(ctx, svc.budgets.view(cfg, now), prev ? 200 : 201);
    }),
  );

  m(
    r.delete('/api/usage/budget', async (ctx) => {
      const id = ctx.query.get('apiKeyId') ?? ctx.query.get('api_key_id');
      if (!id) throw badRequest('query parameter apiKeyId is required', { code: 'invalid_request' });
      if (!svc.budgets.remove(id)) throw new HttpError(404, `no budget for API key ${id}`, { code: 'not_found' });
      await svc.state.db.settled();
      ok(ctx, { apiKeyId: id, deleted: true });
    }),
  );

  m(
    r.get('/api/usage/token-limits', async (ctx) => {
      const now = svc.clock.now();
      const id = ctx.query.get('apiKeyId') ?? ctx.query.get('api_key_id') ?? undefined;
      const list = svc.tokenLimits.list(id);
      // With shared windows the use is the cluster's, read from Redis.
      if (svc.tokenLimits.shared) await Promise.all(list.map((l) => svc.tokenLimits.refresh(l, now)));
      const limits = list.map((l) => svc.tokenLimits.view(l, now));
      ok(ctx, { total: limits.length, limits });
    }),
  );

  m(
    r.post('/api/usage/token-limits', async (ctx) => {
      const raw = await body(ctx);
      // tokenLimit may arrive as a string ("5000").
      if (typeof raw.tokenLimit === 'string' && /^\s*\d+\s*$/.test(raw.tokenLimit)) raw.tokenLimit = Number(raw.tokenLimit);
      const b = validated(validateSetTokenLimit, raw);
      if (b.scopeType !== 'global' && b.scopeValue === undefined) {
        throw badRequest(`scopeValue is required for scopeType ${b.scopeType} (a ${b.scopeType === 'model' ? 'model id' : 'provider id'})`, { code: 'invalid_request' });
      }
      knownKey(svc, b.apiKeyId);
      const now = svc.clock.now();
      const { limit, created } = svc.tokenLimits.save(b, now);
      await svc.state.db.settled();
      ok(ctx, svc.tokenLimits.view(limit, now), created ? 201 : 200);
    }),
  );

  m(
    r.delete('/api/usage/token-limits', async (ctx) => {
      const id = ctx.query.get('id');
      if (!id) throw badRequest('query parameter id is required', { code: 'invalid_request' });
      if (!svc.tokenLimits.remove(id)) throw new HttpError(404, `token limit ${id} not found`, { code: 'not_found' });
      await svc.state.db.settled();
      ok(ctx, { id, deleted: true });
    }),
  );
}
