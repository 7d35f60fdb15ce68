/**
 * Combo strategies: the order in which a combo's targets are attempted.
 *  priority        configured order
 *  weighted        first target drawn in proportion to weight (uniform when all are 0), the rest by weight
 *  round-robin     per-combo counter: start at counter % n, then the rest in cyclic order
 *  random          uniform shuffle
 *  least-used      fewest recorded requests through this combo first (ties keep configured order)
 *  cost-optimized  cheapest input price first (then output); unpriced targets last
 *  latency         lowest p95 + 1000 ms × recent error rate; targets never tried first, so every
 *                  target gets measured once, and targets that only ever failed last
 *  rules           the targets of the first rule the request meets (prompt size, tools, images, stream,
 *                  API key) first, in the rule's order; then the rest in configured order
 *  sla-aware       targets within the combo's SLA (p95 latency and recent error rate; unmeasured ones
 *                  count as within) first in configured order, then the others by p95
 *  lkgp            last known good provider: the target that last succeeded through this combo first,
 *                  then the rest in configured order
 */
import type { PriceTable } from '../pricing.js';
import type { ComboConfig, Strategy } from '../types.js';
import { DEFAULT_SLA, ruleMatches, type RequestFeatures } from './combo-options.js';
import type { RoutingMetrics } from './metrics.js';
import type { ResolvedTarget } from './resolve.js';

export interface StrategyContext {
  metrics: RoutingMetrics;
  pricing: PriceTable;
  /** Uniform [0, 1) source (injectable for tests). */
  random: () => number;
  /** Round-robin counters by combo name. */
  counters: Map<string, number>;
}

function stableSortBy<T>(items: readonly T[], key: (t: T) => number): T[] {
  return items
    .map((t, i) => ({ t, i, k: key(t) }))
    .sort((a, b) => a.k - b.k || a.i - b.i)
    .map((x) => x.t);
}

export function orderTargets(
  strategy: Strategy | 'single',
  combo: Pick<ComboConfig, 'name' | 'rules' | 'sla'> | undefined,
  targets: readonly ResolvedTarget[],
  sc: StrategyContext,
  /** What the rules strategy looks at (computed only when it is asked for). */
  features?: () => RequestFeatures,
): ResolvedTarget[] {
  const comboName = combo?.name;
  const n = targets.length;
  if (n <= 1) return [...targets];
  switch (strategy) {
    case 'single':
    case 'priority':
      return [...targets];
    case 'weighted': {
      const weights = targets.map((t) => Math.max(0, t.weight));
      const total = weights.reduce((a, b) => a + b, 0);
      let pick = 0;
      if (total <= 0) pick = Math.floor(sc.random() * n);
      else {
        let r = sc.random() * total;
        for (let i = 0; i < n; i++) {
          r -= weights[i]!;
          if (r < 0) {
            pick = i;
            break;
          }
          pick = i;
        }
      }
      const rest = stableSortBy(
        targets.filter((_, i) => i !== pick),
        (t) => -t.weight,
      );
      return [targets[pick]!, ...rest];
    }
    case 'round-robin': {
      const key = comboName ?? '';
      const c = sc.counters.get(key) ?? 0;
      sc.counters.set(key, (c + 1) % 1_000_000_007);
      const start = c % n;
      return [...targets.slice(start), ...targets.slice(0, start)];
    }
    case 'random': {
      const out = [...targets];
      for (let i = out.length - 1; i > 0; i--) {
        const j = Math.floor(sc.random() * (i + 1));
        [out[i], out[j]] = [out[j]!, out[i]!];
      }
      return out;
    }
    case 'least-used':
      return stableSortBy(targets, (t) => (comboName ? (sc.metrics.comboTarget(comboName, t.ref)?.requests ?? 0) : 0));
    case 'cost-optimized':
      return stableSortBy(targets, (t) => {
        const p = sc.pricing.lookup(t.provider.config.id, t.modelId);
        if (!p || (p.input === undefined && p.output === undefined)) return Number.MAX_VALUE;
        // Input price dominates; output breaks ties.
        return (p.input ?? 0) * 1e6 + (p.output ?? 0);
      });
    case 'latency':
      return stableSortBy(targets, (t) => {
        const p95 = sc.metrics.p95(t.ref);
        // Never succeeded: untried goes first (to be measured), only-failing goes last.
        if (p95 === undefined) return sc.metrics.errorRate(t.ref) > 0 ? Number.MAX_VALUE : -1;
        return p95 + 1000 * sc.metrics.errorRate(t.ref);
      });
    case 'rules': {
      const f = combo?.rules?.length && features ? features() : undefined;
      const rule = f ? combo!.rules!.find((r) => ruleMatches(r.when, f)) : undefined;
      if (!rule) return [...targets];
      const rank = (t: ResolvedTarget) => {
        const i = rule.prefer.indexOf(t.ref);
        return i < 0 ? rule.prefer.length : i;
      };
      return stableSortBy(targets, rank);
    }
    case 'sla-aware': {
      const sla = combo?.sla ?? DEFAULT_SLA;
      return stableSortBy(targets, (t) => {
        const p95 = sc.metrics.p95(t.ref);
        if (p95 === undefined) return sc.metrics.errorRate(t.ref) > sla.maxErrorRate ? Number.MAX_VALUE : 0;
        if (p95 <= sla.maxLatencyMs && sc.metrics.errorRate(t.ref) <= sla.maxErrorRate) return 0;
        return 1 + p95;
      });
    }
    case 'lkgp': {
      if (!comboName) return [...targets];
      let best: ResolvedTarget | undefined;
      let at = -1;
      for (const t of targets) {
        const ok = sc.metrics.comboTarget(comboName, t.ref)?.lastSuccessAt ?? -1;
        if (ok > at) (best = t), (at = ok);
      }
      return best ? [best, ...targets.filter((t) => t !== best)] : [...targets];
    }
  }
}
