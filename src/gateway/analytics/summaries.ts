/**
 * Pure summaries over request-log rows for the analytics routes.
 *
 * Cache health (`/api/usage/cache-health`) is about the providers' prompt caches: how much each call
 * read from the cache (`tokens_cached`) versus wrote to it (`tokens_cache_write`). Every successful
 * call is one of: warm (read at least as much as it wrote), cold (wrote without reading: a new
 * prefix), rewrite (read, but wrote more: the prefix moved), uncached (neither). The verdict looks
 * only at calls that touched the cache, by their warm share:
 *   no-data   no call read or wrote the cache in the range;
 *   healthy   warm share ≥ 60 %;
 *   degraded  warm share ≥ 30 %;
 *   thrash    below 30 %: the gateway pays for cache writes that are hardly ever read back.
 * A write counts as heavy when it exceeds 10 × the median write (at least 1024 tokens, the smallest
 * write a provider bills); `heavyWriteTokenShare` says how much of all writing those few calls did.
 */
import type { PriceTable } from '../pricing.js';
import type { CacheRow, LatencyRow, RoutingRow } from '../request-log/analytics.js';

/** Nearest-rank percentile of an ascending array. */
export function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const r1 = (n: number) => Math.round(n * 10) / 10;
const r4 = (n: number) => Number(n.toFixed(4));

export interface LatencyEntry {
  provider: string;
  model: string;
  count: number;
  successes: number;
  successRate: number;
  avgMs: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  avgTtfbMs: number | null;
}

