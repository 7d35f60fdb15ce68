/**
 * Monitoring (management auth):
 *   GET /api/sessions                 sticky sessions and what each is pinned to (provider account, combo target)
 *   GET /api/rate-limit               the global picture: concurrency gates, accounts cooling down, models locked out
 *   GET /api/usage/{connectionId}     one provider account's requests, errors, tokens and cost (`days`, 30)
 */
import { notFound } from '../../http/errors.js';
import type { Router } from '../../http/router.js';
import { intQuery, ok } from '../routes/common.js';
import type { GatewayServices } from '../services.js';

const iso = (ms: number) => new Date(ms).toISOString();

export function monitoringRoutes(r: Router, svc: GatewayServices): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');
  m(
    r.get('/api/sessions', (ctx) => {
      const now = svc.clock.now();
      const bySession = new Map<string, { pins: { scope: string; target: string; expiresAt: string }[]; expiresAt: number }>();
      for (const e of svc.policy.affinity.entries(now)) {
        const s = bySession.get(e.session) ?? { pins: [], expiresAt: 0 };
        const kind = e.scope.startsWith('p:') ? 'provider' : 'combo';
        s.pins.push({ scope: `${kind}:${e.scope.slice(2)}`, target: e.value, expiresAt: iso(e.expiresAt) });
        s.expiresAt = Math.max(s.expiresAt, e.expiresAt);
        bySession.set(e.session, s);
      }
      const sessions = [...bySession.entries()].map(([sessionId, s]) => ({ sessionId, pins: s.pins, expiresAt: iso(s.expiresAt) }));
      ok(ctx, { sessions, total: sessions.length, affinity: svc.runtime.resilience.value.accounts.sessionAffinity });
    }),
  );
  m(
    r.get('/api/rate-limit', (ctx) => {
      const now = svc.clock.now();
      const s = svc.runtime.concurrency.value;
      ok(ctx, {
        concurrency: { global: s.global, perProvider: s.perProvider, status: svc.concurrency.status() },
        accountsCoolingDown: svc.policy.cooldowns.list(now).length,
        modelsLockedOut: svc.policy.lockouts.list(now).length,
        openBreakers: [...svc.state.catalog.providers.keys()].filter((id) => svc.policy.breakers.state(id, now) === 'OPEN'),
      });
    }),
  );
  m(
    r.get('/api/usage/:connectionId', async (ctx) => {
      const id = ctx.params.connectionId!;
      for (const p of svc.state.catalog.providers.values()) {
        const a = p.config.accounts.find((x) => x.id === id);
        if (!a) continue;
        svc.usage.flush();
        const days = intQuery(ctx, 'days', 30, 1, 366);
        const u = await svc.state.db.logs.accountUsage(p.config.id, a.name, svc.clock.now() - days * 86_400_000);
        return ok(ctx, { connectionId: id, provider: p.config.id, account: a.name, enabled: a.enabled, days, ...u, cost: Number(u.cost.toFixed(10)), lastUsedAt: u.lastUsedAt === null ? null : iso(u.lastUsedAt) });
      }
      throw notFound(`no provider account ${id}`);
    }),
  );
}
