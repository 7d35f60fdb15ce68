/** src/gateway/resilience/lockout.ts: model lock-outs, on a hand-moved clock. */
import { describe, expect, it } from 'vitest';
import { ModelLockouts } from '../../../src/gateway/resilience/lockout.js';
import { DEFAULT_RESILIENCE } from '../../../src/gateway/resilience/settings.js';
import { classify } from '../../../src/gateway/routing/classify.js';
import { UpstreamError } from '../../../src/gateway/providers/index.js';

const http = (status: number, message = `upstream ${status}`, retryAfterMs?: number) =>
  classify(new UpstreamError('http', message, { status, upstreamMessage: message, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) }));

describe('model lock-out', () => {
  const s = DEFAULT_RESILIENCE.modelLockout;
  const acc = { id: 'a1', name: 'first' };

  it('locks (provider, account, model) on 404/403 with a doubling duration, not the account', () => {
    const l = new ModelLockouts();
    expect(l.onFailure('p', acc, 'm2', http(404, 'model not found'), 0, s)).toMatchObject({ until: 120_000, failures: 1 });
    expect(l.locked('p\u0000a1\u0000m2', 1)).toBeDefined();
    expect(l.locked('p\u0000a1\u0000m1', 1)).toBeUndefined();
    expect(l.onFailure('p', acc, 'm2', http(404), 200_000, s)!.until).toBe(200_000 + 240_000);
    l.onSuccess('p\u0000a1\u0000m2'); // 2 → 1
    l.onSuccess('p\u0000a1\u0000m2'); // 1 → 0: gone
    expect(l.list(0)).toEqual([]);
    // 5xx and generic 429 are not about the model.
    expect(l.onFailure('p', acc, 'm2', http(500), 0, s)).toBeUndefined();
    expect(l.onFailure('p', acc, 'm2', http(429, 'too many requests'), 0, s)).toBeUndefined();
    // Off switch.
    expect(l.onFailure('p', acc, 'm2', http(404), 0, { ...s, enabled: false })).toBeUndefined();
  });

  it('a per-model daily quota locks until the next UTC midnight', () => {
    const l = new ModelLockouts();
    const noon = Date.parse('2030-01-01T12:00:00Z');
    const r = l.onFailure('p', acc, 'm1', http(429, "You exceeded today's quota for model m1"), noon, s)!;
    expect(new Date(r.until).toISOString()).toBe('2030-01-02T00:00:00.000Z');
  });
});
