/** src/gateway/resilience/concurrency.ts: gates and the concurrency limiter. */
import { describe, expect, it } from 'vitest';
import { ConcurrencyLimiter, Gate } from '../../../src/gateway/resilience/concurrency.js';

describe('concurrency gates', () => {
  it('a gate admits up to its limit and lets waiters in FIFO on release', async () => {
    const g = new Gate(1);
    expect(g.tryAcquire()).toBe(true);
    expect(g.tryAcquire()).toBe(false);
    const signal = new AbortController().signal;
    const w1 = g.wait(1000, signal);
    const w2 = g.wait(20, signal);
    expect(g.queued).toBe(2);
    expect(await w2).toBe(false); // timed out
    g.release();
    expect(await w1).toBe(true);
    expect(g.active).toBe(1);
  });

  it('global limit: queue, then 429 with a clear message; per provider: undefined slot', async () => {
    const l = new ConcurrencyLimiter();
    l.configure({ global: 1, perProvider: { p: 1 }, queueTimeoutMs: 20, maxQueue: 10 });
    const signal = new AbortController().signal;
    const r1 = await l.acquireGlobal(signal);
    await expect(l.acquireGlobal(signal)).rejects.toMatchObject({ kind: 'limited', retryAfterS: 1, code: 'concurrency_limit_exceeded', message: expect.stringMatching(/concurrency limit \(1 requests in flight\)/) });
    r1();
    r1(); // idempotent
    expect(l.status().global.inFlight).toBe(0);
    const s1 = l.tryProvider('p')!;
    expect(l.tryProvider('p')).toBeUndefined();
    expect(await l.waitProvider('p', signal)).toBeUndefined();
    s1();
    expect(l.tryProvider('other')).toBeTypeOf('function'); // unlimited
    l.configure({ global: 0, perProvider: {}, queueTimeoutMs: 20, maxQueue: 10 });
    expect(l.limited('p')).toBe(false);
  });
});
