/**
 * The request log in the database several daemons share: every daemon appends what it served, and
 * usage, history and analytics read the cluster's traffic whichever daemon answers. Rows are
 * written behind the request (batched, one INSERT … SELECT FROM unnest per batch), as the SQLite
 * log is: a request's row is telemetry, not something its answer acknowledged. A batch the server
 * refuses is kept and tried again every second until the server takes it (after an outage every
 * queued row is written); beyond MAX_QUEUED rows waiting, the oldest are dropped, counted
 * (`dropped`, ctl_gateway_request_log_dropped_total) and logged. Reads first wait for what this
 * daemon has queued, so a request it finished is visible.
 */
import type { Logger } from 'pino';
import type { SharedPostgres } from '../../store/postgres.js';
import { MODALITY_SQL } from '../modality.js';
import type { AccountTotals, ComboTargetCount, HistoryQuery, RequestLogReader } from './reader.js';
import type { CacheRow, LatencyRow, RoutingRow } from './analytics.js';
import { LOG_COLUMNS, pushLogValues, toLogRow, type HistoryBucket, type LogQuery, type RequestLogEntry, type RequestLogRow } from './store.js';
import type { SchemaStep } from '../schema.js';

export const REQUEST_LOG_MIGRATION = `
  CREATE TABLE gw_request_log (
    id BIGSERIAL PRIMARY KEY,
    request_id TEXT NOT NULL,
    ts BIGINT NOT NULL,
    endpoint TEXT NOT NULL,
    api_key_id TEXT,
    session_id TEXT,
    requested_model TEXT,
    combo TEXT,
    strategy TEXT,
    provider TEXT,
    model TEXT,
    account TEXT,
    status INTEGER NOT NULL,
    error TEXT,
    stream INTEGER NOT NULL DEFAULT 0,
    tokens_in INTEGER NOT NULL DEFAULT 0,
    tokens_out INTEGER NOT NULL DEFAULT 0,
    tokens_cached INTEGER NOT NULL DEFAULT 0,
    tokens_reasoning INTEGER NOT NULL DEFAULT 0,
    cost DOUBLE PRECISION NOT NULL DEFAULT 0,
    latency_ms INTEGER NOT NULL DEFAULT 0,
    ttfb_ms INTEGER,
    fallback_attempts INTEGER NOT NULL DEFAULT 0,
    attempts TEXT NOT NULL DEFAULT '[]',
    client_aborted INTEGER NOT NULL DEFAULT 0,
    cache TEXT,
    cost_saved DOUBLE PRECISION NOT NULL DEFAULT 0,
    tokens_cache_write INTEGER NOT NULL DEFAULT 0,
    guardrails TEXT
  );
  CREATE INDEX gw_request_log_ts ON gw_request_log (ts);
  CREATE INDEX gw_request_log_key_ts ON gw_request_log (api_key_id, ts);
  CREATE INDEX gw_request_log_combo ON gw_request_log (combo, ts);
`;

/** The request log: this capability's share of the gateway's PostgreSQL migrations (placed by version in gateway/schema.ts). */
export const REQUEST_LOG_PG_SCHEMA: SchemaStep[] = [{ version: 2, up: REQUEST_LOG_MIGRATION }];

/** PostgreSQL array types of LOG_COLUMNS, in order. */
const TYPES = [
  'text', 'bigint', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'int', 'text', 'int',
  'int', 'int', 'int', 'int', 'float8', 'int', 'int', 'int', 'text', 'int', 'text', 'float8', 'int', 'text',
];
const COLUMNS = LOG_COLUMNS.split(',').map((c) => c.trim());
const INSERT = `INSERT INTO gw_request_log (${COLUMNS.join(', ')}) SELECT * FROM unnest(${TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`;
const UPSTREAM = "(cache IS NULL OR cache = 'miss')";
const MAX_QUEUED = 100_000;

/** A batch the server refused is tried again this much later. */
const RETRY_MS = 1000;

