/**
 * The request-log rows behind the analytics routes (latency stats, telemetry summary, cache health,
 * auto-routing, diversity), as reader.ts reads them from either database.
 */

export interface LatencyRow {
  provider: string;
  model: string;
  status: number;
  latency_ms: number;
  ttfb_ms: number | null;
}

export interface CacheRow {
  requested_model: string | null;
  provider: string | null;
  model: string | null;
  tokens_cached: number;
  tokens_cache_write: number;
}

export interface RoutingRow {
  strategy: string | null;
  provider: string;
  model: string;
  latency_ms: number;
  status: number;
}