/** Latency percentiles of successful calls and the success rate, per provider and model. */
export function latencyStats(rows: LatencyRow[], minSamples: number): LatencyEntry[] {
  const groups = new Map<string, { provider: string; model: string; lat: number[]; ttfb: number[]; count: number }>();
  for (const r of rows) {
    const key = `${r.provider}/${r.model}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { provider: r.provider, model: r.model, lat: [], ttfb: [], count: 0 }));
    g.count++;
    if (r.status < 400) {
      g.lat.push(r.latency_ms);
      if (r.ttfb_ms !== null) g.ttfb.push(r.ttfb_ms);
    }
  }
  const out: LatencyEntry[] = [];
  for (const g of groups.values()) {
    if (g.count < minSamples) continue;
    const s = [...g.lat].sort((a, b) => a - b);
    const sum = s.reduce((a, b) => a + b, 0);
    out.push({
      provider: g.provider,
      model: g.model,
      count: g.count,
      successes: s.length,
      successRate: r4(s.length / g.count),
      avgMs: s.length ? r1(sum / s.length) : 0,
      p50Ms: pct(s, 50),
      p95Ms: pct(s, 95),
      p99Ms: pct(s, 99),
      avgTtfbMs: g.ttfb.length ? r1(g.ttfb.reduce((a, b) => a + b, 0) / g.ttfb.length) : null,
    });
  }
  return out.sort((a, b) => b.count - a.count || a.provider.localeCompare(b.provider) || a.model.localeCompare(b.model));
}

/** Per provider `{p50, p95, p99, count}` of successful calls (GET /api/telemetry/summary). */
export function providerLatency(rows: LatencyRow[]): Record<string, { p50: number; p95: number; p99: number; count: number }> {
  const by = new Map<string, number[]>();
  for (const r of rows) {
    if (r.status >= 400) continue;
    let l = by.get(r.provider);
    if (!l) by.set(r.provider, (l = []));
    l.push(r.latency_ms);
  }
  const out: Record<string, { p50: number; p95: number; p99: number; count: number }> = {};
  for (const [p, l] of [...by].sort((a, b) => a[0].localeCompare(b[0]))) {
    l.sort((a, b) => a - b);
    out[p] = { p50: pct(l, 50), p95: pct(l, 95), p99: pct(l, 99), count: l.length };
  }
  return out;
}

export type CacheVerdict = 'healthy' | 'degraded' | 'thrash' | 'no-data';

const MIN_MEANINGFUL_WRITE = 1024;
const HEAVY_FACTOR = 10;

export function cacheHealth(rows: CacheRow[]): Record<string, unknown> {
  let read = 0;
  let write = 0;
  let warm = 0;
  let cold = 0;
  let rewrite = 0;
  let uncached = 0;
  const writes: number[] = [];
  const perModel = new Map<string, { calls: number; read: number; write: number; heavy: number; warm: number; touching: number }>();
  const modelOf = (r: CacheRow) => r.requested_model || (r.provider && r.model ? `${r.provider}/${r.model}` : 'unknown');
  for (const r of rows) {
    const rd = Math.max(0, r.tokens_cached || 0);
    const wr = Math.max(0, r.tokens_cache_write || 0);
    read += rd;
    write += wr;
    writes.push(wr);
    const m = perModel.get(modelOf(r)) ?? { calls: 0, read: 0, write: 0, heavy: 0, warm: 0, touching: 0 };
    perModel.set(modelOf(r), m);
    m.calls++;
    m.read += rd;
    m.write += wr;
    if (rd === 0 && wr === 0) uncached++;
    else {
      m.touching++;
      if (rd === 0) cold++;
      else if (rd >= wr) {
        warm++;
        m.warm++;
      } else rewrite++;
    }
  }
  const sorted = [...writes].sort((a, b) => a - b);
  const threshold = Math.max(pct(sorted, 50) * HEAVY_FACTOR, MIN_MEANINGFUL_WRITE);
  let heavyCalls = 0;
  let heavyTokens = 0;
  for (const r of rows) {
    const wr = Math.max(0, r.tokens_cache_write || 0);
    if (wr <= threshold) continue;
    heavyCalls++;
    heavyTokens += wr;
    perModel.get(modelOf(r))!.heavy++;
  }
  const touching = warm + cold + rewrite;
  const verdictOf = (w: number, t: number): CacheVerdict => (t === 0 ? 'no-data' : w / t >= 0.6 ? 'healthy' : w / t >= 0.3 ? 'degraded' : 'thrash');
  const ratio = (w: number, rd: number) => r4(w / Math.max(rd, 1));
  return {
    totalCalls: rows.length,
    cacheReadTokens: read,
    cacheWriteTokens: write,
    writeReadRatio: ratio(write, read),
    warmCalls: warm,
    coldCalls: cold,
    rewriteCalls: rewrite,
    uncachedCalls: uncached,
    warmShare: touching > 0 ? r4(warm / touching) : null,
    writeSize: { p50: pct(sorted, 50), p90: pct(sorted, 90), p99: pct(sorted, 99), max: sorted[sorted.length - 1] ?? 0 },
    heavyWrite: {
      threshold,
      calls: heavyCalls,
      callShare: rows.length ? r4(heavyCalls / rows.length) : 0,
      tokenShare: write > 0 ? r4(heavyTokens / write) : 0,
    },
    verdict: verdictOf(warm, touching),
    byModel: [...perModel.entries()]
      .map(([model, m]) => ({
        model,
        calls: m.calls,
        cacheReadTokens: m.read,
        cacheWriteTokens: m.write,
        writeReadRatio: ratio(m.write, m.read),
        heavyWriteCalls: m.heavy,
        verdict: verdictOf(m.warm, m.touching),
      }))
      .sort((a, b) => b.writeReadRatio - a.writeReadRatio || b.cacheWriteTokens - a.cacheWriteTokens),
  };
}

/**
 * Price tier of a model by its input price (USD per 1M tokens): free (unpriced or 0), standard
 * (< 1), pro (< 5), ultra (≥ 5).
 */
export function tierOf(pricing: PriceTable, provider: string, model: string): 'free' | 'standard' | 'pro' | 'ultra' {
  const p = pricing.lookup(provider, model);
  const input = p?.input ?? 0;
  if (!(input > 0)) return 'free';
  if (input < 1) return 'standard';
  if (input < 5) return 'pro';
  return 'ultra';
}

export function autoRouting(rows: RoutingRow[], pricing: PriceTable, window: string): Record<string, unknown> {
  const strategyBreakdown: Record<string, number> = {};
  const tierBreakdown: Record<string, number> = { ultra: 0, pro: 0, standard: 0, free: 0 };
  const providers = new Map<string, { calls: number; latency: number }>();
  for (const r of rows) {
    const s = r.strategy ?? 'single';
    strategyBreakdown[s] = (strategyBreakdown[s] ?? 0) + 1;
    tierBreakdown[tierOf(pricing, r.provider, r.model)]!++;
    const p = providers.get(r.provider) ?? { calls: 0, latency: 0 };
    p.calls++;
    p.latency += r.latency_ms;
    providers.set(r.provider, p);
  }
  return {
    window,
    totalCalls: rows.length,
    strategyBreakdown,
    tierBreakdown,
    topProviders: [...providers.entries()]
      .map(([provider, p]) => ({ provider, calls: p.calls, avgLatencyMs: Math.round(p.latency / p.calls) }))
      .sort((a, b) => b.calls - a.calls || a.provider.localeCompare(b.provider))
      .slice(0, 10),
  };
}

/**
 * Provider diversity of successful upstream traffic: Shannon entropy (bits) of the provider shares,
 * against the maximum possible with the enabled providers (log2 of their count).
 */
export function diversity(counts: { provider: string; n: number }[], enabledProviders: number, window: string): Record<string, unknown> {
  const total = counts.reduce((a, c) => a + c.n, 0);
  const providerUsage: Record<string, number> = {};
  let entropy = 0;
  for (const c of counts) {
    const p = c.n / total;
    providerUsage[c.provider] = r4(p);
    if (p > 0) entropy -= p * Math.log2(p);
  }
  const n = Math.max(enabledProviders, counts.length);
  const maxEntropy = n > 1 ? Math.log2(n) : 0;
  const warnings: string[] = [];
  if (total === 0) warnings.push(`no successful upstream traffic in the last ${window}`);
  if (enabledProviders <= 1) warnings.push('only one provider is enabled: there is no fallback to another provider');
  const top = counts[0];
  if (top && total > 0 && counts.length >= 1 && enabledProviders > 1 && top.n / total >= 0.8) {
    warnings.push(`provider ${top.provider} carries ${Math.round((top.n / total) * 100)}% of the traffic`);
  }
  if (total > 0 && enabledProviders > counts.length) warnings.push(`${enabledProviders - counts.length} enabled provider(s) served no request in the last ${window}`);
  return {
    window,
    totalCalls: total,
    shannonEntropy: r4(entropy),
    maxEntropy: r4(maxEntropy),
    diversityRatio: maxEntropy > 0 ? r4(entropy / maxEntropy) : 0,
    providerUsage,
    warnings,
  };
}
