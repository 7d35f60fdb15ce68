/**
 * Reads of the request log as the management, analytics and limits code makes them, written once
 * on the kit's query layer (store/sql.ts): the daemon's own SQLite file or the database several
 * daemons share (shared-log.ts, which writes there behind the requests and waits for its queue
 * before reading). Every analytics read is bounded by a time window and a row cap.
 */
import type { Sql } from '../../store/sql.js';
import { MODALITY_SQL } from '../modality.js';
import type { CacheRow, LatencyRow, RoutingRow } from './analytics.js';
import { toLogRow, type HistoryBucket, type HistoryQuery, type LogQuery, type RequestLogRow } from './store.js';

export type { HistoryQuery };

export interface AccountTotals {
  requests: number;
  errors: number;
  tokensIn: number;
  tokensOut: number;
  cost: number;
  lastUsedAt: number | null;
}

export interface ComboTargetCount {
  combo: string;
  target: string;
  requests: number;
  errors: number;
  avgLatency: number;
}

export interface RequestLogReader {
  requestLogs(q: LogQuery): Promise<{ total: number; rows: RequestLogRow[] }>;
  history(q: HistoryQuery): Promise<HistoryBucket[]>;
  accountUsage(provider: string, account: string, since: number): Promise<AccountTotals>;
  /** Delete rows from before `before` (and this daemon's compression log). */
  purge(before: number): Promise<{ requestLogs: number; compressionLogs: number }>;
  comboTargetCounts(since: number): Promise<ComboTargetCount[]>;
  latencyRows(q: { since: number; provider?: string; model?: string; maxRows: number }): Promise<LatencyRow[]>;
  cacheRows(q: { since: number; model?: string; maxRows: number }): Promise<CacheRow[]>;
  routingRows(since: number, maxRows: number): Promise<RoutingRow[]>;
  providerCounts(since: number): Promise<{ provider: string; n: number }[]>;
}

/** Rows served by an upstream call (cache hits and idempotent replays are not upstream traffic). */
const UPSTREAM = "(cache IS NULL OR cache = 'miss')";
/** Requests answered with an error, counted by SUM. */
const ERRORS = 'SUM(CASE WHEN status >= 400 THEN 1 ELSE 0 END)';

/** What a key spent in [since, until): `c`, NULL for nothing (limits/store.ts reads it synchronously from the SQLite file). */
export const SPEND_SQL = `SELECT SUM(cost) AS c FROM request_log WHERE api_key_id = ? AND ts >= ? AND ts < ? AND ${UPSTREAM}`;

export type TokenScope = 'model' | 'provider' | 'global';

/** The tokens (in + out) a key used in [since, until) within a limit's scope: `t`, NULL for none. */
export function tokensQuery(apiKeyId: string, scope: TokenScope, value: string | undefined, since: number, until: number): { sql: string; args: unknown[] } {
  let sql = `SELECT SUM(tokens_in + tokens_out) AS t FROM request_log WHERE api_key_id = ? AND ts >= ? AND ts < ? AND ${UPSTREAM}`;
  const args: unknown[] = [apiKeyId, since, until];
  if (scope === 'provider') (sql += ' AND provider = ?'), args.push(value);
  else if (scope === 'model') (sql += " AND (requested_model = ? OR provider || '/' || model = ? OR model = ?)"), args.push(value, value, value);
  return { sql, args };
}

/** Row ids read per slice by the start-up counts of the request log (a few milliseconds each on SQLite). */
const COUNT_SLICE_ROWS = 8192;

export class RequestLogStore implements RequestLogReader {
  constructor(
    protected readonly sql: Sql,
    /** This daemon's compression log purge (that log is always in the daemon's own file). */
    private readonly purgeLocal: (before: number) => number,
  ) {}

  /** Resolves when what this daemon wrote is readable (the shared log's queue is written). */
  protected async caughtUp(): Promise<void> {}

