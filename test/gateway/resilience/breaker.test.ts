/** src/gateway/resilience/breaker.ts: provider circuit breaker transitions and reset escalation, on a hand-moved clock. */
import { describe, expect, it } from 'vitest';
import { ProviderBreakers } from '../../../src/gateway/resilience/breaker.js';

describe('provider circuit breaker', () => {
  const profile = { degradationThreshold: 2, failureThreshold: 4, resetTimeoutMs: 10_000, maxBackoffMultiplier: 4, backoffEscalationCount: 1 };

  it('goes CLOSED → DEGRADED → OPEN → HALF_OPEN (one probe) → CLOSED', () => {
    const b = new ProviderBreakers(() => profile);
    let now = 1_000_000;
    expect(b.state('p', now)).toBe('CLOSED');
    b.onFailure('p', now, 500, 'boom');
    expect(b.state('p', now)).toBe('CLOSED');
    b.onFailure('p', now, 502, 'boom');
    expect(b.state('p', now)).toBe('DEGRADED');
    expect(b.admit('p', now).ok).toBe(true); // DEGRADED still lets traffic through
    b.onFailure('p', now, 503, 'boom');
    b.onFailure('p', now, 504, 'boom');
    expect(b.state('p', now)).toBe('OPEN');
    const refused = b.admit('p', now + 4000);
    expect(refused).toMatchObject({ ok: false, retryAfterMs: 6000 });
    // Lazily HALF_OPEN once the reset time passed: exactly one probe goes through.
    now += 10_000;
    expect(b.state('p', now)).toBe('HALF_OPEN');
    expect(b.admit('p', now).ok).toBe(true);
    expect(b.admit('p', now)).toMatchObject({ ok: false, reason: expect.stringMatching(/probe is in flight/) });
    b.onSuccess('p');
    expect(b.state('p', now)).toBe('CLOSED');
    expect(b.get('p', now)).toBeUndefined(); // reset: no failures left
  });

  it('recovers gradually: a success takes one failure off', () => {
    const b = new ProviderBreakers(() => profile);
    for (let i = 0; i < 3; i++) b.onFailure('p', 0, 500, 'x');
    expect(b.state('p', 0)).toBe('DEGRADED');
    b.onSuccess('p');
    expect(b.get('p', 0)).toMatchObject({ failures: 2, state: 'DEGRADED' });
    b.onSuccess('p');
    expect(b.get('p', 0)).toMatchObject({ failures: 1, state: 'CLOSED' });
  });

  it('a failed probe reopens it, and the reset time grows over open cycles up to the cap', () => {
    const b = new ProviderBreakers(() => profile);
    let now = 0;
    for (let i = 0; i < 4; i++) b.onFailure('p', now, 500, 'x');
    const cycle = (expectedReset: number) => {
      const rec = b.get('p', now)!;
      expect(rec.state).toBe('OPEN');
      expect(b.resetMs(rec)).toBe(expectedReset);
      now += expectedReset - 1;
      expect(b.state('p', now)).toBe('OPEN');
      now += 1;
      expect(b.admit('p', now).ok).toBe(true); // the probe
      b.onFailure('p', now, 503, 'still down');
    };
    // escalation after 1 cycle: ×1, ×2, ×4, then capped at ×4
    cycle(10_000);
    cycle(20_000);
    cycle(40_000);
    cycle(40_000);
    expect(b.get('p', now)!.openCycles).toBe(5);
  });

  it('a probe that ends without a verdict (429, client gone) is given back', () => {
    const b = new ProviderBreakers(() => profile);
    for (let i = 0; i < 4; i++) b.onFailure('p', 0, 500, 'x');
    expect(b.admit('p', 10_000).ok).toBe(true);
    b.onNeutral('p');
    expect(b.admit('p', 10_001).ok).toBe(true);
  });
});
