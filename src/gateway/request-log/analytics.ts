/**
 * Request-log reads behind the analytics routes, in the SQLite file (latency stats, telemetry
 * summary, cache health, auto-routing, diversity); pg-store.ts answers the same reads from the
 * shared database. Every read is bounded by a time window and a row cap.
 */
import type { Store } from '../../store/index.js';

/** Rows served by an upstream call (cache hits and idempotent replays are not upstream traffic). */
const UPSTREAM = "(cache IS NULL OR cache = 'miss')";

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

export class AnalyticsStore {
  constructor(private readonly store: Store) {}

  latencyRows(q: { since: number; provider?: string; model?: string; maxRows: number }): LatencyRow[] {
    let sql = `SELECT provider, model, status, latency_ms, ttfb_ms FROM request_log WHERE ts >= ? AND provider IS NOT NULL AND ${UPSTREAM}`;
    const args: unknown[] = [q.since];
    if (q.provider !== undefined) sql += ' AND provider = ?', args.push(q.provider);
    if (q.model !== undefined) sql += " AND (model = ? OR provider || '/' || model = ?)", args.push(q.model, q.model);
    sql += ' ORDER BY id DESC LIMIT ?';
    args.push(q.maxRows);
    return this.store.prepare(sql).all(...args) as LatencyRow[];
  }

  /** Successful upstream calls (only those reached the provider's prompt cache). */
  cacheRows(q: { since: number; model?: string; maxRows: number }): CacheRow[] {
    let sql = `SELECT requested_model, provider, model, tokens_cached, tokens_cache_write FROM request_log WHERE ts >= ? AND status = 200 AND ${UPSTREAM}`;
    const args: unknown[] = [q.since];
    if (q.model !== undefined) sql += " AND (model = ? OR requested_model = ? OR provider || '/' || model = ?)", args.push(q.model, q.model, q.model);
    sql += ' ORDER BY id DESC LIMIT ?';
    args.push(q.maxRows);
    return this.store.prepare(sql).all(...args) as CacheRow[];
  }

  routingRows(since: number, maxRows: number): RoutingRow[] {
    return this.store
      .prepare(`SELECT strategy, provider, model, latency_ms, status FROM request_log WHERE ts >= ? AND provider IS NOT NULL AND ${UPSTREAM} ORDER BY id DESC LIMIT ?`)
      .all(since, maxRows) as RoutingRow[];
  }

  /** Successful upstream calls per provider. */
  providerCounts(since: number): { provider: string; n: number }[] {
    return this.store
      .prepare(`SELECT provider, COUNT(*) AS n FROM request_log WHERE ts >= ? AND provider IS NOT NULL AND status < 400 AND ${UPSTREAM} GROUP BY provider ORDER BY n DESC`)
      .all(since) as { provider: string; n: number }[];
  }
}
