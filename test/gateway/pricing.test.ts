/** src/gateway/pricing.ts: price lookup and cost. */
import { describe, expect, it } from 'vitest';
import { PriceTable, costOf, formatCost } from '../../src/gateway/pricing.js';

describe('pricing', () => {
  it('looks up exact, bare and dated default ids, and never double-counts cached or reasoning tokens', () => {
    const t = new PriceTable([[{ model: 'p/m', input: 2, output: 4, cached: 1, source: 'file' }]]);
    expect(t.lookup('p', 'm')?.input).toBe(2);
    expect(t.lookup('x', 'gpt-4o-mini-2024-07-18')?.input).toBe(0.15);
    expect(t.lookup('x', 'gpt-4o-2024-08-06')?.input).toBe(2.5);
    expect(t.lookup('x', 'unknown-model')).toBeUndefined();
    const cost = costOf({ inputTokens: 1000, cachedInputTokens: 400, outputTokens: 500, reasoningTokens: 300 }, t.lookup('p', 'm'));
    expect(cost).toBeCloseTo((600 * 2 + 400 * 1 + 500 * 4) / 1e6, 12);
    expect(formatCost(0)).toBe('0.0000000000');
    expect(formatCost(cost)).toBe('0.0036000000');
  });
});
