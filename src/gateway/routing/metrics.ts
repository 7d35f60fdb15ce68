/**
 * In-memory routing statistics: per target (`provider/model`) latency samples and outcome counts for
 * the latency strategy, and per combo and target counts for least-used and /api/combos/metrics.
 * Seeded from the request log at start so least-used survives a restart.
 */

const SAMPLES = 128;

class LatencyWindow {
  private readonly buf = new Float64Array(SAMPLES);
  private n = 0;
  private i = 0;

  add(ms: number): void {
    this.buf[this.i] = ms;
    this.i = (this.i + 1) % SAMPLES;
    if (this.n < SAMPLES) this.n++;
  }

  get count(): number {
    return this.n;
  }

  percentile(p: number): number | undefined {
    if (this.n === 0) return undefined;
    const sorted = Array.from(this.buf.subarray(0, this.n)).sort((a, b) => a - b);
    return sorted[Math.min(this.n - 1, Math.ceil((p / 100) * this.n) - 1)];
  }
}

export interface TargetStats {
  requests: number;
  successes: number;
  failures: number;
  totalLatencyMs: number;
  lastUsedAt?: number;
  /** When an attempt through it last succeeded (the lkgp strategy's pick). */
  lastSuccessAt?: number;
  latency: LatencyWindow;
  /** Recent outcomes (1 = failure) for the error rate the latency strategy adds to p95. */
  recent: number[];
}

function newStats(): TargetStats {
  return { requests: 0, successes: 0, failures: 0, totalLatencyMs: 0, latency: new LatencyWindow(), recent: [] };
}

const RECENT = 50;

function apply(s: TargetStats, ok: boolean, latencyMs: number, now: number): void {
  s.requests++;
  if (ok) {
    s.successes++;
    s.totalLatencyMs += latencyMs;
    s.latency.add(latencyMs);
    s.lastSuccessAt = now;
  } else s.failures++;
  s.lastUsedAt = now;
  s.recent.push(ok ? 0 : 1);
  if (s.recent.length > RECENT) s.recent.shift();
}

export class RoutingMetrics {
  private readonly targets = new Map<string, TargetStats>();
  private readonly combos = new Map<string, Map<string, TargetStats>>();

  private stats(map: Map<string, TargetStats>, key: string): TargetStats {
    let s = map.get(key);
    if (!s) map.set(key, (s = newStats()));
    return s;
  }

  /** One finished upstream attempt. */
  record(target: string, combo: string | undefined, ok: boolean, latencyMs: number, now: number): void {
    apply(this.stats(this.targets, target), ok, latencyMs, now);
    if (combo !== undefined) {
      let m = this.combos.get(combo);
      if (!m) this.combos.set(combo, (m = new Map()));
      apply(this.stats(m, target), ok, latencyMs, now);
    }
  }

  /** Seed per-combo counts from the request log. */
  seed(rows: { combo: string; target: string; requests: number; errors: number; avgLatency: number }[]): void {
    for (const r of rows) {
      let m = this.combos.get(r.combo);
      if (!m) this.combos.set(r.combo, (m = new Map()));
      const s = this.stats(m, r.target);
      s.requests += r.requests;
      s.failures += r.errors;
      s.successes += r.requests - r.errors;
      s.totalLatencyMs += (r.avgLatency ?? 0) * (r.requests - r.errors);
    }
  }

  target(ref: string): TargetStats | undefined {
    return this.targets.get(ref);
  }

  comboTarget(combo: string, ref: string): TargetStats | undefined {
    return this.combos.get(combo)?.get(ref);
  }

  /** p95 latency in ms (undefined until a success was seen). */
  p95(ref: string): number | undefined {
    return this.targets.get(ref)?.latency.percentile(95);
  }

  errorRate(ref: string): number {
    const r = this.targets.get(ref)?.recent;
    if (!r || r.length === 0) return 0;
    let f = 0;
    for (const x of r) f += x;
    return f / r.length;
  }

  comboNames(): string[] {
    return [...this.combos.keys()];
  }

  comboTargets(combo: string): [string, TargetStats][] {
    return [...(this.combos.get(combo)?.entries() ?? [])];
  }

  /** Summary of one stats record for the API. */
  static view(s: TargetStats | undefined): Record<string, unknown> {
    if (!s) return { requests: 0, successes: 0, failures: 0, successRate: null, avgLatencyMs: null, p50LatencyMs: null, p95LatencyMs: null };
    return {
      requests: s.requests,
      successes: s.successes,
      failures: s.failures,
      successRate: s.requests > 0 ? Number((s.successes / s.requests).toFixed(4)) : null,
      avgLatencyMs: s.successes > 0 ? Math.round(s.totalLatencyMs / s.successes) : null,
      p50LatencyMs: s.latency.percentile(50) ?? null,
      p95LatencyMs: s.latency.percentile(95) ?? null,
      ...(s.lastUsedAt !== undefined ? { lastUsedAt: new Date(s.lastUsedAt).toISOString() } : {}),
    };
  }
}
