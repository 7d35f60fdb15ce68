/**
 * The gateway's ResiliencePolicy: the three temporary-failure mechanisms, kept apart, plus account
 * selection and session affinity.
 *  - provider circuit breaker (breaker.ts): a whole provider, on provider faults (408, 5xx, connection);
 *  - connection cool-down (cooldown.ts): one account, on rate limits, quotas and Retry-After;
 *  - model lock-out (lockout.ts): one (provider, account, model), on "this model is not available here".
 * A failure feeds the mechanism it is about: a per-model quota locks the model and leaves the account
 * usable for other models; a 429 cools the account and leaves the breaker alone.
 *
 * Accounts are tried fill-first (priority order) or round-robin (sticky for `stickyLimit` requests),
 * with the session's pinned account first. Everything here is in memory; `ResilienceState` persists
 * breakers and cool-downs in batches.
 */
import { usableAccount } from '../oauth/account-key.js';
import type { Clock } from '../../http/clock.js';
import type { ProviderRuntime } from '../catalog.js';
import type { ProviderAccount } from '../types.js';
import { keylessAccount, type Admission, type AttemptOutcome, type AttemptSubject, type RequestInfo, type ResiliencePolicy } from '../routing/policy.js';
import { SessionAffinity } from './affinity.js';
import { ProviderBreakers } from './breaker.js';
import { ConnectionCooldowns, cooldownKey } from './cooldown.js';
import { lockoutKey, ModelLockouts } from './lockout.js';
import type { BreakerProfileName, ResilienceSettings } from './settings.js';

/** Per-key limits that may make one target unavailable (token limits scoped to a provider or model). */
export interface TargetLimits {
  admitTarget(apiKeyId: string, provider: string, ref: string, modelId: string, now: number): Admission | undefined;
}

export interface PolicyDeps {
  settings: () => ResilienceSettings;
  /** First cool-down step when the settings do not set one (gateway.yaml `rate_limit_cooldown_ms`). */
  defaultCooldownMs: () => number;
  provider: (id: string) => ProviderRuntime | undefined;
  clock: Clock;
  limits?: TargetLimits;
}

const ADMIT: Admission = { ok: true };

/** Breaker profile of a provider: the override, else oauth for OAuth logins, local for Ollama and keyless connections, else apikey. */
export function guessProfile(p: ProviderRuntime | undefined): BreakerProfileName {
  if (!p) return 'apikey';
  if (p.config.accounts.some((a) => a.id.startsWith('oauth:'))) return 'oauth';
  if (p.config.kind === 'ollama') return 'local';
  return p.config.accounts.some((a) => a.enabled && a.apiKey) ? 'apikey' : 'local';
}

export class ResilientPolicy implements ResiliencePolicy {
  readonly breakers: ProviderBreakers;
  readonly cooldowns = new ConnectionCooldowns();
  readonly lockouts = new ModelLockouts();
  readonly affinity = new SessionAffinity();
  /** Round-robin position per provider. */
  private readonly rr = new Map<string, { next: number; uses: number }>();
  /** Enabled accounts per provider config object (rebuilt with the catalog). */
  private readonly enabledCache = new WeakMap<object, ProviderAccount[]>();

  constructor(private readonly deps: PolicyDeps) {
    this.breakers = new ProviderBreakers((id) => {
      const s = deps.settings();
      return s.providerBreaker[this.profileOf(id)];
    });
  }

  profileOf(providerId: string): BreakerProfileName {
    return this.deps.settings().providerProfiles[providerId] ?? guessProfile(this.deps.provider(providerId));
  }

  private enabledAccounts(provider: ProviderRuntime): ProviderAccount[] {
    const cfg = provider.config;
    let list = this.enabledCache.get(cfg);
    if (!list) {
      list = cfg.accounts.length === 0 ? [keylessAccount(cfg.id)] : cfg.accounts.filter(usableAccount);
      this.enabledCache.set(cfg, list);
    }
    return list;
  }

  accounts(provider: ProviderRuntime, _modelId: string, req: RequestInfo): ProviderAccount[] {
    const list = this.enabledAccounts(provider);
    // A key pinned to one account uses that account alone (none, if it is disabled).
    if (req.accountId !== undefined) return list.filter((a) => a.id === req.accountId);
    if (list.length <= 1) return list;
    const s = this.deps.settings().accounts;
    const id = provider.config.id;
    let ordered = list;
    if ((s.perProvider[id] ?? s.strategy) === 'round-robin') {
      let st = this.rr.get(id);
      if (!st) this.rr.set(id, (st = { next: 0, uses: 0 }));
      const start = st.next % list.length;
      if (++st.uses >= s.stickyLimit) {
        st.next = (start + 1) % list.length;
        st.uses = 0;
      }
      if (start > 0) ordered = [...list.slice(start), ...list.slice(0, start)];
    }
    if (req.sessionId !== undefined && s.sessionAffinity) {
      const pinned = this.affinity.get(req.sessionId, `p:${id}`, this.deps.clock.now());
      if (pinned !== undefined && ordered[0]!.id !== pinned) {
        const i = ordered.findIndex((a) => a.id === pinned);
        if (i > 0) ordered = [ordered[i]!, ...ordered.slice(0, i), ...ordered.slice(i + 1)];
      }
    }
    return ordered;
  }

