/**
 * The request log in the daemon's SQLite file: one row per request served (what was asked, where it
 * went, tokens, cost, latency, each upstream attempt), written in batches behind the requests
 * (recorder.ts) and read by usage, history and analytics (reader.ts). Several
 * daemons sharing a database keep it in PostgreSQL instead (pg-store.ts, the same columns).
 */
import { parseJsonColumn, type Store } from '../../store/index.js';
import { MODALITY_SQL, modalityOf } from '../modality.js';
import type { SchemaStep } from '../schema.js';

/** The request log: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
export const REQUEST_LOG_SCHEMA: SchemaStep[] = [
  {
    version: 1,
    up: `
CREATE TABLE request_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  request_id TEXT NOT NULL,
  ts INTEGER NOT NULL,
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
  cost REAL NOT NULL DEFAULT 0,
  latency_ms INTEGER NOT NULL DEFAULT 0,
  ttfb_ms INTEGER,
  fallback_attempts INTEGER NOT NULL DEFAULT 0,
  attempts TEXT NOT NULL DEFAULT '[]',
  client_aborted INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX request_log_ts ON request_log(ts);
CREATE INDEX request_log_combo ON request_log(combo, ts);
`,
  },
  {
    // Cache and prompt-cache columns.
    version: 2,
    up: `
ALTER TABLE request_log ADD COLUMN cache TEXT;
ALTER TABLE request_log ADD COLUMN cost_saved REAL NOT NULL DEFAULT 0;
ALTER TABLE request_log ADD COLUMN tokens_cache_write INTEGER NOT NULL DEFAULT 0;
CREATE INDEX request_log_key_ts ON request_log(api_key_id, ts);
`,
  },
  {
    // The guardrails that fired on a request (`name:action`, comma-separated).
    version: 8,
    up: `ALTER TABLE request_log ADD COLUMN guardrails TEXT;`,
  },
];

/** One upstream attempt of a request, as kept in the request log. */
export interface AttemptLog {
  provider: string;
  model: string;
  account?: string;
  /** success, error (upstream answered non-OK or failed), skipped (not tried: unavailable). */
  outcome: 'success' | 'error' | 'skipped';
  status?: number;
  error?: string;
  latencyMs?: number;
  /** Whether the router moved on after this attempt and why. */
  action?: 'fallback' | 'retry' | 'return' | 'stop';
}

export interface RequestLogEntry {
  requestId: string;
  ts: number;
  endpoint: string;
  apiKeyId?: string;
  sessionId?: string;
  requestedModel?: string;
  combo?: string;
  strategy?: string;
  provider?: string;
  model?: string;
  account?: string;
  status: number;
  error?: string;
  stream: boolean;
  tokensIn: number;
  tokensOut: number;
  tokensCached: number;
  tokensReasoning: number;
  /** Prompt-cache writes (subset of tokensIn), for /api/usage/cache-health. */
  tokensCacheWrite?: number;
  cost: number;
  /** Response cache: hit (served from the cache), miss (cacheable, went upstream), replay (idempotent duplicate). */
  cache?: 'hit' | 'miss' | 'replay';
  /** USD a cache hit or replay avoided. */
  costSaved?: number;
  latencyMs: number;
  ttfbMs?: number;
  fallbackAttempts: number;
  attempts: AttemptLog[];
  clientAborted: boolean;
  /** Guardrails that fired (`pii:redact,output:secrets:warn`). */
  guardrails?: string;
}

export interface RequestLogRow extends RequestLogEntry {
  id: number;
  /** chat, embedding, image, speech, transcription, rerank, moderation, video or music (from the endpoint). */
  modality: string;
}

export const LOG_COLUMNS = `request_id, ts, endpoint, api_key_id, session_id, requested_model, combo, strategy, provider, model,
  account, status, error, stream, tokens_in, tokens_out, tokens_cached, tokens_reasoning, cost, latency_ms, ttfb_ms,
  fallback_attempts, attempts, client_aborted, cache, cost_saved, tokens_cache_write, guardrails`;
const LOG_ROW = `(${new Array(28).fill('?').join(', ')})`;
/** Rows per INSERT statement at most (16 × 28 values, far below SQLite's variable limit). */
const LOG_CHUNK = 16;
const logSql = new Map<number, string>();

/** The INSERT of `rows` request-log rows (the SQL text is built once per size, so the statement cache keeps it). */
function logInsertSql(rows: number): string {
  let sql = logSql.get(rows);
  if (sql === undefined) logSql.set(rows, (sql = `INSERT INTO request_log (${LOG_COLUMNS}) VALUES ${new Array(rows).fill(LOG_ROW).join(', ')}`));
  return sql;
}