  private filter(q: Omit<LogQuery, 'limit' | 'offset'>): { where: string; args: unknown[] } {
    const clauses: string[] = [];
    const args: unknown[] = [];
    if (q.since !== undefined) clauses.push('ts >= ?'), args.push(q.since);
    if (q.until !== undefined) clauses.push('ts < ?'), args.push(q.until);
    if (q.model !== undefined) clauses.push('(model = ? OR requested_model = ?)'), args.push(q.model, q.model);
    if (q.provider !== undefined) clauses.push('provider = ?'), args.push(q.provider);
    if (q.combo !== undefined) clauses.push('combo = ?'), args.push(q.combo);
    if (q.apiKeyId !== undefined) clauses.push('api_key_id = ?'), args.push(q.apiKeyId);
    if (q.status === 'ok') clauses.push('status < 400');
    if (q.status === 'error') clauses.push('status >= 400');
    return { where: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', args };
  }

  async requestLogs(q: LogQuery): Promise<{ total: number; rows: RequestLogRow[] }> {
    await this.caughtUp();
    const { where, args } = this.filter(q);
    const total = (await this.sql.get<{ n: number }>(`SELECT COUNT(*) AS n FROM request_log ${where}`, ...args))!.n;
    const rows = await this.sql.all<Record<string, unknown>>(`SELECT * FROM request_log ${where} ORDER BY id DESC LIMIT ? OFFSET ?`, ...args, q.limit, q.offset);
    return { total, rows: rows.map(toLogRow) };
  }

  /** Aggregates per period (`day` or `hour`, UTC), optionally grouped by provider, model, combo, key or modality. */
  async history(q: HistoryQuery): Promise<HistoryBucket[]> {
    await this.caughtUp();
    const { where, args } = this.filter({ since: q.since, ...(q.until !== undefined ? { until: q.until } : {}) });
    const hour = q.period === 'hour';
    const period =
      this.sql.dialect === 'postgres'
        ? `to_char(to_timestamp(ts / 1000.0) AT TIME ZONE 'UTC', ${hour ? `'YYYY-MM-DD"T"HH24":00:00Z"'` : `'YYYY-MM-DD'`})`
        : `strftime('${hour ? '%Y-%m-%dT%H:00:00Z' : '%Y-%m-%d'}', ts / 1000, 'unixepoch')`;
    const group = q.groupBy ? ', grp' : '';
    const rows = await this.sql.all<{
      period: string;
      grp?: string | null;
      requests: number;
      errors: number;
      tokens_in: number;
      tokens_out: number;
      cost: number;
      avg_latency: number;
      cache_hits: number | null;
      cost_saved: number | null;
    }>(
      `SELECT ${period} AS period${q.groupBy ? `, ${q.groupBy === 'modality' ? MODALITY_SQL : q.groupBy} AS grp` : ''},
         COUNT(*) AS requests, ${ERRORS} AS errors, SUM(tokens_in) AS tokens_in, SUM(tokens_out) AS tokens_out,
         SUM(cost) AS cost, CAST(AVG(latency_ms) AS DOUBLE PRECISION) AS avg_latency,
         SUM(CASE WHEN cache IN ('hit', 'replay') THEN 1 ELSE 0 END) AS cache_hits, SUM(cost_saved) AS cost_saved
       FROM request_log ${where} GROUP BY period${group} ORDER BY period${group}`,
      ...args,
    );
    return rows.map((r) => ({
      period: r.period,
      ...(q.groupBy ? { group: r.grp ?? '' } : {}),
      requests: r.requests,
      errors: r.errors ?? 0,
      tokensIn: r.tokens_in ?? 0,
      tokensOut: r.tokens_out ?? 0,
      cost: r.cost ?? 0,
      avgLatencyMs: Math.round(r.avg_latency ?? 0),
      cacheHits: Number(r.cache_hits ?? 0),
      costSaved: r.cost_saved ?? 0,
    }));
  }

  /** Totals of one provider account (a connection) since `since`. */
  async accountUsage(provider: string, account: string, since: number): Promise<AccountTotals> {
    await this.caughtUp();
    const r = (await this.sql.get<{ requests: number; errors: number | null; tokens_in: number | null; tokens_out: number | null; cost: number | null; last: number | null }>(
      `SELECT COUNT(*) AS requests, ${ERRORS} AS errors, SUM(tokens_in) AS tokens_in, SUM(tokens_out) AS tokens_out, SUM(cost) AS cost, MAX(ts) AS last
       FROM request_log WHERE provider = ? AND account = ? AND ts >= ?`,
      provider,
      account,
      since,
    ))!;
    return { requests: r.requests, errors: r.errors ?? 0, tokensIn: r.tokens_in ?? 0, tokensOut: r.tokens_out ?? 0, cost: r.cost ?? 0, lastUsedAt: r.last };
  }

  /** Delete request-log rows (and the compression log) from before `before`; how many went. */
  async purge(before: number): Promise<{ requestLogs: number; compressionLogs: number }> {
    await this.caughtUp();
    return { requestLogs: await this.sql.run('DELETE FROM request_log WHERE ts < ?', before), compressionLogs: this.purgeLocal(before) };
  }

  /**
   * Per combo and target counts since `since` (seeds the in-memory combo metrics at start). Read in
   * slices of COUNT_SLICE_ROWS row ids, giving the event loop back between them: one GROUP BY over a
   * week of a busy gateway's log (250,000 rows) held the loop 360 ms at every gateway start, a restore
   * or an import's included. The same numbers as one GROUP BY (the average from sum and count).
   */
  async comboTargetCounts(since: number): Promise<ComboTargetCount[]> {
    const bounds = (await this.sql.get<{ lo: number | null; hi: number | null }>('SELECT MIN(id) AS lo, MAX(id) AS hi FROM request_log'))!;
    if (bounds.lo === null || bounds.hi === null) return [];
    type Part = { combo: string; target: string; requests: number; errors: number; latencySum: number | null; latencies: number };
    const sums = new Map<string, Part>();
    for (let from = bounds.lo; from <= bounds.hi; from += COUNT_SLICE_ROWS) {
      const slice = await this.sql.all<Part>(
        `SELECT combo, provider || '/' || model AS target, COUNT(*) AS requests, ${ERRORS} AS errors, SUM(latency_ms) AS "latencySum", COUNT(latency_ms) AS latencies
         FROM request_log WHERE id >= ? AND id < ? AND combo IS NOT NULL AND provider IS NOT NULL AND ts >= ? GROUP BY combo, target`,
        from,
        from + COUNT_SLICE_ROWS,
        since,
      );
      for (const r of slice) {
        const key = JSON.stringify([r.combo, r.target]);
        const s = sums.get(key);
        if (!s) sums.set(key, { ...r });
        else {
          s.requests += r.requests;
          s.errors += r.errors;
          s.latencySum = s.latencySum === null ? r.latencySum : s.latencySum + (r.latencySum ?? 0);
          s.latencies += r.latencies;
        }
      }
      if (from + COUNT_SLICE_ROWS <= bounds.hi) await new Promise((resolve) => setImmediate(resolve));
    }
    return [...sums.values()]
      .sort((a, b) => (a.combo < b.combo ? -1 : a.combo > b.combo ? 1 : a.target < b.target ? -1 : a.target > b.target ? 1 : 0))
      .map((s) => ({ combo: s.combo, target: s.target, requests: s.requests, errors: s.errors, avgLatency: (s.latencies > 0 ? s.latencySum! / s.latencies : null) as number }));
  }

  async latencyRows(q: { since: number; provider?: string; model?: string; maxRows: number }): Promise<LatencyRow[]> {
    await this.caughtUp();
    let sql = `SELECT provider, model, status, latency_ms, ttfb_ms FROM request_log WHERE ts >= ? AND provider IS NOT NULL AND ${UPSTREAM}`;
    const args: unknown[] = [q.since];
    if (q.provider !== undefined) (sql += ' AND provider = ?'), args.push(q.provider);
    if (q.model !== undefined) (sql += " AND (model = ? OR provider || '/' || model = ?)"), args.push(q.model, q.model);
    return this.sql.all<LatencyRow>(`${sql} ORDER BY id DESC LIMIT ?`, ...args, q.maxRows);
  }

  /** Successful upstream calls (only those reached the provider's prompt cache). */
  async cacheRows(q: { since: number; model?: string; maxRows: number }): Promise<CacheRow[]> {
    await this.caughtUp();
    let sql = `SELECT requested_model, provider, model, tokens_cached, tokens_cache_write FROM request_log WHERE ts >= ? AND status = 200 AND ${UPSTREAM}`;
    const args: unknown[] = [q.since];
    if (q.model !== undefined) (sql += " AND (model = ? OR requested_model = ? OR provider || '/' || model = ?)"), args.push(q.model, q.model, q.model);
    return this.sql.all<CacheRow>(`${sql} ORDER BY id DESC LIMIT ?`, ...args, q.maxRows);
  }

  async routingRows(since: number, maxRows: number): Promise<RoutingRow[]> {
    await this.caughtUp();
    return this.sql.all<RoutingRow>(`SELECT strategy, provider, model, latency_ms, status FROM request_log WHERE ts >= ? AND provider IS NOT NULL AND ${UPSTREAM} ORDER BY id DESC LIMIT ?`, since, maxRows);
  }

  /** Successful upstream calls per provider. */
  async providerCounts(since: number): Promise<{ provider: string; n: number }[]> {
    await this.caughtUp();
    return this.sql.all(`SELECT provider, COUNT(*) AS n FROM request_log WHERE ts >= ? AND provider IS NOT NULL AND status < 400 AND ${UPSTREAM} GROUP BY provider ORDER BY n DESC`, since);
  }

  /** Dollars a key spent in [since, until), for a budget window seen for the first time. */
  async spend(apiKeyId: string, since: number, until: number): Promise<number> {
    await this.caughtUp();
    return (await this.sql.get<{ c: number | null }>(SPEND_SQL, apiKeyId, since, until))?.c ?? 0;
  }

  /** Tokens a key used in [since, until) within a limit's scope. */
  async tokens(apiKeyId: string, scope: TokenScope, value: string | undefined, since: number, until: number): Promise<number> {
    await this.caughtUp();
    const q = tokensQuery(apiKeyId, scope, value, since, until);
    return (await this.sql.get<{ t: number | null }>(q.sql, ...q.args))?.t ?? 0;
  }
}
