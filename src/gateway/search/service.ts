/**
 * Web search: one provider call per distinct query in flight (identical concurrent queries share it),
 * answers cached for the configured TTL (bounded, oldest dropped first), and per-provider analytics.
 */
import type { Egress } from '../../egress/index.js';
import { ApiFailure } from '../providers/api-call.js';
import type { SearchConfig, SearchProviderConfig } from './config.js';
import { runSearch, type SearchQuery, type SearchResult } from './providers.js';
import { GatewayError, secondsUntil } from '../errors.js';

const MAX_CACHE_ENTRIES = 1000;
const LATENCY_SAMPLES = 256;

interface ProviderStats {
  requests: number;
  upstreamCalls: number;
  cacheHits: number;
  coalesced: number;
  errors: number;
  latencies: number[];
  totalLatencyMs: number;
}

export interface SearchAnswer {
  results: SearchResult[];
  cached: boolean;
  coalesced: boolean;
}

export class SearchService {
  private readonly cache = new Map<string, { expires: number; results: SearchResult[] }>();
  private readonly inFlight = new Map<string, Promise<SearchResult[]>>();
  private readonly stats = new Map<string, ProviderStats>();
  private hits = 0;
  private misses = 0;

  constructor(
    private readonly egress: Egress,
    private readonly now: () => number,
  ) {}

  private statsOf(id: string): ProviderStats {
    let s = this.stats.get(id);
    if (!s) this.stats.set(id, (s = { requests: 0, upstreamCalls: 0, cacheHits: 0, coalesced: 0, errors: 0, latencies: [], totalLatencyMs: 0 }));
    return s;
  }

  async search(cfg: SearchConfig, p: SearchProviderConfig, q: SearchQuery): Promise<SearchAnswer> {
    const key = JSON.stringify([p.id, q.query.trim().replace(/\s+/g, ' '), q.maxResults, q.searchType, q.timeRange ?? '', q.safeSearch]);
    const s = this.statsOf(p.id);
    s.requests++;
    const hit = this.cache.get(key);
    if (hit && hit.expires > this.now()) {
      s.cacheHits++;
      this.hits++;
      return { results: hit.results, cached: true, coalesced: false };
    }
    if (hit) this.cache.delete(key);
    this.misses++;
    const shared = this.inFlight.get(key);
    if (shared) {
      s.coalesced++;
      return { results: await shared, cached: false, coalesced: true };
    }
    const started = performance.now();
    s.upstreamCalls++;
    const call = runSearch(p, q, this.egress, this.now()).then(
      (results) => {
        const ms = performance.now() - started;
        s.totalLatencyMs += ms;
        s.latencies.push(ms);
        if (s.latencies.length > LATENCY_SAMPLES) s.latencies.shift();
        if (cfg.cacheTtlMs > 0) {
          if (this.cache.size >= MAX_CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
          this.cache.set(key, { expires: this.now() + cfg.cacheTtlMs, results });
        }
        return results;
      },
      (e: unknown) => {
        s.errors++;
        throw searchError(p, e);
      },
    );
    this.inFlight.set(key, call);
    try {
      return { results: await call, cached: false, coalesced: false };
    } finally {
      this.inFlight.delete(key);
    }
  }

  analytics(cfg: SearchConfig): Record<string, unknown> {
    const providers: Record<string, unknown> = {};
    for (const p of cfg.providers) {
      const s = this.statsOf(p.id);
      const sorted = [...s.latencies].sort((a, b) => a - b);
      const successes = s.upstreamCalls - s.errors;
      providers[p.id] = {
        kind: p.kind,
        requests: s.requests,
        upstream_calls: s.upstreamCalls,
        cache_hits: s.cacheHits,
        coalesced: s.coalesced,
        errors: s.errors,
        avg_latency_ms: successes > 0 ? Number((s.totalLatencyMs / successes).toFixed(1)) : null,
        p95_latency_ms: sorted.length > 0 ? Number(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))]!.toFixed(1)) : null,
      };
    }
    const total = this.hits + this.misses;
    return { providers, cache: { entries: this.cache.size, ttl_seconds: cfg.cacheTtlMs / 1000, hits: this.hits, misses: this.misses, hit_rate: total > 0 ? Number((this.hits / total).toFixed(4)) : 0 } };
  }
}

function searchError(p: SearchProviderConfig, e: unknown): GatewayError {
  if (!(e instanceof ApiFailure)) return new GatewayError('remote', `search provider ${p.id} failed: ${(e as Error).message}`, { code: 'search_failed' });
  if (e.status === 429) {
    return new GatewayError('limited', `search provider ${p.id} is rate-limited: ${e.message}`, { code: 'rate_limited', retryAfterS: secondsUntil(e.retryAfterMs ?? 60_000, 0) });
  }
  return new GatewayError('remote', e.status === 0 ? e.message : `search provider ${p.id} answered HTTP ${e.status}: ${e.message}`, { code: 'search_failed' });
}
