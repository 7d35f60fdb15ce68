/**
 * Resilience management (auth M):
 *   GET|PATCH /api/resilience                 settings (breaker thresholds per provider type, cool-down
 *                                             backoff, model lock-out, account selection) and breaker states
 *   POST      /api/resilience/reset           reset breakers (all or `{provider}`); `cooldowns`,
 *                                             `lockouts`, `settings: true` reset those too
 *   GET|DELETE /api/resilience/model-cooldowns  model lock-outs, soonest to end first; DELETE
 *                                             `{provider, model}` or `{all: true}`
 *   GET       /api/rate-limits                every account's cool-down state, and the concurrency gates
 *   GET       /api/monitoring/health          health summary (seed fields) with breakers, cool-downs, lock-outs
 *   GET|POST  /api/admin/concurrency          concurrency limits `{global?, perProvider?}` and live counts
 */
import type { RequestContext } from '../../../http/context.js';
import { readJson } from '../../../http/body.js';
import { badRequest } from '../../../http/errors.js';
import type { Router } from '../../../http/router.js';
import { camelizeKeys } from '../../case.js';
import { PROVIDER_KINDS } from '../../providers/index.js';
import { accountStates, breakerView, cooldownView, lockoutView } from '../../resilience/views.js';
import type { GatewayServices } from '../../services.js';
import { MANAGEMENT_BODY_LIMIT, ok } from '../common.js';
import { cacheStats } from './cache.js';

/** Keys of these maps are ids (provider ids), never camelised. */
const DATA_MAPS = new Set(['headers', 'providerProfiles', 'perProvider']);

/** A JSON object body, snake_case accepted (ids used as map keys left alone); `{}` when empty. */
export async function readSettingsBody(ctx: RequestContext): Promise<Record<string, unknown>> {
  const body = await readJson(ctx, { limit: MANAGEMENT_BODY_LIMIT });
  if (body === undefined) return {};
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('request body must be a JSON object', { code: 'invalid_request' });
  return camelizeKeys(body, DATA_MAPS) as Record<string, unknown>;
}

function resilienceView(svc: GatewayServices): Record<string, unknown> {
  const now = svc.clock.now();
  const s = svc.runtime.resilience.value;
  const routing = svc.state.catalog.settings;
  const providers = [...svc.state.catalog.providers.keys()];
  return {
    ...s,
    connectionCooldown: { ...s.connectionCooldown, baseMs: s.connectionCooldown.baseMs ?? routing.rateLimitCooldownMs },
    overrides: svc.runtime.resilience.overrides,
    providers: Object.fromEntries(providers.map((id) => [id, svc.policy.profileOf(id)])),
    breakers: providers.map((id) => breakerView(svc, id, now)),
  };
}

function bool(v: unknown, name: string, def: boolean): boolean {
  if (v === undefined) return def;
  if (typeof v !== 'boolean') throw badRequest(`${name} must be a boolean`, { code: 'invalid_request' });
  return v;
}

function optString(v: unknown, name: string): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw badRequest(`${name} must be a string`, { code: 'invalid_request' });
  return v;
}

export function healthView(svc: GatewayServices): Record<string, unknown> {
  const now = svc.clock.now();
  const catalog = svc.state.catalog;
  const providers = [...catalog.ordered];
  const enabled = providers.filter((p) => p.config.enabled);
  const breakers = providers.map((p) => breakerView(svc, p.config.id, now));
  const open = new Set(breakers.filter((b) => b.state === 'OPEN').map((b) => b.provider as string));
  const active = enabled.filter((p) => {
    if (open.has(p.config.id)) return false;
    return accountStates(svc, p, now).some((a) => a.available === true);
  });
  const cooldowns = svc.policy.cooldowns.list(now);
  const lockouts = svc.policy.lockouts.list(now);
  const troubled = breakers.some((b) => b.state !== 'CLOSED') || cooldowns.length > 0 || lockouts.length > 0;
  const status = enabled.length > 0 && active.length === 0 ? 'unhealthy' : troubled || active.length < enabled.length ? 'degraded' : 'healthy';
  return {
    status,
    timestamp: new Date(now).toISOString(),
    version: svc.version,
    uptimeSec: Math.max(0, Math.round((now - svc.startedAt) / 1000)),
    // Seed "Health summary": provider kinds in the registry; connections configured; enabled ones
    // that can take traffic now (breaker not OPEN, an account available); enabled ones under watch.
    catalogCount: PROVIDER_KINDS.length,
    configuredCount: providers.length,
    activeCount: active.length,
    monitoredCount: enabled.length,
    providerBreakers: breakers,
    rateLimits: cooldowns.map((r) => cooldownView(r, now)),
    lockouts: lockouts.map((r) => lockoutView(r, now)),
    sessions: { pinned: svc.policy.affinity.count(now) },
    cache: cacheStats(svc),
    concurrency: svc.concurrency.status(),
  };
}

