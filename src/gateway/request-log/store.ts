/**
 * The request log: one row per request served (what was asked, where it went, tokens, cost,
 * latency, each upstream attempt), written in batches behind the requests (recorder.ts) and read
 * by usage, history and analytics (reader.ts, on either database). In the daemon's SQLite file a
 * batch is written here, synchronously, up to LOG_CHUNK rows per INSERT; several daemons sharing a
 * database keep it in PostgreSQL instead (`gw_request_log`, the same columns), written by
 * shared-log.ts.
 */
import { parseJsonColumn, type Store } from '../../store/index.js';
import { modalityOf } from '../modality.js';
import type { SchemaStep } from '../schema.js';
import { PG_TYPES, SQLITE_TYPES, type ColumnTypes } from '../sql.js';

/** The request log's first columns as `t`'s database declares them (`later`: columns added since, for a new table). */
const logTable = (t: ColumnTypes, later = '') => `
CREATE TABLE ${t.p}request_log (
  id ${t.serial},
  request_id TEXT NOT NULL,
  ts ${t.big} NOT NULL,
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
  cost ${t.real} NOT NULL DEFAULT 0,
  latency_ms INTEGER NOT NULL DEFAULT 0,
  ttfb_ms INTEGER,
  fallback_attempts INTEGER NOT NULL DEFAULT 0,
  attempts TEXT NOT NULL DEFAULT '[]',
  client_aborted INTEGER NOT NULL DEFAULT 0${later}
);
CREATE INDEX ${t.p}request_log_ts ON ${t.p}request_log(ts);
CREATE INDEX ${t.p}request_log_combo ON ${t.p}request_log(combo, ts);
`;

/** Columns added to the first table: cache and prompt-cache columns, then the guardrails that fired on a request (`name:action`, comma-separated). */
const added = (t: ColumnTypes) => [['cache TEXT', `cost_saved ${t.real} NOT NULL DEFAULT 0`, 'tokens_cache_write INTEGER NOT NULL DEFAULT 0'], ['guardrails TEXT']];
const KEY_INDEX = (t: ColumnTypes) => `CREATE INDEX ${t.p}request_log_key_ts ON ${t.p}request_log(api_key_id, ts);`;

/** The request log: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
export const REQUEST_LOG_SCHEMA: SchemaStep[] = [
  { version: 1, up: logTable(SQLITE_TYPES) },
  // Cache and prompt-cache columns.
  { version: 2, up: `\n${added(SQLITE_TYPES)[0]!.map((c) => `ALTER TABLE request_log ADD COLUMN ${c};\n`).join('')}${KEY_INDEX(SQLITE_TYPES)}\n` },
  // The guardrails that fired on a request.
  { version: 8, up: `ALTER TABLE request_log ADD COLUMN ${added(SQLITE_TYPES)[1]![0]};` },
];

/** The request log in the shared database: every column in one table. */
export const REQUEST_LOG_MIGRATION = `${logTable(PG_TYPES, added(PG_TYPES).flat().map((c) => `,\n  ${c}`).join(''))}${KEY_INDEX(PG_TYPES)}\n`;

/** The request log: this capability's share of the gateway's PostgreSQL migrations (placed by version in gateway/schema.ts). */
export const REQUEST_LOG_PG_SCHEMA: SchemaStep[] = [{ version: 2, up: REQUEST_LOG_MIGRATION }];

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

/** The SQLite writer: synchronous, so the recorder learns of a failed batch at once and tries its rows one by one. */
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
}

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
