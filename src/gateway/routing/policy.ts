/**
 * The seam between the attempt loop and resilience bookkeeping. The loop asks the policy which
 * accounts to try, whether a (provider, account, model) may be tried now, and tells it every outcome.
 * `BasicPolicy` does the minimum the core needs: accounts in priority order and a cool-down of an
 * account after a rate limit (Retry-After when given). Circuit breakers, model lock-outs and session
 * affinity (issue 6) replace it through the same interface.
 */
import { usableAccount } from '../oauth/account-key.js';
import type { ProviderRuntime } from '../catalog.js';
import type { ProviderAccount, RoutingSettings } from '../types.js';
import type { Classification } from './classify.js';

export interface AttemptSubject {
  /** `<provider>/<model>` */
  ref: string;
  provider: ProviderRuntime;
  modelId: string;
  account: ProviderAccount;
  /** Combo name when the request came through a combo. */
  combo?: string;
  /** The request this attempt belongs to (session affinity, per-key limits). */
  request?: RequestInfo;
}

/** What the policy knows about the request (for affinity, per-key rules). */
export interface RequestInfo {
  requestId: string;
  sessionId?: string;
  apiKeyId?: string;
  /** The provider account the key is pinned to (a registered key's accountId). */
  accountId?: string;
}

/**
 * Why an attempt was not made. The attempt loop turns the kinds of the skips into the answer when
 * nothing was tried: rate limits (cooldown, lockout, quota) → 429; an open breaker → 503
 * `provider_circuit_open`; a full provider → 503; a spent token limit → 429.
 */
export type SkipKind = 'cooldown' | 'quota' | 'lockout' | 'breaker' | 'concurrency' | 'token-limit' | 'other';

export type Admission =
  | { ok: true }
  | {
      ok: false;
      reason: string;
      retryAfterMs?: number;
      kind?: SkipKind;
      /** `target`: the other accounts of this provider would be refused too (skip the provider at once). */
      scope?: 'account' | 'target';
    };

export interface AttemptOutcome {
  ok: boolean;
  latencyMs: number;
  /** Set for failures. */
  classification?: Classification;
  /** The attempt was admitted but not completed (client gone, attempt limit): nothing to count. */
  aborted?: boolean;
}

export interface ResiliencePolicy {
  /** The accounts of `provider` to try for `modelId`, in order. */
  accounts(provider: ProviderRuntime, modelId: string, req: RequestInfo): ProviderAccount[];
  /** Whether the subject may be tried now; a refusal is logged as a skipped attempt. */
  admit(s: AttemptSubject, now: number): Admission;
  /** Every attempt's outcome. */
  record(s: AttemptSubject, outcome: AttemptOutcome, now: number): void;
  /** The combo target a session is pinned to, tried first (session affinity). */
  preferredTarget?(combo: string, req: RequestInfo, now: number): string | undefined;
}

/** Providers without credentials (local Ollama, open OpenAI-compatible servers) get one keyless account. */
export function keylessAccount(providerId: string): ProviderAccount {
  return { id: `${providerId}#none`, name: 'none', apiKey: '', enabled: true, priority: 0 };
}

export class BasicPolicy implements ResiliencePolicy {
  /** `<provider>#<account>` → cooled down until (ms). */
  private readonly cooldowns = new Map<string, number>();

  constructor(private readonly settings: () => RoutingSettings) {}

  accounts(provider: ProviderRuntime): ProviderAccount[] {
    const list = provider.config.accounts;
    if (list.length === 0) return [keylessAccount(provider.config.id)];
    const enabled = list.filter(usableAccount);
    return enabled.length === list.length ? list : enabled;
  }

  admit(s: AttemptSubject, now: number): Admission {
    const until = this.cooldowns.get(`${s.provider.config.id}#${s.account.id}`);
    if (until === undefined) return { ok: true };
    if (until <= now) {
      this.cooldowns.delete(`${s.provider.config.id}#${s.account.id}`);
      return { ok: true };
    }
    return { ok: false, kind: 'cooldown', reason: 'account cooling down after a rate limit', retryAfterMs: until - now };
  }

  record(s: AttemptSubject, outcome: AttemptOutcome, now: number): void {
    const key = `${s.provider.config.id}#${s.account.id}`;
    if (outcome.ok) {
      if (this.cooldowns.size > 0) this.cooldowns.delete(key);
      return;
    }
    const c = outcome.classification;
    if (c?.rateLimited) {
      const ms = c.retryAfterMs ?? this.settings().rateLimitCooldownMs;
      if (ms > 0) this.cooldowns.set(key, now + ms);
    }
  }

  /** Active cool-downs (for diagnostics). */
  list(now: number): { key: string; remainingMs: number }[] {
    return [...this.cooldowns]
      .filter(([, until]) => until > now)
      .map(([key, until]) => ({ key, remainingMs: until - now }))
      .sort((a, b) => a.remainingMs - b.remainingMs);
  }
}
