/**
 * The attempt loop shared by chat, embeddings and the in-process handle: walk the ordered targets
 * and their accounts, call upstream, classify failures, and either fall back, retry once after a
 * short Retry-After, return a non-retryable error, or stop when the client left. Every attempt
 * (skips included) lands in the returned log. The number of upstream calls is bounded.
 */
import { HttpError } from '../../http/errors.js';
import type { Clock } from '../../http/clock.js';
import type { AttemptLog } from '../request-log/store.js';
import { classify, type Classification } from './classify.js';
import type { RoutingMetrics } from './metrics.js';
import type { AttemptSubject, RequestInfo, ResiliencePolicy, SkipKind } from './policy.js';
import type { Resolution, ResolvedTarget } from './resolve.js';
import type { AbortLike } from '../abort.js';

/** Per-provider concurrency slots (resilience/concurrency.ts); absent = unlimited. */
export interface ProviderSlots {
  limited(provider: string): boolean;
  tryProvider(provider: string): (() => void) | undefined;
  waitProvider(provider: string, signal: AbortLike): Promise<(() => void) | undefined>;
  providerLimit(provider: string): number;
}

export interface AttemptDeps {
  policy: ResiliencePolicy;
  metrics: RoutingMetrics;
  clock: Clock;
  /** Wait `ms` unless `signal` aborts first. */
  sleep: (ms: number, signal: AbortLike) => Promise<void>;
  slots?: ProviderSlots;
}

export interface AttemptPlan {
  resolution: Resolution;
  /** Targets in strategy order. */
  ordered: ResolvedTarget[];
  request: RequestInfo;
  maxAttempts: number;
  retryWaitMaxMs: number;
  /** Aborted when the client disconnects. */
  signal: AbortLike;
}

export interface AttemptSuccess<T> {
  value: T;
  subject: AttemptSubject;
  attempts: AttemptLog[];
  /** Upstream calls that failed before the success. */
  failedAttempts: number;
  /** Gives back the provider's concurrency slot: call once the upstream call is over (a stream: when it ends). */
  release: () => void;
}

const NOOP = () => undefined;

/** The request failed on every attempt (or was not retryable); carries the attempt log. */
export class AttemptsFailed extends HttpError {
  constructor(
    status: number,
    message: string,
    readonly attempts: AttemptLog[],
    readonly failedAttempts: number,
    opts: { code: string; headers?: Record<string, string> },
  ) {
    super(status, message, opts);
  }
}

export function sleepWithSignal(ms: number, signal: AbortLike): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || ms <= 0) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

function retryAfterHeader(ms: number | undefined): Record<string, string> | undefined {
  if (ms === undefined) return undefined;
  return { 'Retry-After': String(Math.max(1, Math.ceil(ms / 1000))) };
}

