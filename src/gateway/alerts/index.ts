/**
 * The gateway's alerts in ctl's alert manager, checked every `CHECK_MS` from the state the
 * management API shows: a provider whose circuit breaker is open (or probing) fires
 * `GatewayCircuitOpen`; an API key past its budget's warning threshold `GatewayBudgetWarning`, past
 * the limit `GatewayBudgetExceeded` (per period); a token limit used up `GatewayTokenLimitReached`;
 * a provider account cooling down again and again (`REPEATED_LEVEL` rate limits in a row without a
 * success) or out of quota `GatewayAccountCoolingDown`.
 * Each resolves when the state clears (a breaker closes, a window resets, a limit is raised).
 */
import type { InternalAlert, InternalAlerts } from '../../http/component.js';
import { breakerView } from '../resilience/views.js';
import type { GatewayServices } from '../services.js';

export const CHECK_MS = 5_000;
/** Backoff level of a cool-down from which it counts as repeated (three rate limits in a row). */
export const REPEATED_LEVEL = 3;

export class GatewayAlerts {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly svc: GatewayServices,
    private readonly alerts: InternalAlerts,
  ) {}

  start(): void {
    if (!this.alerts.enabled || this.timer) return;
    this.timer = setInterval(() => {
      try {
        this.check();
      } catch (e) {
        this.svc.log.error({ err: (e as Error).message }, 'gateway: checking alert conditions failed');
      }
    }, CHECK_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  check(): void {
    if (!this.alerts.enabled) return;
    const svc = this.svc;
    const now = svc.clock.now();

    const open: InternalAlert[] = [];
    for (const p of svc.state.catalog.ordered) {
      const v = breakerView(svc, p.config.id, now);
      if (v.state !== 'OPEN' && v.state !== 'HALF_OPEN') continue;
      const why = v.lastError ? `: ${String(v.lastError)}` : '';
      open.push({
        alertname: 'GatewayCircuitOpen',
        labels: { provider: p.config.id },
        annotations: { summary: `circuit breaker of provider ${p.config.id} is ${String(v.state)} after ${String(v.failures)} failures${why}` },
        path: '/api/resilience',
      });
    }
    this.alerts.reconcile('GatewayCircuitOpen', open);

    const warning: InternalAlert[] = [];
    const exceeded: InternalAlert[] = [];
    for (const b of svc.budgets.list()) {
      const periods = svc.budgets.view(b, now).periods as Record<string, { limitUsd: number; spentUsd: number; warning: boolean; exceeded: boolean; nextResetAt: string }>;
      for (const [period, s] of Object.entries(periods)) {
        const labels = { api_key_id: b.apiKeyId, period };
        const summary = `API key ${b.apiKeyId} spent $${s.spentUsd} of its ${period} budget of $${s.limitUsd} (resets ${s.nextResetAt})`;
        if (s.exceeded) exceeded.push({ alertname: 'GatewayBudgetExceeded', labels, annotations: { summary }, path: '/api/usage/budget' });
        else if (s.warning) warning.push({ alertname: 'GatewayBudgetWarning', labels, annotations: { summary }, path: '/api/usage/budget' });
      }
    }
    this.alerts.reconcile('GatewayBudgetWarning', warning);
    this.alerts.reconcile('GatewayBudgetExceeded', exceeded);

    const reached: InternalAlert[] = [];
    for (const l of svc.tokenLimits.list()) {
      if (!l.enabled) continue;
      const v = svc.tokenLimits.view(l, now);
      if (v.remaining > 0) continue;
      reached.push({
        alertname: 'GatewayTokenLimitReached',
        labels: { limit_id: l.id, api_key_id: l.apiKeyId, scope: l.scopeValue !== undefined ? `${l.scopeType}:${l.scopeValue}` : l.scopeType },
        annotations: { summary: `API key ${l.apiKeyId} used ${v.tokensUsed} of ${l.tokenLimit} tokens (resets ${v.nextResetAt})` },
        path: '/api/usage/token-limits',
      });
    }
    this.alerts.reconcile('GatewayTokenLimitReached', reached);

    const cooling: InternalAlert[] = [];
    for (const r of svc.policy.cooldowns.list(now)) {
      if (r.reason !== 'quota_exhausted' && r.backoffLevel < REPEATED_LEVEL) continue;
      const why = r.reason === 'quota_exhausted' ? 'is out of quota' : `was rate limited ${r.backoffLevel} times in a row`;
      cooling.push({
        alertname: 'GatewayAccountCoolingDown',
        labels: { provider: r.provider, account: r.accountName || r.accountId },
        annotations: { summary: `account ${r.accountName || r.accountId} of provider ${r.provider} ${why}; skipped until ${new Date(r.rateLimitedUntil).toISOString()}` },
        path: '/api/rate-limits',
      });
    }
    this.alerts.reconcile('GatewayAccountCoolingDown', cooling);
  }
}