/** One row's values, in LOG_COLUMNS order. */
export function pushLogValues(e: RequestLogEntry, out: unknown[]): void {
  out.push(
    e.requestId,
    e.ts,
    e.endpoint,
    e.apiKeyId ?? null,
    e.sessionId ?? null,
    e.requestedModel ?? null,
    e.combo ?? null,
    e.strategy ?? null,
    e.provider ?? null,
    e.model ?? null,
    e.account ?? null,
    e.status,
    e.error ?? null,
    e.stream ? 1 : 0,
    e.tokensIn,
    e.tokensOut,
    e.tokensCached,
    e.tokensReasoning,
    e.cost,
    e.latencyMs,
    e.ttfbMs ?? null,
    e.fallbackAttempts,
    JSON.stringify(e.attempts),
    e.clientAborted ? 1 : 0,
    e.cache ?? null,
    e.costSaved ?? 0,
    e.tokensCacheWrite ?? 0,
    e.guardrails ?? null,
  );
}

export interface LogQuery {
  limit: number;
  offset: number;
  since?: number;
  until?: number;
  model?: string;
  provider?: string;
  combo?: string;
  apiKeyId?: string;
  status?: 'ok' | 'error';
}

export interface HistoryBucket {
  period: string;
  group?: string;
  requests: number;
  errors: number;
  tokensIn: number;
  tokensOut: number;
  cost: number;
  avgLatencyMs: number;
  /** Requests answered from the response cache or replayed (idempotency). */
  cacheHits: number;
  /** USD those cache hits and replays avoided. */
  costSaved: number;
}

/** A history query: the period, its range and an optional grouping. */
export interface HistoryQuery {
  since: number;
  until?: number;
  period: 'day' | 'hour';
  groupBy?: 'provider' | 'model' | 'combo' | 'api_key_id' | 'modality';
}

export class SqliteRequestLog {
  constructor(private readonly store: Store) {}

  /** Append rows, in order, in one transaction. */
  insert(entries: readonly RequestLogEntry[]): void {
    if (entries.length === 0) return;
    this.store.transaction(() => {
      // Up to LOG_CHUNK rows per INSERT (one statement opens the table and its indexes once), in order.
      let i = 0;
      for (let size = LOG_CHUNK; size >= 1; size >>= 1) {
        if (entries.length - i < size) continue;
        const st = this.store.prepare(logInsertSql(size));
        while (entries.length - i >= size) {
          const values: unknown[] = [];
          for (let k = 0; k < size; k++) pushLogValues(entries[i + k]!, values);
          st.run(...values);
          i += size;
        }
      }
    });
  }