export async function runAttempts<T>(
  plan: AttemptPlan,
  deps: AttemptDeps,
  call: (s: AttemptSubject, signal: AbortLike) => Promise<T>,
): Promise<AttemptSuccess<T>> {
  const attempts: AttemptLog[] = [];
  const failures: { ref: string; c: Classification }[] = [];
  const skips: { ref: string; kind: SkipKind; reason: string }[] = [];
  const combo = plan.resolution.combo?.name;
  let calls = 0;
  let skipRetryAfter: number | undefined;
  let limitHit = false;

  for (const u of plan.resolution.unresolved) {
    attempts.push({ provider: u.ref.split('/')[0] ?? u.ref, model: u.ref, outcome: 'skipped', error: u.reason });
  }

  targets: for (const target of plan.ordered) {
    const pid = target.provider.config.id;
    if (!target.provider.config.enabled) {
      attempts.push({ provider: pid, model: target.modelId, outcome: 'skipped', error: 'provider disabled' });
      continue;
    }
    const accounts = deps.policy.accounts(target.provider, target.modelId, plan.request);
    if (accounts.length === 0) {
      attempts.push({ provider: pid, model: target.modelId, outcome: 'skipped', error: 'no enabled account' });
      continue;
    }
    for (const account of accounts) {
      const subject: AttemptSubject = { ref: target.ref, provider: target.provider, modelId: target.modelId, account, request: plan.request, combo };
      let retried = false;
      for (;;) {
        if (calls >= plan.maxAttempts) {
          limitHit = true;
          break targets;
        }
        if (plan.signal.aborted) throw clientGone(attempts, failures.length);
        // A retry after a short Retry-After is not re-admitted: the account cooled down on that very answer.
        if (!retried) {
          const adm = deps.policy.admit(subject, deps.clock.now());
          if (!adm.ok) {
            attempts.push({ provider: pid, model: target.modelId, account: account.name, outcome: 'skipped', error: adm.reason });
            skips.push({ ref: target.ref, kind: adm.kind ?? 'other', reason: adm.reason });
            skipRetryAfter = minDefined(skipRetryAfter, adm.retryAfterMs);
            if (adm.scope === 'target') continue targets;
            break; // next account
          }
        }
        let release: () => void = NOOP;
        if (deps.slots?.limited(pid)) {
          const slot = deps.slots.tryProvider(pid) ?? (await deps.slots.waitProvider(pid, plan.signal));
          if (!slot) {
            deps.policy.record(subject, { ok: false, latencyMs: 0, aborted: true }, deps.clock.now());
            if (plan.signal.aborted) throw clientGone(attempts, failures.length);
            const reason = `provider ${pid} is at its concurrency limit (${deps.slots.providerLimit(pid)} calls in flight) and no slot freed up in time`;
            attempts.push({ provider: pid, model: target.modelId, account: account.name, outcome: 'skipped', error: reason });
            skips.push({ ref: target.ref, kind: 'concurrency', reason });
            skipRetryAfter = minDefined(skipRetryAfter, 1000);
            continue targets;
          }
          release = slot;
        }
        calls++;
        const t0 = deps.clock.now();
        try {
          const value = await call(subject, plan.signal);
          const end = deps.clock.now();
          const latencyMs = end - t0;
          deps.policy.record(subject, { ok: true, latencyMs }, end);
          deps.metrics.record(target.ref, combo, true, latencyMs, end);
          attempts.push({ provider: pid, model: target.modelId, account: account.name, outcome: 'success', status: 200, latencyMs });
          return { value, subject, attempts, failedAttempts: failures.length, release };
        } catch (e) {
          release();
          const latencyMs = deps.clock.now() - t0;
          const c = classify(e);
          const entry: AttemptLog = {
            provider: pid,
            model: target.modelId,
            account: account.name,
            outcome: 'error',
            status: c.status,
            error: c.message,
            latencyMs,
          };
          attempts.push(entry);
          if (c.stop) {
            entry.action = 'stop';
            deps.policy.record(subject, { ok: false, latencyMs, aborted: true }, deps.clock.now());
            throw clientGone(attempts, failures.length);
          }
          deps.policy.record(subject, { ok: false, latencyMs, classification: c }, deps.clock.now());
          deps.metrics.record(target.ref, combo, false, latencyMs, deps.clock.now());
          if (!c.fallback) {
            entry.action = 'return';
            throw new AttemptsFailed(c.status, `${target.ref}: ${c.message}`, attempts, failures.length, {
              code: 'upstream_error',
              ...(retryAfterHeader(c.retryAfterMs) ? { headers: retryAfterHeader(c.retryAfterMs)! } : {}),
            });
          }
          failures.push({ ref: target.ref, c });
          if (!retried && c.retryAfterMs !== undefined && c.retryAfterMs <= plan.retryWaitMaxMs) {
            // A short Retry-After is waited out on the same target instead of bursting to the next one.
            entry.action = 'retry';
            retried = true;
            await deps.sleep(c.retryAfterMs, plan.signal);
            continue;
          }
          entry.action = 'fallback';
          if (c.rateLimited) skipRetryAfter = minDefined(skipRetryAfter, c.retryAfterMs);
          if (c.scope === 'target') continue targets;
          break; // next account
        }
      }
    }
  }

  if (failures.length === 0) throw nothingTried(plan, attempts, skips, skipRetryAfter);
  const allRateLimited = failures.every((f) => f.c.rateLimited);
  const status = allRateLimited ? 429 : failures[0]!.c.status;
  const last = failures[failures.length - 1]!;
  const skipped = skips.length > 0 ? `; skipped: ${skipSummary(skips)}` : '';
  const message =
    failures.length === 1 && !limitHit
      ? `${last.ref}: ${last.c.message}${skipped}`
      : `all ${failures.length} attempts failed${limitHit ? ` (attempt limit ${plan.maxAttempts} reached)` : ''}: ` +
        failures.map((f) => `${f.ref}: ${f.c.status} ${truncate(f.c.message, 200)}`).join('; ') +
        skipped;
  const headers = allRateLimited || skipRetryAfter !== undefined ? retryAfterHeader(skipRetryAfter ?? minOf(failures.map((f) => f.c.retryAfterMs))) : undefined;
  throw new AttemptsFailed(status, message, attempts, failures.length, {
    code: failures.length === 1 ? 'upstream_error' : 'all_targets_failed',
    ...(headers ? { headers } : {}),
  });
}

