/** How the resilience state is shown by the management API (health, rate limits, lock-outs, providers). */
import type { ProviderRuntime } from '../catalog.js';
import { keylessAccount } from '../routing/policy.js';
import type { GatewayServices } from '../services.js';
import type { CooldownRecord } from './cooldown.js';
import type { LockoutRecord } from './lockout.js';

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

export function breakerView(svc: GatewayServices, providerId: string, now: number): Record<string, unknown> {
  const p = svc.policy;
  const profile = p.profileOf(providerId);
  const limits = svc.runtime.resilience.value.providerBreaker[profile];
  const b = p.breakers.get(providerId, now);
  const state = b?.state ?? 'CLOSED';
  const resetMs = b ? p.breakers.resetMs(b) : limits.resetTimeoutMs;
  return {
    provider: providerId,
    profile,
    state,
    failures: b?.failures ?? 0,
    degradationThreshold: limits.degradationThreshold,
    failureThreshold: limits.failureThreshold,
    openCycles: b?.openCycles ?? 0,
    resetTimeoutMs: resetMs,
    ...(b?.openedAt !== undefined ? { openedAt: iso(b.openedAt) } : {}),
    ...(state === 'OPEN' && b?.openedAt !== undefined ? { retryAfterMs: Math.max(0, b.openedAt + resetMs - now) } : {}),
    ...(b?.lastFailureAt !== undefined ? { lastFailureAt: iso(b.lastFailureAt) } : {}),
    ...(b?.lastStatus !== undefined ? { lastStatus: b.lastStatus } : {}),
    ...(b?.lastError !== undefined ? { lastError: b.lastError } : {}),
  };
}

export function cooldownView(r: CooldownRecord, now: number): Record<string, unknown> {
  return {
    provider: r.provider,
    accountId: r.accountId,
    account: r.accountName,
    rateLimitedUntil: iso(r.rateLimitedUntil),
    remainingMs: Math.max(0, r.rateLimitedUntil - now),
    backoffLevel: r.backoffLevel,
    reason: r.reason,
    ...(r.lastStatus !== undefined ? { lastStatus: r.lastStatus } : {}),
    ...(r.lastError !== undefined ? { lastError: r.lastError } : {}),
    since: iso(r.since),
  };
}

export function lockoutView(r: LockoutRecord, now: number): Record<string, unknown> {
  return {
    provider: r.provider,
    accountId: r.accountId,
    account: r.accountName,
    model: r.model,
    until: iso(r.until),
    remainingMs: Math.max(0, r.until - now),
    failures: r.failures,
    lastStatus: r.lastStatus,
    reason: r.reason,
  };
}

/** Every account of a provider with its availability (GET /api/rate-limits, GET /api/providers/{id}). */
export function accountStates(svc: GatewayServices, rt: ProviderRuntime, now: number): Record<string, unknown>[] {
  const cfg = rt.config;
  const accounts = cfg.accounts.length > 0 ? cfg.accounts : [keylessAccount(cfg.id)];
  const byId = new Map(svc.policy.cooldowns.forProvider(cfg.id).map((r) => [r.accountId, r]));
  return accounts.map((a) => {
    const r = byId.get(a.id);
    const cooling = r !== undefined && r.rateLimitedUntil > now;
    return {
      provider: cfg.id,
      accountId: a.id,
      account: a.name,
      enabled: a.enabled,
      available: a.enabled && !cooling,
      rateLimitedUntil: cooling ? iso(r.rateLimitedUntil) : null,
      remainingMs: cooling ? r.rateLimitedUntil - now : 0,
      backoffLevel: r?.backoffLevel ?? 0,
      ...(r ? { reason: r.reason, lastStatus: r.lastStatus, lastError: r.lastError } : {}),
    };
  });
}