export class PgRequestLog implements RequestLogReader {
  private queue: RequestLogEntry[] = [];
  /** The flush under way, if any (cleared when it ends, whatever the outcome). */
  private flushing?: Promise<void>;
  private failing = false;
  /** Set while a refused batch waits to be tried again: appends do not hammer the server meanwhile. */
  private retry?: NodeJS.Timeout;
  /** Rows dropped because the queue was full (ctl_gateway_request_log_dropped_total). */
  dropped = 0;

  constructor(
    private readonly db: SharedPostgres,
    private readonly log: Logger,
    /** This daemon's compression log purge (that log stays in the daemon's own file). */
    private readonly purgeLocal: (before: number) => number,
    private readonly maxQueued = MAX_QUEUED,
  ) {}

  /** Rows waiting to be written. */
  get queued(): number {
    return this.queue.length;
  }

  append(entries: readonly RequestLogEntry[]): void {
    if (entries.length === 0) return;
    this.queue.push(...entries);
    if (this.queue.length > this.maxQueued) this.drop(this.queue.length - this.maxQueued);
    this.kick();
  }

  /** The oldest rows go when the queue is full: counted and logged, never silently. */
  private drop(n: number): void {
    const gone = this.queue.splice(0, n);
    this.dropped += gone.length;
    this.log.error(
      { dropped: gone.length, droppedTotal: this.dropped, from: new Date(gone[0]!.ts).toISOString(), to: new Date(gone[gone.length - 1]!.ts).toISOString(), firstRequestId: gone[0]!.requestId, lastRequestId: gone[gone.length - 1]!.requestId },
      `gateway: the request log queue is full (${this.maxQueued} rows waiting for the shared database): the oldest rows were dropped`,
    );
  }

  /** Start a flush unless one runs or a retry is due (the retry starts it). */
  private kick(): void {
    if (this.flushing || this.retry) return;
    // .finally runs after the assignment even when flush() settles at once: `flushing` never keeps a settled flush.
    this.flushing = this.flush().finally(() => {
      this.flushing = undefined;
      if (this.queue.length > 0 && !this.retry) this.kick();
    });
  }

