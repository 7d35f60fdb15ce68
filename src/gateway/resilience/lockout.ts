/**
 * Model lock-outs (notes §1.8), in memory only: a (provider, account, model) triple the upstream said
 * it cannot serve is skipped for a while, without cooling the whole account (which may serve other
 * models) or tripping the provider's breaker. What locks:
 *  - an upstream status in `statuses` (default 403 and 404: no access to the model, no such model);
 *  - a 400 that falls back and names the model (model unsupported or not accessible here);
 *  - a rate limit or quota that names the model (a per-model quota): until the Retry-After, or until
 *    the next midnight (UTC) for a daily quota.
 * Duration: base × 2^(failures−1), capped, at most `maxSteps` doublings. A success after the lock-out
 * halves the failure count; the entry goes when it reaches 0.
 */
import type { Classification } from '../routing/classify.js';
import type { ResilienceSettings } from './settings.js';

export interface LockoutRecord {
  provider: string;
  accountId: string;
  accountName: string;
  model: string;
  until: number;
  failures: number;
  lastStatus: number;
  reason: string;
}

const MODEL_QUOTA = /\bmodel\b.{0,80}\b(quota|limit)|\b(quota|limit)\b.{0,80}\bmodel\b|today'?s quota/i;
const DAILY = /\b(daily|per day|today|24 ?h)/i;
const MODEL_TEXT = /\bmodel/i;

export function lockoutKey(provider: string, accountId: string, model: string): string {
  return `${provider}\u0000${accountId}\u0000${model}`;
}

function nextUtcMidnight(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
}

export class ModelLockouts {
  private readonly map = new Map<string, LockoutRecord>();

  locked(key: string, now: number): LockoutRecord | undefined {
    if (this.map.size === 0) return undefined;
    const r = this.map.get(key);
    return r !== undefined && r.until > now ? r : undefined;
  }

  /** Whether this failure is about the model on this account (a per-model quota included). */
  static modelSpecific(c: Classification, s: ResilienceSettings['modelLockout']): 'status' | 'quota' | 'unsupported' | undefined {
    if (!s.enabled) return undefined;
    if (c.rateLimited && MODEL_QUOTA.test(c.message)) return 'quota';
    if (s.statuses.includes(c.status) && !c.rateLimited) return 'status';
    if (c.status === 400 && c.fallback && MODEL_TEXT.test(c.message)) return 'unsupported';
    return undefined;
  }

  /** Lock the triple when the failure calls for it; returns the record, or undefined when not locked. */
  onFailure(
    provider: string,
    account: { id: string; name: string },
    model: string,
    c: Classification,
    now: number,
    s: ResilienceSettings['modelLockout'],
  ): LockoutRecord | undefined {
    const kind = ModelLockouts.modelSpecific(c, s);
    if (!kind) return undefined;
    const key = lockoutKey(provider, account.id, model);
    const prev = this.map.get(key);
    const failures = Math.min((prev?.failures ?? 0) + 1, s.maxSteps);
    let until: number;
    if (kind === 'quota') until = c.retryAfterMs !== undefined ? now + c.retryAfterMs : DAILY.test(c.message) ? nextUtcMidnight(now) : now + s.baseMs;
    else until = now + Math.min(s.baseMs * 2 ** (failures - 1), s.maxMs);
    const r: LockoutRecord = {
      provider,
      accountId: account.id,
      accountName: account.name,
      model,
      until: Math.max(until, prev && prev.until > now ? prev.until : 0),
      failures,
      lastStatus: c.status,
      reason: `${kind === 'quota' ? 'per-model quota' : kind === 'unsupported' ? 'model not usable here' : `upstream ${c.status}`}: ${c.message.slice(0, 200)}`,
    };
    this.map.set(key, r);
    return r;
  }

  onSuccess(key: string): void {
    if (this.map.size === 0) return;
    const r = this.map.get(key);
    if (!r) return;
    r.failures = Math.floor(r.failures / 2);
    if (r.failures === 0) this.map.delete(key);
  }

  /** Clear lock-outs: all, or those of a provider (and model, and account). Returns how many. */
  clear(filter: { provider?: string; model?: string; accountId?: string } = {}): number {
    let n = 0;
    for (const [key, r] of this.map) {
      if (filter.provider !== undefined && r.provider !== filter.provider) continue;
      if (filter.model !== undefined && r.model !== filter.model) continue;
      if (filter.accountId !== undefined && r.accountId !== filter.accountId) continue;
      this.map.delete(key);
      n++;
    }
    return n;
  }

  /** Active lock-outs, soonest to end first. Expired ones are dropped from the list (their count stays). */
  list(now: number): LockoutRecord[] {
    return [...this.map.values()].filter((r) => r.until > now).sort((a, b) => a.until - b.until);
  }

  prune(exists: (provider: string) => boolean): void {
    for (const [key, r] of this.map) if (!exists(r.provider)) this.map.delete(key);
  }
}
