/**
 * Resilience settings (`GET|PATCH /api/resilience`, gateway.yaml `resilience:`): provider breaker
 * thresholds per provider type, connection cool-down backoff, model lock-out, account selection and
 * session affinity. Defaults follow the notes (§1.6–§1.8): API-key providers DEGRADED at 7 failures,
 * OPEN at 12, reset after 30 s; local providers OPEN at 2, reset after 15 s.
 */
import { Type } from '@sinclair/typebox';
import { compile } from '../../http/schema.js';

export const BREAKER_PROFILES = ['oauth', 'apikey', 'local'] as const;
export type BreakerProfileName = (typeof BREAKER_PROFILES)[number];

export interface BreakerProfile {
  /** Failures (net of successes) at which the breaker reports DEGRADED; traffic still flows. */
  degradationThreshold: number;
  /** Failures at which it opens. */
  failureThreshold: number;
  /** Time after the last failure before an OPEN breaker lets one probe through (HALF_OPEN). */
  resetTimeoutMs: number;
  /** Cap of the reset-time multiplier over repeated open cycles. */
  maxBackoffMultiplier: number;
  /** Open cycles after which the reset time starts doubling. */
  backoffEscalationCount: number;
}

export const ACCOUNT_STRATEGIES = ['fill-first', 'round-robin'] as const;
export type AccountStrategy = (typeof ACCOUNT_STRATEGIES)[number];

export interface ResilienceSettings {
  providerBreaker: Record<BreakerProfileName, BreakerProfile>;
  /** Provider id → breaker profile, overriding the guess (ollama or keyless → local, else apikey). */
  providerProfiles: Record<string, BreakerProfileName>;
  connectionCooldown: {
    /** First backoff step after a rate limit without Retry-After (default: gateway.yaml `rate_limit_cooldown_ms`). */
    baseMs?: number;
    /** Backoff cap. */
    maxMs: number;
    /** Highest backoff level (base × 2^(level−1)). */
    maxLevel: number;
    /** Cool-down after a quota / credits-exhausted answer (402, "insufficient_quota") without Retry-After. */
    quotaMs: number;
    /** Longest Retry-After honoured (a provider asking for a week gets this). */
    maxRetryAfterMs: number;
  };
  modelLockout: {
    enabled: boolean;
    /** Upstream statuses that lock the (provider, account, model) triple. */
    statuses: number[];
    baseMs: number;
    maxMs: number;
    /** At most this many doublings. */
    maxSteps: number;
  };
  accounts: {
    strategy: AccountStrategy;
    /** Round-robin stays on an account for this many consecutive requests before moving on. */
    stickyLimit: number;
    perProvider: Record<string, AccountStrategy>;
    sessionAffinity: boolean;
    /** Idle time after which a session's pin is forgotten. */
    sessionAffinityTtlMs: number;
    /** Most pins kept (oldest forgotten first). */
    maxSessions: number;
  };
}

export const DEFAULT_RESILIENCE: ResilienceSettings = {
  providerBreaker: {
    oauth: { degradationThreshold: 5, failureThreshold: 8, resetTimeoutMs: 60_000, maxBackoffMultiplier: 8, backoffEscalationCount: 2 },
    apikey: { degradationThreshold: 7, failureThreshold: 12, resetTimeoutMs: 30_000, maxBackoffMultiplier: 4, backoffEscalationCount: 3 },
    local: { degradationThreshold: 1, failureThreshold: 2, resetTimeoutMs: 15_000, maxBackoffMultiplier: 4, backoffEscalationCount: 3 },
  },
  providerProfiles: {},
  connectionCooldown: { maxMs: 120_000, maxLevel: 8, quotaMs: 3_600_000, maxRetryAfterMs: 24 * 3_600_000 },
  modelLockout: { enabled: true, statuses: [403, 404], baseMs: 120_000, maxMs: 1_800_000, maxSteps: 10 },
  accounts: { strategy: 'fill-first', stickyLimit: 1, perProvider: {}, sessionAffinity: true, sessionAffinityTtlMs: 1_800_000, maxSessions: 10_000 },
};

const Ms = Type.Integer({ minimum: 0, maximum: 30 * 24 * 3_600_000 });
const Profile = Type.Partial(
  Type.Object(
    {
      degradationThreshold: Type.Integer({ minimum: 1, maximum: 10_000 }),
      failureThreshold: Type.Integer({ minimum: 1, maximum: 10_000 }),
      resetTimeoutMs: Type.Integer({ minimum: 100, maximum: 24 * 3_600_000 }),
      maxBackoffMultiplier: Type.Integer({ minimum: 1, maximum: 1024 }),
      backoffEscalationCount: Type.Integer({ minimum: 0, maximum: 1000 }),
    },
    { additionalProperties: false },
  ),
);
const ProfileName = Type.Union(BREAKER_PROFILES.map((p) => Type.Literal(p)));
const Strategy = Type.Union(ACCOUNT_STRATEGIES.map((s) => Type.Literal(s)));

/** A partial update (every field optional; `null` drops a per-provider override). */
export const ResiliencePatchSchema = Type.Object(
  {
    providerBreaker: Type.Optional(
      Type.Object({ oauth: Type.Optional(Profile), apikey: Type.Optional(Profile), local: Type.Optional(Profile) }, { additionalProperties: false }),
    ),
    providerProfiles: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 128 }), Type.Union([ProfileName, Type.Null()]))),
    connectionCooldown: Type.Optional(
      Type.Partial(
        Type.Object(
          { baseMs: Ms, maxMs: Ms, maxLevel: Type.Integer({ minimum: 1, maximum: 30 }), quotaMs: Ms, maxRetryAfterMs: Ms },
          { additionalProperties: false },
        ),
      ),
    ),
    modelLockout: Type.Optional(
      Type.Partial(
        Type.Object(
          {
            enabled: Type.Boolean(),
            statuses: Type.Array(Type.Integer({ minimum: 400, maximum: 599 }), { maxItems: 50 }),
            baseMs: Ms,
            maxMs: Ms,
            maxSteps: Type.Integer({ minimum: 1, maximum: 30 }),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    accounts: Type.Optional(
      Type.Partial(
        Type.Object(
          {
            strategy: Strategy,
            stickyLimit: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
            perProvider: Type.Record(Type.String({ minLength: 1, maxLength: 128 }), Type.Union([Strategy, Type.Null()])),
            sessionAffinity: Type.Boolean(),
            sessionAffinityTtlMs: Type.Integer({ minimum: 1000, maximum: 30 * 24 * 3_600_000 }),
            maxSessions: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
          },
          { additionalProperties: false },
        ),
      ),
    ),
  },
  { additionalProperties: false },
);

export const validateResiliencePatch = compile(ResiliencePatchSchema);

export function checkResilience(s: ResilienceSettings): void {
  for (const name of BREAKER_PROFILES) {
    const p = s.providerBreaker[name];
    if (p.degradationThreshold > p.failureThreshold) {
      throw new Error(`providerBreaker.${name}.degradationThreshold (${p.degradationThreshold}) must not exceed failureThreshold (${p.failureThreshold})`);
    }
  }
  if (s.modelLockout.baseMs > s.modelLockout.maxMs) throw new Error('modelLockout.baseMs must not exceed modelLockout.maxMs');
}
