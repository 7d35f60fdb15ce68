/**
 * Connection (account) cool-downs (notes §1.6): after a rate limit the account is skipped until
 * `rateLimitedUntil`: the upstream's Retry-After when it sent one, else base × 2^(level−1) with a
 * cap, the level rising with every rate limit that arrives while the account is available again
 * (concurrent failures of one burst do not raise it twice). A quota or credits-exhausted answer cools
 * it for `quotaMs`. The account comes back lazily once the time has passed; a success clears it.
 */
import type { Classification } from '../routing/classify.js';
import type { ResilienceSettings } from './settings.js';

export type CooldownReason = 'rate_limit' | 'quota_exhausted' | 'retry_after';

export interface CooldownRecord {
  provider: string;
  accountId: string;
  accountName: string;
  rateLimitedUntil: number;
  backoffLevel: number;
  reason: CooldownReason;
  lastStatus?: number;
  lastError?: string;
  since: number;
}

const QUOTA_TEXT = /insufficient_quota|credits? (exhausted|depleted)|out of credits|exceeded your (current )?quota|billing|payment required/i;

export function cooldownKey(provider: string, accountId: string): string {
  return `${provider}#${accountId}`;
}

export class ConnectionCooldowns {
  private readonly map = new Map<string, CooldownRecord>();
  readonly dirty = new Set<string>();

  /** The active cool-down of an account, if any (expired ones stay recorded for their backoff level). */
  active(key: string, now: number): CooldownRecord | undefined {
    if (this.map.size === 0) return undefined;
    const r = this.map.get(key);
    return r !== undefined && r.rateLimitedUntil > now ? r : undefined;
  }

  /** Whether this failure cools the account down (rate limit, quota, or an explicit Retry-After). */
  static applies(c: Classification): boolean {
    return c.rateLimited || c.status === 402 || c.retryAfterMs !== undefined;
  }

  onFailure(provider: string, account: { id: string; name: string }, c: Classification, now: number, s: ResilienceSettings['connectionCooldown'], baseMs: number): CooldownRecord {
    const key = cooldownKey(provider, account.id);
    const prev = this.map.get(key);
    const quota = c.status === 402 || QUOTA_TEXT.test(c.message);
    const cooling = prev !== undefined && prev.rateLimitedUntil > now;
    let level = prev?.backoffLevel ?? 0;
    let until: number;
    let reason: CooldownReason;
    if (c.retryAfterMs !== undefined) {
      until = now + Math.min(c.retryAfterMs, s.maxRetryAfterMs);
      reason = quota ? 'quota_exhausted' : c.rateLimited ? 'rate_limit' : 'retry_after';
    } else if (quota) {
      until = now + s.quotaMs;
      reason = 'quota_exhausted';
    } else {
      // Anti-thundering-herd: failures of requests sent before the account cooled do not raise the level again.
      if (!cooling) level = Math.min(level + 1, s.maxLevel);
      until = now + Math.min(baseMs * 2 ** Math.max(0, level - 1), s.maxMs);
      reason = 'rate_limit';
    }
    if (cooling && prev.rateLimitedUntil > until) until = prev.rateLimitedUntil;
    const r: CooldownRecord = {
      provider,
      accountId: account.id,
      accountName: account.name,
      rateLimitedUntil: until,
      backoffLevel: level,
      reason,
      lastStatus: c.status,
      lastError: c.message.slice(0, 300),
      since: cooling ? prev.since : now,
    };
    this.map.set(key, r);
    this.dirty.add(key);
    return r;
  }

  /** A success clears the account's error state and backoff level. */
  onSuccess(key: string): void {
    if (this.map.size === 0) return;
    if (this.map.delete(key)) this.dirty.add(key);
  }

  /** Clear every account of a provider (or all); returns how many were cleared. */
  clear(provider?: string): number {
    let n = 0;
    for (const [key, r] of this.map) {
      if (provider !== undefined && r.provider !== provider) continue;
      this.map.delete(key);
      this.dirty.add(key);
      n++;
    }
    return n;
  }

  /** Accounts of a provider and their state, including expired records (backoff level kept). */
  forProvider(provider: string): CooldownRecord[] {
    const out: CooldownRecord[] = [];
    for (const r of this.map.values()) if (r.provider === provider) out.push(r);
    return out;
  }

  /** Active cool-downs, soonest to end first. */
  list(now: number): CooldownRecord[] {
    return [...this.map.values()].filter((r) => r.rateLimitedUntil > now).sort((a, b) => a.rateLimitedUntil - b.rateLimitedUntil);
  }

  prune(exists: (provider: string) => boolean): void {
    for (const [key, r] of this.map) {
      if (!exists(r.provider)) {
        this.map.delete(key);
        this.dirty.add(key);
      }
    }
  }

  restore(records: CooldownRecord[], now: number): void {
    for (const r of records) {
      if (typeof r?.provider !== 'string' || typeof r.accountId !== 'string' || typeof r.rateLimitedUntil !== 'number') continue;
      // Records whose time has passed only matter for their backoff level; keep those a day at most.
      if (r.rateLimitedUntil < now - 24 * 3_600_000) continue;
      this.map.set(cooldownKey(r.provider, r.accountId), r);
    }
  }

  /** Another daemon's changes (shared storage): taken as they are, not marked for persistence here. */
  applyRemote(upsert: readonly CooldownRecord[], remove: readonly string[], now: number): void {
    this.restore([...upsert], now);
    for (const key of remove) this.map.delete(key);
  }

  takeDirty(): { upsert: CooldownRecord[]; remove: string[] } {
    const upsert: CooldownRecord[] = [];
    const remove: string[] = [];
    for (const key of this.dirty) {
      const r = this.map.get(key);
      if (r) upsert.push(r);
      else remove.push(key);
    }
    this.dirty.clear();
    return { upsert, remove };
  }
}