  private logFilter(q: Omit<LogQuery, 'limit' | 'offset'>): { where: string; args: unknown[] } {
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

  query(q: LogQuery): { total: number; rows: RequestLogRow[] } {
    const { where, args } = this.logFilter(q);
    // Filters vary per call; these statements are prepared uncached (the SQL text has few variants anyway).
    const total = (this.store.prepare(`SELECT COUNT(*) AS n FROM request_log ${where}`).get(...args) as { n: number }).n;
    const rows = this.store
      .prepare(`SELECT * FROM request_log ${where} ORDER BY id DESC LIMIT ? OFFSET ?`)
      .all(...args, q.limit, q.offset) as Record<string, unknown>[];
    return { total, rows: rows.map(toLogRow) };
  }

  /** Totals of one provider account (a connection) since `since`. */
  accountUsage(provider: string, account: string, since: number): { requests: number; errors: number; tokensIn: number; tokensOut: number; cost: number; lastUsedAt: number | null } {
    const r = this.store
      .prepare(
        `SELECT COUNT(*) AS requests, SUM(status >= 400) AS errors, SUM(tokens_in) AS tokens_in, SUM(tokens_out) AS tokens_out, SUM(cost) AS cost, MAX(ts) AS last
         FROM request_log WHERE provider = ? AND account = ? AND ts >= ?`,
      )
      .get(provider, account, since) as { requests: number; errors: number | null; tokens_in: number | null; tokens_out: number | null; cost: number | null; last: number | null };
    return { requests: r.requests, errors: r.errors ?? 0, tokensIn: r.tokens_in ?? 0, tokensOut: r.tokens_out ?? 0, cost: r.cost ?? 0, lastUsedAt: r.last };
  }

  /** Delete request-log rows (and the compression log) from before `before`; how many went. */
  purge(before: number): { requestLogs: number; compressionLogs: number } {
    return this.store.transaction(() => ({
      requestLogs: this.store.prepare('DELETE FROM request_log WHERE ts < ?').run(before).changes,
      compressionLogs: this.store.prepare('DELETE FROM compression_log WHERE ts < ?').run(before).changes,
    }));
  }

  /** Aggregates per period (`day` or `hour`), optionally grouped by provider, model, combo, key or modality. */
  history(q: HistoryQuery): HistoryBucket[] {
    const { where, args } = this.logFilter({ since: q.since, ...(q.until !== undefined ? { until: q.until } : {}) });
    const fmt = q.period === 'hour' ? '%Y-%m-%dT%H:00:00Z' : '%Y-%m-%d';
    const group = q.groupBy ? ', grp' : '';
    const rows = this.store
      .prepare(
        `SELECT strftime('${fmt}', ts / 1000, 'unixepoch') AS period${q.groupBy ? `, ${q.groupBy === 'modality' ? MODALITY_SQL : q.groupBy} AS grp` : ''},
           COUNT(*) AS requests, SUM(status >= 400) AS errors, SUM(tokens_in) AS tokens_in, SUM(tokens_out) AS tokens_out,
           SUM(cost) AS cost, AVG(latency_ms) AS avg_latency,
           SUM(CASE WHEN cache IN ('hit', 'replay') THEN 1 ELSE 0 END) AS cache_hits, SUM(cost_saved) AS cost_saved
         FROM request_log ${where} GROUP BY period${group} ORDER BY period${group}`,
      )
      .all(...args) as {
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
    }[];
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

  /**
   * Per combo and target counts since `since` (seeds the in-memory combo metrics at start). Read in
   * slices of COUNT_SLICE_ROWS row ids, giving the event loop back between them: one GROUP BY over a
   * week of a busy gateway's log (250,000 rows) held the loop 360 ms at every gateway start, a restore
   * or an import's included. The same numbers as one GROUP BY (the average from sum and count).
   */
  async comboTargetCounts(since: number): Promise<{ combo: string; target: string; requests: number; errors: number; avgLatency: number }[]> {
    const bounds = this.store.prepare('SELECT MIN(id) AS lo, MAX(id) AS hi FROM request_log').get() as { lo: number | null; hi: number | null };
    if (bounds.lo === null || bounds.hi === null) return [];
    const slice = this.store.prepare(
      `SELECT combo, provider || '/' || model AS target, COUNT(*) AS requests, SUM(status >= 400) AS errors, SUM(latency_ms) AS latencySum, COUNT(latency_ms) AS latencies
       FROM request_log WHERE id >= ? AND id < ? AND combo IS NOT NULL AND provider IS NOT NULL AND ts >= ? GROUP BY combo, target`,
    );
    type Part = { combo: string; target: string; requests: number; errors: number; latencySum: number | null; latencies: number };
    const sums = new Map<string, Part>();
    for (let from = bounds.lo; from <= bounds.hi; from += COUNT_SLICE_ROWS) {
      for (const r of slice.all(from, from + COUNT_SLICE_ROWS, since) as Part[]) {
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
}

/** Row ids read per slice by the start-up counts of the request log (a few milliseconds each). */
const COUNT_SLICE_ROWS = 8192;

export function toLogRow(r: Record<string, unknown>): RequestLogRow {
  const s = (k: string) => opt(r[k] as string | null);
  return {
    id: r.id as number,
    requestId: r.request_id as string,
    ts: r.ts as number,
    endpoint: r.endpoint as string,
    modality: modalityOf(r.endpoint as string),
    ...omitUndefined({
      apiKeyId: s('api_key_id'),
      sessionId: s('session_id'),
      requestedModel: s('requested_model'),
      combo: s('combo'),
      strategy: s('strategy'),
      provider: s('provider'),
      model: s('model'),
      account: s('account'),
      error: s('error'),
      ttfbMs: opt(r.ttfb_ms as number | null),
      cache: s('cache') as RequestLogEntry['cache'],
      guardrails: s('guardrails'),
    }),
    status: r.status as number,
    stream: r.stream === 1,
    tokensIn: r.tokens_in as number,
    tokensOut: r.tokens_out as number,
    tokensCached: r.tokens_cached as number,
    tokensReasoning: r.tokens_reasoning as number,
    tokensCacheWrite: (r.tokens_cache_write as number | undefined) ?? 0,
    cost: r.cost as number,
    costSaved: (r.cost_saved as number | undefined) ?? 0,
    latencyMs: r.latency_ms as number,
    fallbackAttempts: r.fallback_attempts as number,
    attempts: parseJsonColumn<AttemptLog[]>(r.attempts as string, []),
    clientAborted: r.client_aborted === 1,
  };
}

const opt = <T>(v: T | null): T | undefined => (v === null ? undefined : v);

function omitUndefined<T extends Record<string, unknown>>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}
