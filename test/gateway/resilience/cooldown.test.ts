/** src/gateway/resilience/cooldown.ts: connection cool-down backoff, on a hand-moved clock. */
import { describe, expect, it } from 'vitest';
import { ConnectionCooldowns } from '../../../src/gateway/resilience/cooldown.js';
import { DEFAULT_RESILIENCE } from '../../../src/gateway/resilience/settings.js';
import { classify } from '../../../src/gateway/routing/classify.js';
import { UpstreamError } from '../../../src/gateway/providers/index.js';

const http = (status: number, message = `upstream ${status}`, retryAfterMs?: number) =>
  classify(new UpstreamError('http', message, { status, upstreamMessage: message, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) }));

describe('connection cool-down', () => {
  const s = DEFAULT_RESILIENCE.connectionCooldown;
  const acc = { id: 'a1', name: 'first' };

  it('uses Retry-After when given, else base × 2^(level−1) capped, and clears on success', () => {
    const c = new ConnectionCooldowns();
    const r1 = c.onFailure('p', acc, http(429, 'slow down', 30_000), 0, s, 1000);
    expect(r1).toMatchObject({ rateLimitedUntil: 30_000, reason: 'rate_limit', backoffLevel: 0 });
    expect(c.active('p#a1', 29_999)).toBeDefined();
    expect(c.active('p#a1', 30_000)).toBeUndefined(); // lazily available again
    // Without a hint: exponential backoff.
    expect(c.onFailure('p', acc, http(429), 30_000, s, 1000).rateLimitedUntil).toBe(31_000);
    // A concurrent failure while still cooling does not raise the level again.
    expect(c.onFailure('p', acc, http(429), 30_500, s, 1000)).toMatchObject({ backoffLevel: 1, rateLimitedUntil: 31_500 });
    expect(c.onFailure('p', acc, http(429), 40_000, s, 1000)).toMatchObject({ backoffLevel: 2, rateLimitedUntil: 42_000 });
    expect(c.onFailure('p', acc, http(429), 50_000, s, 1000)).toMatchObject({ backoffLevel: 3, rateLimitedUntil: 54_000 });
    let now = 100_000;
    for (let i = 0; i < 20; i++) c.onFailure('p', acc, http(429), (now += 1_000_000), s, 1000);
    expect(c.active('p#a1', now)!.rateLimitedUntil - now).toBe(s.maxMs);
    c.onSuccess('p#a1');
    expect(c.forProvider('p')).toEqual([]);
  });

  it('a quota answer cools the account for quotaMs', () => {
    const c = new ConnectionCooldowns();
    expect(c.onFailure('p', acc, http(402, 'payment required'), 0, s, 1000)).toMatchObject({ reason: 'quota_exhausted', rateLimitedUntil: s.quotaMs });
    expect(c.onFailure('p', { id: 'a2', name: 'b' }, http(429, 'You exceeded your current quota (insufficient_quota)'), 0, s, 1000).reason).toBe('quota_exhausted');
  });
});