  preferredTarget(combo: string, req: RequestInfo, now: number): string | undefined {
    if (req.sessionId === undefined || !this.deps.settings().accounts.sessionAffinity) return undefined;
    return this.affinity.get(req.sessionId, `c:${combo}`, now);
  }

  admit(s: AttemptSubject, now: number): Admission {
    const pid = s.provider.config.id;
    const cd = this.cooldowns.active(cooldownKey(pid, s.account.id), now);
    if (cd) {
      return {
        ok: false,
        kind: cd.reason === 'quota_exhausted' ? 'quota' : 'cooldown',
        scope: 'account',
        reason: `account ${s.account.name} is cooling down (${cd.reason.replace('_', ' ')}) until ${new Date(cd.rateLimitedUntil).toISOString()}`,
        retryAfterMs: cd.rateLimitedUntil - now,
      };
    }
    const lo = this.lockouts.locked(lockoutKey(pid, s.account.id, s.modelId), now);
    if (lo) {
      return {
        ok: false,
        kind: 'lockout',
        scope: 'account',
        reason: `model ${s.modelId} is locked out on account ${s.account.name} until ${new Date(lo.until).toISOString()} (${lo.reason})`,
        retryAfterMs: lo.until - now,
      };
    }
    const keyId = s.request?.apiKeyId;
    if (keyId !== undefined && this.deps.limits) {
      const lim = this.deps.limits.admitTarget(keyId, pid, s.ref, s.modelId, now);
      if (lim && !lim.ok) return lim;
    }
    // Last: admitting a HALF_OPEN breaker takes its one probe.
    const br = this.breakers.admit(pid, now);
    if (!br.ok) return { ok: false, kind: 'breaker', scope: 'target', reason: br.reason, retryAfterMs: br.retryAfterMs };
    return ADMIT;
  }

  record(s: AttemptSubject, outcome: AttemptOutcome, now: number): void {
    const pid = s.provider.config.id;
    if (outcome.aborted) {
      this.breakers.onNeutral(pid);
      return;
    }
    const req = s.request;
    const settings = this.deps.settings();
    if (outcome.ok) {
      this.breakers.onSuccess(pid);
      this.cooldowns.onSuccess(cooldownKey(pid, s.account.id));
      this.lockouts.onSuccess(lockoutKey(pid, s.account.id, s.modelId));
      if (req?.sessionId !== undefined && settings.accounts.sessionAffinity) {
        const a = settings.accounts;
        this.affinity.set(req.sessionId, `p:${pid}`, s.account.id, now, a.sessionAffinityTtlMs, a.maxSessions);
        if (s.combo !== undefined) this.affinity.set(req.sessionId, `c:${s.combo}`, s.ref, now, a.sessionAffinityTtlMs, a.maxSessions);
      }
      return;
    }
    const c = outcome.classification;
    if (!c) return;
    if (c.providerFault) this.breakers.onFailure(pid, now, c.status, c.message);
    else this.breakers.onNeutral(pid);
    const locked = this.lockouts.onFailure(pid, s.account, s.modelId, c, now, settings.modelLockout);
    // A per-model quota locks the model only: the account still serves other models.
    if (!locked && ConnectionCooldowns.applies(c)) {
      this.cooldowns.onFailure(pid, s.account, c, now, settings.connectionCooldown, settings.connectionCooldown.baseMs ?? this.deps.defaultCooldownMs());
    }
    if (req?.sessionId !== undefined) {
      this.affinity.drop(req.sessionId, `p:${pid}`, s.account.id);
      if (s.combo !== undefined) this.affinity.drop(req.sessionId, `c:${s.combo}`, s.ref);
    }
  }

  /** Forget state of providers that were deleted. */
  prune(): void {
    const exists = (id: string) => this.deps.provider(id) !== undefined;
    this.breakers.prune(exists);
    this.cooldowns.prune(exists);
    this.lockouts.prune(exists);
    for (const id of this.rr.keys()) if (!exists(id)) this.rr.delete(id);
  }
}