  /** Write what is queued; returns when the queue is empty or the server refused (kept, tried again later). */
  private async flush(): Promise<void> {
    await new Promise<void>((r) => setImmediate(r)); // gather what the current tick appends
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, 2000);
      const values = TYPES.map(() => [] as unknown[]);
      const row: unknown[] = [];
      for (const e of batch) {
        row.length = 0;
        pushLogValues(e, row);
        row.forEach((v, i) => values[i]!.push(v));
      }
      try {
        await this.db.query(INSERT, values);
      } catch (e) {
        if (!this.failing) this.log.error({ err: (e as Error).message, queued: this.queue.length }, 'gateway: writing the request log to the shared database failed; kept and tried again');
        this.failing = true;
        this.retry = setTimeout(() => {
          this.retry = undefined;
          this.kick();
        }, RETRY_MS);
        this.retry.unref();
        return;
      }
      if (this.failing) this.log.info({ queued: this.queue.length }, 'gateway: the request log reaches the shared database again');
      this.failing = false;
      // Rows dropped meanwhile (a full queue) were the oldest: take off only what is still at the front.
      const written = new Set(batch);
      let n = 0;
      while (n < this.queue.length && written.has(this.queue[n]!)) n++;
      this.queue.splice(0, n);
    }
  }

  /** What this daemon queued is written (or could not be: the read goes on with what is there). */
  private async caughtUp(): Promise<void> {
    if (this.queue.length > 0) this.kick();
    await this.flushing;
  }

  private filter(q: Omit<LogQuery, 'limit' | 'offset'>, args: unknown[]): string {
    const clauses: string[] = [];
    const p = (v: unknown) => `$${args.push(v)}`;
    if (q.since !== undefined) clauses.push(`ts >= ${p(q.since)}`);
    if (q.until !== undefined) clauses.push(`ts < ${p(q.until)}`);
    if (q.model !== undefined) {
      const m = p(q.model);
      clauses.push(`(model = ${m} OR requested_model = ${m})`);
    }
    if (q.provider !== undefined) clauses.push(`provider = ${p(q.provider)}`);
    if (q.combo !== undefined) clauses.push(`combo = ${p(q.combo)}`);
    if (q.apiKeyId !== undefined) clauses.push(`api_key_id = ${p(q.apiKeyId)}`);
    if (q.status === 'ok') clauses.push('status < 400');
    if (q.status === 'error') clauses.push('status >= 400');
    return clauses.length ? `WHERE ${clauses.join(' AND ')}` : '';
  }

  async requestLogs(q: LogQuery): Promise<{ total: number; rows: RequestLogRow[] }> {
    await this.caughtUp();
    const args: unknown[] = [];
    const where = this.filter(q, args);
    const [count] = await this.db.query<{ n: number }>(`SELECT COUNT(*) AS n FROM gw_request_log ${where}`, args);
    const rows = await this.db.query<Record<string, unknown>>(`SELECT * FROM gw_request_log ${where} ORDER BY id DESC LIMIT $${args.length + 1} OFFSET $${args.length + 2}`, [...args, q.limit, q.offset]);
    return { total: count!.n, rows: rows.map(toLogRow) };
  }

  async history(q: HistoryQuery): Promise<HistoryBucket[]> {
    await this.caughtUp();
    const args: unknown[] = [];
    const where = this.filter({ since: q.since, ...(q.until !== undefined ? { until: q.until } : {}) }, args);
    const fmt = q.period === 'hour' ? `'YYYY-MM-DD"T"HH24":00:00Z"'` : `'YYYY-MM-DD'`;
    const grp = q.groupBy ? `, ${q.groupBy === 'modality' ? MODALITY_SQL : q.groupBy} AS grp` : '';
    const rows = await this.db.query<{ period: string; grp?: string | null; requests: number; errors: number; tokens_in: number; tokens_out: number; cost: number; avg_latency: number; cache_hits: number | null; cost_saved: number | null }>(
      `SELECT to_char(to_timestamp(ts / 1000.0) AT TIME ZONE 'UTC', ${fmt}) AS period${grp},
         COUNT(*) AS requests, SUM((status >= 400)::int) AS errors, SUM(tokens_in) AS tokens_in, SUM(tokens_out) AS tokens_out,
         SUM(cost) AS cost, AVG(latency_ms)::float8 AS avg_latency,
         SUM(CASE WHEN cache IN ('hit', 'replay') THEN 1 ELSE 0 END)::int AS cache_hits, SUM(cost_saved) AS cost_saved
       FROM gw_request_log ${where} GROUP BY period${q.groupBy ? ', grp' : ''} ORDER BY period${q.groupBy ? ', grp' : ''}`,
      args,
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

  async accountUsage(provider: string, account: string, since: number): Promise<AccountTotals> {
    await this.caughtUp();
    const [r] = await this.db.query<{ requests: number; errors: number | null; tokens_in: number | null; tokens_out: number | null; cost: number | null; last: number | null }>(
      `SELECT COUNT(*) AS requests, SUM((status >= 400)::int) AS errors, SUM(tokens_in) AS tokens_in, SUM(tokens_out) AS tokens_out, SUM(cost) AS cost, MAX(ts) AS last
       FROM gw_request_log WHERE provider = $1 AND account = $2 AND ts >= $3`,
      [provider, account, since],
    );
    return { requests: r!.requests, errors: r!.errors ?? 0, tokensIn: r!.tokens_in ?? 0, tokensOut: r!.tokens_out ?? 0, cost: r!.cost ?? 0, lastUsedAt: r!.last };
  }

  async purge(before: number): Promise<{ requestLogs: number; compressionLogs: number }> {
    await this.caughtUp();
    const [r] = await this.db.query<{ n: number }>('WITH d AS (DELETE FROM gw_request_log WHERE ts < $1 RETURNING 1) SELECT COUNT(*) AS n FROM d', [before]);
    return { requestLogs: r!.n, compressionLogs: this.purgeLocal(before) };
  }

  async comboTargetCounts(since: number): Promise<ComboTargetCount[]> {
    return this.db.query<ComboTargetCount>(
      `SELECT combo, provider || '/' || model AS target, COUNT(*) AS requests, SUM((status >= 400)::int) AS errors, AVG(latency_ms)::float8 AS "avgLatency"
       FROM gw_request_log WHERE combo IS NOT NULL AND provider IS NOT NULL AND ts >= $1 GROUP BY combo, target`,
      [since],
    );
  }

  async latencyRows(q: { since: number; provider?: string; model?: string; maxRows: number }): Promise<LatencyRow[]> {
    await this.caughtUp();
    const args: unknown[] = [q.since];
    let sql = `SELECT provider, model, status, latency_ms, ttfb_ms FROM gw_request_log WHERE ts >= $1 AND provider IS NOT NULL AND ${UPSTREAM}`;
    if (q.provider !== undefined) sql += ` AND provider = $${args.push(q.provider)}`;
    if (q.model !== undefined) {
      const m = `$${args.push(q.model)}`;
      sql += ` AND (model = ${m} OR provider || '/' || model = ${m})`;
    }
    sql += ` ORDER BY id DESC LIMIT $${args.push(q.maxRows)}`;
    return this.db.query<LatencyRow>(sql, args);
  }

  async cacheRows(q: { since: number; model?: string; maxRows: number }): Promise<CacheRow[]> {
    await this.caughtUp();
    const args: unknown[] = [q.since];
    let sql = `SELECT requested_model, provider, model, tokens_cached, tokens_cache_write FROM gw_request_log WHERE ts >= $1 AND status = 200 AND ${UPSTREAM}`;
    if (q.model !== undefined) {
      const m = `$${args.push(q.model)}`;
      sql += ` AND (model = ${m} OR requested_model = ${m} OR provider || '/' || model = ${m})`;
    }
    sql += ` ORDER BY id DESC LIMIT $${args.push(q.maxRows)}`;
    return this.db.query<CacheRow>(sql, args);
  }

  async routingRows(since: number, maxRows: number): Promise<RoutingRow[]> {
    await this.caughtUp();
    return this.db.query<RoutingRow>(`SELECT strategy, provider, model, latency_ms, status FROM gw_request_log WHERE ts >= $1 AND provider IS NOT NULL AND ${UPSTREAM} ORDER BY id DESC LIMIT $2`, [since, maxRows]);
  }

  async providerCounts(since: number): Promise<{ provider: string; n: number }[]> {
    await this.caughtUp();
    return this.db.query(`SELECT provider, COUNT(*) AS n FROM gw_request_log WHERE ts >= $1 AND provider IS NOT NULL AND status < 400 AND ${UPSTREAM} GROUP BY provider ORDER BY n DESC`, [since]);
  }

  /** Dollars a key spent in [since, until), for a budget window seen for the first time. */
  async spend(apiKeyId: string, since: number, until: number): Promise<number> {
    await this.caughtUp();
    const [r] = await this.db.query<{ c: number | null }>(`SELECT SUM(cost) AS c FROM gw_request_log WHERE api_key_id = $1 AND ts >= $2 AND ts < $3 AND ${UPSTREAM}`, [apiKeyId, since, until]);
    return r?.c ?? 0;
  }

  /** Tokens a key used in [since, until) within a limit's scope. */
  async tokens(apiKeyId: string, scope: 'model' | 'provider' | 'global', value: string | undefined, since: number, until: number): Promise<number> {
    await this.caughtUp();
    const args: unknown[] = [apiKeyId, since, until];
    let sql = `SELECT SUM(tokens_in + tokens_out) AS t FROM gw_request_log WHERE api_key_id = $1 AND ts >= $2 AND ts < $3 AND ${UPSTREAM}`;
    if (scope === 'provider') sql += ` AND provider = $${args.push(value)}`;
    else if (scope === 'model') {
      const v = `$${args.push(value)}`;
      sql += ` AND (requested_model = ${v} OR provider || '/' || model = ${v} OR model = ${v})`;
    }
    const [r] = await this.db.query<{ t: number | null }>(sql, args);
    return r?.t ?? 0;
  }

  /** Queued rows are written (the component stops). */
  async close(): Promise<void> {
    clearTimeout(this.retry);
    this.retry = undefined;
    await this.caughtUp().catch(() => {});
  }
}

