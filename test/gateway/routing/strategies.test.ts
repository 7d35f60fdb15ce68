/** src/gateway/routing/strategies.ts: the order a combo's targets are tried in. */
import { describe, expect, it } from 'vitest';
import { resolveModel } from '../../../src/gateway/routing/resolve.js';
import { orderTargets, type StrategyContext } from '../../../src/gateway/routing/strategies.js';
import { RoutingMetrics } from '../../../src/gateway/routing/metrics.js';
import { catalog } from './catalog-fixture.js';

describe('strategies', () => {
  const c = catalog();
  const targets = resolveModel(c, 'combo1').targets; // a/m1, a/m1 (alias), b/m1 (weight 3)
  const ctx = (random = () => 0.5): StrategyContext => ({ metrics: new RoutingMetrics(), pricing: c.pricing, random, counters: new Map() });

  it('priority keeps the configured order', () => {
    expect(orderTargets('priority', { name: 'combo1' }, targets, ctx()).map((t) => t.ref)).toEqual(['a/m1', 'a/m1', 'b/m1']);
  });

  it('round-robin rotates the start per combo', () => {
    const sc = ctx();
    const starts = [0, 1, 2, 3].map(() => orderTargets('round-robin', { name: 'combo1' }, targets, sc).map((t) => t.ref).join(','));
    expect(starts).toEqual(['a/m1,a/m1,b/m1', 'a/m1,b/m1,a/m1', 'b/m1,a/m1,a/m1', 'a/m1,a/m1,b/m1']);
  });

  it('weighted draws in proportion to weight, then the rest by weight', () => {
    // total weight 5: [0,1) a, [1,2) a, [2,5) b
    expect(orderTargets('weighted', { name: 'combo1' }, targets, ctx(() => 0.1)).map((t) => t.ref)).toEqual(['a/m1', 'b/m1', 'a/m1']);
    expect(orderTargets('weighted', { name: 'combo1' }, targets, ctx(() => 0.9)).map((t) => t.ref)).toEqual(['b/m1', 'a/m1', 'a/m1']);
  });

  it('random shuffles all targets', () => {
    const seq = [0.1, 0.9];
    let i = 0;
    const out = orderTargets('random', { name: 'combo1' }, targets, ctx(() => seq[i++ % 2]!));
    expect(out).toHaveLength(3);
    expect(out.map((t) => t.ref).sort()).toEqual(['a/m1', 'a/m1', 'b/m1']);
  });

  it('cost-optimized puts the cheapest input first', () => {
    expect(orderTargets('cost-optimized', { name: 'combo1' }, targets, ctx()).map((t) => t.ref)).toEqual(['b/m1', 'a/m1', 'a/m1']);
  });

  it('least-used prefers the target with fewer requests through the combo', () => {
    const sc = ctx();
    sc.metrics.record('a/m1', 'combo1', true, 10, 0);
    expect(orderTargets('least-used', { name: 'combo1' }, targets, sc)[0]!.ref).toBe('b/m1');
  });

  it('latency orders by p95 plus error penalty, unmeasured first', () => {
    const sc = ctx();
    for (let i = 0; i < 20; i++) sc.metrics.record('a/m1', 'combo1', true, 100, 0);
    expect(orderTargets('latency', { name: 'combo1' }, targets, sc)[0]!.ref).toBe('b/m1');
    for (let i = 0; i < 20; i++) sc.metrics.record('b/m1', 'combo1', true, 50, 0);
    expect(orderTargets('latency', { name: 'combo1' }, targets, sc)[0]!.ref).toBe('b/m1');
    for (let i = 0; i < 20; i++) sc.metrics.record('b/m1', 'combo1', false, 5, 0);
    expect(orderTargets('latency', { name: 'combo1' }, targets, sc)[0]!.ref).toBe('a/m1');
  });
});