function concurrencyView(svc: GatewayServices): Record<string, unknown> {
  const s = svc.runtime.concurrency.value;
  return { global: s.global, perProvider: s.perProvider, queueTimeoutMs: s.queueTimeoutMs, maxQueue: s.maxQueue, status: svc.concurrency.status() };
}

export function resilienceRoutes(r: Router, svc: GatewayServices): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');

  m(r.get('/api/resilience', (ctx) => ok(ctx, resilienceView(svc))));
  m(
    r.patch('/api/resilience', async (ctx) => {
      await svc.runtime.resilience.save(await readSettingsBody(ctx));
      ok(ctx, resilienceView(svc));
    }),
  );

  m(
    r.post('/api/resilience/reset', async (ctx) => {
      const body = await readSettingsBody(ctx);
      const provider = optString(body.provider, 'provider');
      if (provider !== undefined && !svc.state.catalog.providers.has(provider)) throw badRequest(`unknown provider ${provider}`, { code: 'invalid_request' });
      const out: Record<string, unknown> = {};
      if (bool(body.breakers, 'breakers', true)) out.breakersReset = svc.policy.breakers.reset(provider);
      if (bool(body.cooldowns, 'cooldowns', false)) out.cooldownsCleared = svc.policy.cooldowns.clear(provider);
      if (bool(body.lockouts, 'lockouts', false)) out.lockoutsCleared = svc.policy.lockouts.clear(provider !== undefined ? { provider } : {});
      if (bool(body.settings, 'settings', false)) {
        await svc.runtime.resilience.reset();
        out.settingsReset = true;
      }
      svc.resilienceState.flush();
      ok(ctx, { ...out, ...(provider !== undefined ? { provider } : {}), breakers: resilienceView(svc).breakers });
    }),
  );

  m(
    r.get('/api/resilience/model-cooldowns', (ctx) => {
      const now = svc.clock.now();
      const provider = ctx.query.get('provider') ?? undefined;
      const model = ctx.query.get('model') ?? undefined;
      const list = svc.policy.lockouts.list(now).filter((l) => (!provider || l.provider === provider) && (!model || l.model === model));
      ok(ctx, { total: list.length, enabled: svc.runtime.resilience.value.modelLockout.enabled, cooldowns: list.map((l) => lockoutView(l, now)) });
    }),
  );
  m(
    r.delete('/api/resilience/model-cooldowns', async (ctx) => {
      const body = await readSettingsBody(ctx);
      const q = (k: string) => ctx.query.get(k) ?? undefined;
      const all = body.all === true || q('all') === 'true';
      const provider = optString(body.provider ?? q('provider'), 'provider');
      const model = optString(body.model ?? q('model'), 'model');
      const account = optString(body.accountId ?? body.account ?? q('accountId'), 'accountId');
      if (!all && (provider === undefined || model === undefined)) {
        throw badRequest('send {provider, model} to clear one model, or {all: true} to clear every lock-out', { code: 'invalid_request' });
      }
      const cleared = all
        ? svc.policy.lockouts.clear()
        : svc.policy.lockouts.clear({ provider: provider!, model: model!, ...(account !== undefined ? { accountId: account } : {}) });
      ok(ctx, { cleared });
    }),
  );

  m(
    r.get('/api/rate-limits', (ctx) => {
      const now = svc.clock.now();
      const accounts = svc.state.catalog.ordered.flatMap((p) => accountStates(svc, p, now));
      ok(ctx, {
        accounts,
        limited: accounts.filter((a) => a.rateLimitedUntil !== null).length,
        cooldowns: svc.policy.cooldowns.list(now).map((c) => cooldownView(c, now)),
        concurrency: svc.concurrency.status(),
      });
    }),
  );

  m(r.get('/api/monitoring/health', (ctx) => ok(ctx, healthView(svc))));

  m(
    r.get('/api/admin/concurrency', (ctx) => {
      svc.auth.checkAdmin(ctx);
      ok(ctx, concurrencyView(svc));
    }),
  );
  m(
    r.post('/api/admin/concurrency', async (ctx) => {
      svc.auth.checkAdmin(ctx);
      const body = await readSettingsBody(ctx);
      // 0 means unlimited: a per-provider 0 drops the entry.
      if (body.perProvider && typeof body.perProvider === 'object' && !Array.isArray(body.perProvider)) {
        const pp = body.perProvider as Record<string, unknown>;
        for (const [k, v] of Object.entries(pp)) if (v === 0) pp[k] = null;
      }
      await svc.runtime.concurrency.save(body);
      ok(ctx, concurrencyView(svc));
    }),
  );
}