function skipSummary(skips: { ref: string; reason: string }[]): string {
  const seen = new Set<string>();
  const parts: string[] = [];
  for (const s of skips) {
    const line = `${s.ref}: ${s.reason}`;
    if (seen.has(line)) continue;
    seen.add(line);
    parts.push(truncate(line, 240));
  }
  return parts.join('; ');
}

const RATE_KINDS: ReadonlySet<SkipKind> = new Set(['cooldown', 'quota', 'lockout']);

/**
 * Nothing was tried: every target was skipped. The kinds of the skips decide the answer:
 * a spent token limit → 429; rate limits, quotas and lock-outs only → 429; an open breaker → 503
 * `provider_circuit_open`; a full provider → 503 `provider_concurrency_limit`; else 503. The message
 * lists why each target was skipped; Retry-After is the soonest time one comes back.
 */
function nothingTried(plan: AttemptPlan, attempts: AttemptLog[], skips: { ref: string; kind: SkipKind; reason: string }[], retryAfterMs: number | undefined): AttemptsFailed {
  const requested = plan.resolution.requested;
  const why = skips.length > 0 ? `: ${skipSummary(skips)}` : '';
  const ra = retryAfterHeader(retryAfterMs);
  const kinds = new Set(skips.map((s) => s.kind));
  if (kinds.size > 0 && [...kinds].every((k) => k === 'token-limit')) {
    return new AttemptsFailed(429, `token limit reached for ${requested}${why}`, attempts, 0, { code: 'token_limit_exceeded', ...(ra ? { headers: ra } : {}) });
  }
  if (kinds.size > 0 && [...kinds].every((k) => RATE_KINDS.has(k) || k === 'token-limit')) {
    return new AttemptsFailed(429, `every target of ${requested} is cooling down after rate limits${why}`, attempts, 0, { code: 'rate_limited', ...(ra ? { headers: ra } : {}) });
  }
  if (kinds.has('breaker')) {
    return new AttemptsFailed(503, `no available target for ${requested}: provider circuit open${why}`, attempts, 0, {
      code: 'provider_circuit_open',
      headers: { ...(ra ?? { 'Retry-After': '1' }), 'X-Gateway-Provider-Breaker': 'open' },
    });
  }
  if (kinds.has('concurrency')) {
    return new AttemptsFailed(503, `no available target for ${requested}: concurrency limit reached${why}`, attempts, 0, {
      code: 'provider_concurrency_limit',
      headers: ra ?? { 'Retry-After': '1' },
    });
  }
  return new AttemptsFailed(503, `no available target for ${requested}${why}`, attempts, 0, { code: 'no_available_target', ...(ra ? { headers: ra } : {}) });
}

/** The smaller of two optional values (a plain function: no closure per request). */
function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (b === undefined) return a;
  return a === undefined ? b : Math.min(a, b);
}

function minOf(values: (number | undefined)[]): number | undefined {
  let m: number | undefined;
  for (const v of values) if (v !== undefined && (m === undefined || v < m)) m = v;
  return m;
}

function truncate(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n)}…`;
}

function clientGone(attempts: AttemptLog[], failed: number): AttemptsFailed {
  return new AttemptsFailed(499, 'client closed the request', attempts, failed, { code: 'client_closed_request' });
}
