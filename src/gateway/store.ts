/**
 * The gateway's database (`database/gateway.db`): provider connections and their accounts, custom
 * models, aliases, combos, model-combo mappings, API keys (hashed), pricing overrides, settings,
 * login sessions and the request log. All SQL lives here so another backend can replace it.
 */
import type { MemoryData } from './memory/data.js';
import { MemoryStore } from './memory/store.js';
import { storedAccount } from './oauth/account-key.js';
import { FileStore, type FileData } from './files/store.js';
import { BatchStore, type BatchData } from './batches/store.js';
import { SqliteDeliveryQueue, type DeliveryQueue } from './webhooks/store.js';
import { MODALITY_SQL, modalityOf } from './modality.js';
import { SqliteLogReader, type RequestLogReader } from './analytics/log-reader.js';
import type { Migration, Store } from '../store/index.js';
import type { ProviderKind } from './canonical.js';
import type {
  ApiKeyRecord,
  ComboConfig,
  ComboMapping,
  KeyScope,
  ModelSpec,
  MediaPrice,
  PriceEntry,
  ProviderAccount,
  ProviderConfig,
  Strategy,
} from './types.js';
import { MEDIA_PRICE_FIELDS } from './types.js';

export const GATEWAY_MIGRATIONS: Migration[] = [
  {
    version: 1,
    up: `
CREATE TABLE providers (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  base_url TEXT NOT NULL,
  enabled INTEGER NOT NULL DEFAULT 1,
  priority INTEGER NOT NULL DEFAULT 0,
  headers TEXT NOT NULL DEFAULT '{}',
  timeout_ms INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE provider_accounts (
  id TEXT PRIMARY KEY,
  provider_id TEXT NOT NULL REFERENCES providers(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  api_key TEXT NOT NULL,
  enabled INTEGER NOT NULL DEFAULT 1,
  priority INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL
);
CREATE INDEX provider_accounts_provider ON provider_accounts(provider_id);
-- Models of API providers and custom models of any provider (gateway.yaml ones included).
CREATE TABLE provider_models (
  provider_id TEXT NOT NULL,
  model TEXT NOT NULL,
  spec TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (provider_id, model)
);
CREATE TABLE aliases (
  alias TEXT PRIMARY KEY,
  model TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE combos (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  strategy TEXT NOT NULL,
  targets TEXT NOT NULL,
  enabled INTEGER NOT NULL DEFAULT 1,
  description TEXT,
  max_attempts INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE combo_mappings (
  id TEXT PRIMARY KEY,
  pattern TEXT NOT NULL,
  combo_id TEXT NOT NULL,
  priority INTEGER NOT NULL DEFAULT 0,
  enabled INTEGER NOT NULL DEFAULT 1,
  description TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  key_hash TEXT NOT NULL UNIQUE,
  key_prefix TEXT NOT NULL,
  models TEXT NOT NULL,
  scopes TEXT NOT NULL,
  enabled INTEGER NOT NULL DEFAULT 1,
  expires_at INTEGER,
  revoked_at INTEGER,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER
);
CREATE TABLE pricing (
  model TEXT PRIMARY KEY,
  input REAL,
  output REAL,
  cached REAL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE sessions (
  token_hash TEXT PRIMARY KEY,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
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
    // Issue 6: resilience state, response cache, budgets and token limits; cache and prompt-cache
    // columns of the request log.
    version: 2,
    up: `
ALTER TABLE request_log ADD COLUMN cache TEXT;
ALTER TABLE request_log ADD COLUMN cost_saved REAL NOT NULL DEFAULT 0;
ALTER TABLE request_log ADD COLUMN tokens_cache_write INTEGER NOT NULL DEFAULT 0;
CREATE INDEX request_log_key_ts ON request_log(api_key_id, ts);
-- Breaker and connection-cooldown state that must survive a restart (written in batches).
CREATE TABLE resilience_state (
  kind TEXT NOT NULL,
  key TEXT NOT NULL,
  data TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (kind, key)
);
-- Exact-signature response cache (the memory LRU is in front of it).
CREATE TABLE response_cache (
  signature TEXT PRIMARY KEY,
  namespace TEXT NOT NULL,
  model TEXT NOT NULL,
  answer TEXT NOT NULL,
  size INTEGER NOT NULL,
  tokens_in INTEGER NOT NULL DEFAULT 0,
  tokens_out INTEGER NOT NULL DEFAULT 0,
  hit_count INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX response_cache_expires ON response_cache(expires_at);
CREATE TABLE budgets (
  api_key_id TEXT PRIMARY KEY,
  daily_limit_usd REAL,
  weekly_limit_usd REAL,
  monthly_limit_usd REAL,
  warning_threshold REAL NOT NULL,
  reset_interval TEXT,
  reset_time TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE token_limits (
  id TEXT PRIMARY KEY,
  api_key_id TEXT NOT NULL,
  scope_type TEXT NOT NULL,
  scope_value TEXT,
  token_limit INTEGER NOT NULL,
  reset_interval TEXT NOT NULL,
  reset_time TEXT NOT NULL,
  enabled INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX token_limits_key ON token_limits(api_key_id);
`,
  },
  {
    // Issue 16: prices of media (per image, per second of audio, per character, per search unit,
    // per request), kept as one JSON object beside the token prices.
    version: 3,
    up: `ALTER TABLE pricing ADD COLUMN media TEXT;`,
  },
  {
    // Issue 17: uploaded files (their bytes live under uploads/gateway/files/), batches, and each
    // batch line's recorded result (a line with a result never runs again, even after kill -9).
    version: 4,
    up: `
CREATE TABLE files (
  id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  purpose TEXT NOT NULL,
  filename TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER
);
CREATE INDEX files_owner ON files(owner, created_at, id);
CREATE INDEX files_expiry ON files(expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE batches (
  id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  input_file_id TEXT NOT NULL,
  completion_window TEXT NOT NULL,
  status TEXT NOT NULL,
  metadata TEXT,
  errors TEXT,
  total INTEGER NOT NULL DEFAULT 0,
  output_file_id TEXT,
  error_file_id TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  in_progress_at INTEGER,
  finalizing_at INTEGER,
  completed_at INTEGER,
  failed_at INTEGER,
  expired_at INTEGER,
  cancelling_at INTEGER,
  cancelled_at INTEGER
);
CREATE INDEX batches_owner ON batches(owner, created_at, id);
CREATE TABLE batch_results (
  batch_id TEXT NOT NULL,
  line INTEGER NOT NULL,
  ok INTEGER NOT NULL,
  result TEXT NOT NULL,
  PRIMARY KEY (batch_id, line)
) WITHOUT ROWID;
`,
  },
  {
    // Issue 20: outbound webhooks, their persisted delivery queue, and every delivery attempt.
    version: 5,
    up: `
CREATE TABLE webhooks (
  id TEXT PRIMARY KEY,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  secret TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  enabled INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE webhook_deliveries (
  id TEXT PRIMARY KEY,
  webhook_id TEXT NOT NULL,
  event TEXT NOT NULL,
  payload TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER,
  last_status INTEGER,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  delivered_at INTEGER
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_hook ON webhook_deliveries(webhook_id, created_at);
CREATE TABLE webhook_attempts (
  delivery_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  at INTEGER NOT NULL,
  status INTEGER,
  error TEXT,
  duration_ms INTEGER NOT NULL,
  PRIMARY KEY (delivery_id, attempt)
) WITHOUT ROWID;
`,
  },
  {
    // Issue 20: persistent memory with an FTS5 index over key and content (kept in step by
    // triggers), and skills with their executions, and prompt-based agent skills.
    version: 6,
    up: `
CREATE TABLE memories (
  rowid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  key TEXT NOT NULL DEFAULT '',
  content TEXT NOT NULL,
  type TEXT NOT NULL,
  scope TEXT NOT NULL,
  session_id TEXT,
  api_key_id TEXT,
  metadata TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  expires_at INTEGER
);
CREATE INDEX memories_key ON memories(api_key_id, created_at);
CREATE INDEX memories_session ON memories(session_id) WHERE session_id IS NOT NULL;
CREATE INDEX memories_expiry ON memories(expires_at) WHERE expires_at IS NOT NULL;
CREATE VIRTUAL TABLE memories_fts USING fts5(key, content, content='memories', content_rowid='rowid');
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts(rowid, key, content) VALUES (new.rowid, new.key, new.content);
END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
  INSERT INTO memories_fts(memories_fts, rowid, key, content) VALUES ('delete', old.rowid, old.key, old.content);
END;
CREATE TRIGGER memories_au AFTER UPDATE ON memories BEGIN
  INSERT INTO memories_fts(memories_fts, rowid, key, content) VALUES ('delete', old.rowid, old.key, old.content);
  INSERT INTO memories_fts(rowid, key, content) VALUES (new.rowid, new.key, new.content);
END;
CREATE TABLE skills (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  version TEXT NOT NULL,
  description TEXT NOT NULL,
  schema TEXT NOT NULL,
  handler_code TEXT NOT NULL,
  api_key_id TEXT,
  mode TEXT NOT NULL,
  source TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX skills_name ON skills(name, ifnull(api_key_id, ''));
CREATE TABLE skill_executions (
  id TEXT PRIMARY KEY,
  skill_id TEXT NOT NULL,
  skill_name TEXT NOT NULL,
  api_key_id TEXT,
  session_id TEXT,
  input TEXT,
  output TEXT,
  status TEXT NOT NULL,
  error TEXT,
  duration_ms INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX skill_executions_key ON skill_executions(api_key_id, created_at);
CREATE INDEX skill_executions_time ON skill_executions(created_at);
CREATE TABLE agent_skills (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL,
  prompt TEXT NOT NULL,
  model TEXT,
  temperature REAL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
`,
  },
  {
    // Issue 18: the MCP audit log and A2A tasks.
    version: 7,
    up: `
CREATE TABLE mcp_audit (
  id INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  tool TEXT NOT NULL,
  success INTEGER NOT NULL,
  duration_ms REAL NOT NULL,
  api_key_id TEXT,
  session_id TEXT,
  error TEXT
);
CREATE INDEX mcp_audit_tool ON mcp_audit(tool, id);
CREATE TABLE a2a_tasks (
  id TEXT PRIMARY KEY,
  skill TEXT NOT NULL,
  state TEXT NOT NULL,
  messages TEXT NOT NULL,
  artifacts TEXT NOT NULL DEFAULT '[]',
  metadata TEXT NOT NULL DEFAULT '{}',
  error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX a2a_tasks_time ON a2a_tasks(created_at);
`,
  },
  {
    // Issue 19: the guardrails that fired on a request (`name:action`, comma-separated).
    version: 8,
    up: `ALTER TABLE request_log ADD COLUMN guardrails TEXT;`,
  },
  {
    // Issue 19: compression — what each request saved, compression combos, and raw tool outputs kept.
    version: 9,
    up: `
CREATE TABLE compression_log (
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  request_id TEXT NOT NULL,
  mode TEXT NOT NULL,
  source TEXT NOT NULL,
  engines TEXT NOT NULL,
  tokens_before INTEGER NOT NULL,
  tokens_after INTEGER NOT NULL
);
CREATE INDEX compression_log_ts ON compression_log(ts);
CREATE TABLE compression_combos (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  pipeline TEXT NOT NULL,
  assignments TEXT NOT NULL DEFAULT '[]',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE rtk_raw (
  id TEXT PRIMARY KEY,
  ts INTEGER NOT NULL,
  content TEXT NOT NULL
);
CREATE INDEX rtk_raw_ts ON rtk_raw(ts);
`,
  },
  {
    // Issue 21: routing policies and the compliance audit log (append-only: nothing updates or deletes it).
    version: 10,
    up: `
CREATE TABLE policies (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  api_key_id TEXT,
  allow_models TEXT NOT NULL DEFAULT '[]',
  deny_models TEXT NOT NULL DEFAULT '[]',
  max_tokens INTEGER,
  enabled INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE audit_log (
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  actor TEXT NOT NULL,
  method TEXT NOT NULL,
  path TEXT NOT NULL,
  status INTEGER NOT NULL,
  before TEXT,
  after TEXT
);
CREATE INDEX audit_log_ts ON audit_log(ts);
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
`,
  },
  {
    // Issue 21: the outbound proxy registry, its assignments (global '', a provider id, an account id) and probe history.
    version: 11,
    up: `
CREATE TABLE proxies (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  host TEXT NOT NULL,
  port INTEGER NOT NULL,
  username TEXT,
  password TEXT,
  enabled INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE proxy_assignments (
  scope TEXT NOT NULL,
  scope_id TEXT NOT NULL,
  proxy_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (scope, scope_id)
);
CREATE INDEX proxy_assignments_proxy ON proxy_assignments(proxy_id);
CREATE TABLE proxy_probes (
  id INTEGER PRIMARY KEY,
  proxy_id TEXT NOT NULL,
  ts INTEGER NOT NULL,
  ok INTEGER NOT NULL,
  latency_ms INTEGER,
  target TEXT,
  error TEXT
);
CREATE INDEX proxy_probes_ts ON proxy_probes(proxy_id, ts);
`,
  },
  {
    // Issue 21: registered keys (API keys issued through /api/v1/registered-keys), pinned to a provider
    // account when asked; hourly budgets.
    version: 12,
    up: `
ALTER TABLE budgets ADD COLUMN hourly_limit_usd REAL;
ALTER TABLE api_keys ADD COLUMN account_id TEXT;
CREATE TABLE registered_keys (
  key_id TEXT PRIMARY KEY,
  issuer TEXT NOT NULL,
  provider TEXT,
  account_id TEXT,
  idempotency_key TEXT,
  created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX registered_keys_idempotency ON registered_keys(issuer, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX registered_keys_issued ON registered_keys(issuer, created_at);
`,
  },
  {
    // Issue 25: eval suites, their runs and the graded result of every case and model.
    version: 13,
    up: `
CREATE TABLE eval_suites (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  description TEXT,
  grader TEXT,
  cases TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE eval_runs (
  id TEXT PRIMARY KEY,
  suite_id TEXT NOT NULL,
  models TEXT NOT NULL,
  judge_model TEXT,
  status TEXT NOT NULL,
  summary TEXT,
  error TEXT,
  started_at INTEGER NOT NULL,
  finished_at INTEGER
);
CREATE INDEX eval_runs_suite ON eval_runs(suite_id, started_at);
CREATE TABLE eval_results (
  run_id TEXT NOT NULL,
  case_id TEXT NOT NULL,
  model TEXT NOT NULL,
  passed INTEGER NOT NULL,
  score REAL NOT NULL,
  output TEXT,
  reason TEXT,
  error TEXT,
  latency_ms INTEGER,
  cost REAL,
  PRIMARY KEY (run_id, case_id, model)
);
`,
  },
  {
    // Issue 25: installed plugins (their code lives in DIR/plugins/<name>).
    version: 14,
    up: `
CREATE TABLE plugins (
  name TEXT PRIMARY KEY,
  version TEXT NOT NULL,
  description TEXT,
  hooks TEXT NOT NULL,
  config_schema TEXT,
  config TEXT NOT NULL DEFAULT '{}',
  active INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  installed_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
`,
  },
  {
    // Issue 25: options of the rules and sla-aware combo strategies ({rules?, sla?} as JSON).
    version: 15,
    up: `ALTER TABLE combos ADD COLUMN options TEXT;`,
  },
  {
    // Issue 25: tasks sent to cloud agent providers (/api/v1/agents/tasks).
    version: 16,
    up: `
CREATE TABLE agent_tasks (
  id TEXT PRIMARY KEY,
  provider_id TEXT NOT NULL,
  external_id TEXT,
  status TEXT NOT NULL,
  prompt TEXT NOT NULL,
  source TEXT,
  options TEXT,
  result TEXT,
  url TEXT,
  error TEXT,
  messages TEXT NOT NULL DEFAULT '[]',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX agent_tasks_created ON agent_tasks(created_at);
`,
  },
  {
    // Issue 25: OAuth tokens of provider accounts, encrypted (AES-256-GCM, the key in DIR/secrets).
    version: 17,
    up: `
CREATE TABLE oauth_tokens (
  account_id TEXT PRIMARY KEY,
  provider_id TEXT NOT NULL,
  label TEXT NOT NULL,
  sealed TEXT NOT NULL,
  expires_at INTEGER,
  scopes TEXT,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
`,
  },
  {
    // A2A tasks record who created them (the API key's id; NULL for an anonymous caller), so a
    // caller lists and reads its own tasks only.
    version: 18,
    up: `ALTER TABLE a2a_tasks ADD COLUMN owner TEXT;`,
  },
  {
    // Requests per minute per API key.
    version: 19,
    up: `ALTER TABLE api_keys ADD COLUMN rpm INTEGER;`,
  },
];

// ---------------------------------------------------------------------------------------------
// Row shapes
// ---------------------------------------------------------------------------------------------

interface ProviderRow {
  id: string;
  kind: string;
  name: string;
  base_url: string;
  enabled: number;
  priority: number;
  headers: string;
  timeout_ms: number | null;
  created_at: number;
  updated_at: number;
}
interface AccountRow {
  id: string;
  provider_id: string;
  name: string;
  api_key: string;
  enabled: number;
  priority: number;
  created_at: number;
}
interface ModelRow {
  provider_id: string;
  model: string;
  spec: string;
  created_at: number;
  updated_at: number;
}
interface ComboRow {
  id: string;
  name: string;
  strategy: string;
  targets: string;
  enabled: number;
  description: string | null;
  max_attempts: number | null;
  options?: string | null;
  created_at: number;
  updated_at: number;
}
interface MappingRow {
  id: string;
  pattern: string;
  combo_id: string;
  priority: number;
  enabled: number;
  description: string | null;
  created_at: number;
  updated_at: number;
}
interface KeyRow {
  id: string;
  name: string;
  key_hash: string;
  key_prefix: string;
  models: string;
  scopes: string;
  enabled: number;
  expires_at: number | null;
  revoked_at: number | null;
  created_at: number;
  last_used_at: number | null;
  account_id?: string | null;
  rpm?: number | null;
}

/** A custom model record (`/api/provider-models`). */
export interface ProviderModelRecord {
  provider: string;
  spec: ModelSpec;
  createdAt: number;
  updatedAt: number;
}

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

function parseJson<T>(text: string | null, fallback: T): T {
  if (text === null) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

const opt = <T>(v: T | null): T | undefined => (v === null ? undefined : v);

/**
 * An account with the credential kept outside the table (an OAuth login's access token; '' when
 * this daemon does not hold it, and routing then leaves the account out: oauth/account-key.ts).
 */
export function withAccountKey(accountKey: GatewayStore['accountKey'], a: ProviderAccount): ProviderAccount {
  const key = accountKey?.(a.id);
  return key === undefined ? a : { ...a, apiKey: key };
}

export class GatewayStore {
  /**
   * Credentials kept outside provider_accounts (OAuth tokens, encrypted in oauth_tokens): the key of an
   * account whose id this resolver knows, in place of the stored one (which is empty for them).
   */
  accountKey: ((accountId: string) => string | undefined) | undefined;

  /** The kit store (the issue-6 stores in store-*.ts share it). */
  constructor(readonly store: Store) {}

  /** Persistent memory (/api/memory): in this daemon's SQLite file. */
  memoryStore(): MemoryData {
    return new MemoryStore(this.store);
  }

  /** Uploaded files (rows here, bytes on disk). */
  fileData(): FileData {
    return new FileStore(this.store);
  }

  /** Webhook deliveries waiting to be sent, and their attempts. */
  deliveryQueue(): DeliveryQueue {
    return new SqliteDeliveryQueue(this.store);
  }

  /** Batches and their line results. */
  batchData(): BatchData {
    return new BatchStore(this.store);
  }

  private reader?: RequestLogReader;

  /** Asynchronous reads of the request log (routes use these: the log may be shared). */
  get logs(): RequestLogReader {
    return (this.reader ??= new SqliteLogReader(this));
  }

  transaction<T>(fn: () => T): T {
    return this.store.transaction(fn);
  }

  /**
   * Resolves when every write made so far is durable. SQLite writes are durable when they return;
   * the shared store (shared/config-store.ts) commits in the background and says so here.
   */
  settled(): Promise<void> {
    return Promise.resolve();
  }

  // ----- providers ---------------------------------------------------------------------------

  /** Every provider, or only those of `ids` (the catalog's incremental update after a write). */
  listProviders(ids?: readonly string[]): ProviderConfig[] {
    const only = ids ? ' WHERE id IN (SELECT value FROM json_each(?))' : '';
    const onlyAccounts = ids ? ' WHERE provider_id IN (SELECT value FROM json_each(?))' : '';
    const args = ids ? [JSON.stringify(ids)] : [];
    const rows = this.store.prepare(`SELECT * FROM providers${only} ORDER BY priority, id`).all(...args) as ProviderRow[];
    const accounts = this.store.prepare(`SELECT * FROM provider_accounts${onlyAccounts} ORDER BY priority, created_at, id`).all(...args) as AccountRow[];
    const byProvider = new Map<string, ProviderAccount[]>();
    for (const a of accounts) {
      let list = byProvider.get(a.provider_id);
      if (!list) byProvider.set(a.provider_id, (list = []));
      list.push(withAccountKey(this.accountKey, { id: a.id, name: a.name, apiKey: a.api_key, enabled: a.enabled === 1, priority: a.priority }));
    }
    return rows.map((r) => ({
      id: r.id,
      kind: r.kind as ProviderKind,
      name: r.name,
      baseUrl: r.base_url,
      enabled: r.enabled === 1,
      priority: r.priority,
      headers: parseJson<Record<string, string>>(r.headers, {}),
      ...(r.timeout_ms !== null ? { timeoutMs: r.timeout_ms } : {}),
      accounts: byProvider.get(r.id) ?? [],
      models: [], // filled by the catalog from provider_models
      source: 'api' as const,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }));
  }

  listProviderIds(): string[] {
    return (this.store.prepare('SELECT id FROM providers').all() as { id: string }[]).map((r) => r.id);
  }

  providerExists(id: string): boolean {
    return this.store.prepare('SELECT 1 FROM providers WHERE id = ?').get(id) !== undefined;
  }

  /** Insert or replace a provider with its accounts (accounts not listed are removed). */
  saveProvider(p: ProviderConfig): void {
    this.store.transaction(() => {
      this.store
        .prepare(
          `INSERT INTO providers (id, kind, name, base_url, enabled, priority, headers, timeout_ms, created_at, updated_at)
           VALUES (@id, @kind, @name, @base_url, @enabled, @priority, @headers, @timeout_ms, @created_at, @updated_at)
           ON CONFLICT(id) DO UPDATE SET kind=excluded.kind, name=excluded.name, base_url=excluded.base_url,
             enabled=excluded.enabled, priority=excluded.priority, headers=excluded.headers,
             timeout_ms=excluded.timeout_ms, updated_at=excluded.updated_at`,
        )
        .run({
          id: p.id,
          kind: p.kind,
          name: p.name,
          base_url: p.baseUrl,
          enabled: p.enabled ? 1 : 0,
          priority: p.priority,
          headers: JSON.stringify(p.headers),
          timeout_ms: p.timeoutMs ?? null,
          created_at: p.createdAt,
          updated_at: p.updatedAt,
        });
      const keep = new Set(p.accounts.map((a) => a.id));
      const existing = this.store.prepare('SELECT id FROM provider_accounts WHERE provider_id = ?').all(p.id) as { id: string }[];
      for (const e of existing) if (!keep.has(e.id)) this.store.prepare('DELETE FROM provider_accounts WHERE id = ?').run(e.id);
      for (const a of p.accounts) this.upsertAccount(p.id, a, p.updatedAt);
    });
  }

  private upsertAccount(providerId: string, a: ProviderAccount, now: number): void {
    this.store
      .prepare(
        `INSERT INTO provider_accounts (id, provider_id, name, api_key, enabled, priority, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET name=excluded.name, api_key=excluded.api_key, enabled=excluded.enabled, priority=excluded.priority`,
      )
      .run(a.id, providerId, a.name, storedAccount(a).apiKey, a.enabled ? 1 : 0, a.priority, now);
  }

  /** Append accounts to a provider (bulk key import). */
  addAccounts(providerId: string, accounts: ProviderAccount[], now: number): void {
    this.store.transaction(() => {
      for (const a of accounts) this.upsertAccount(providerId, a, now);
      this.store.prepare('UPDATE providers SET updated_at = ? WHERE id = ?').run(now, providerId);
    });
  }

  /** Remove one account, whatever provider it belongs to. */
  deleteAccount(id: string): void {
    this.store.prepare('DELETE FROM provider_accounts WHERE id = ?').run(id);
  }

  deleteProvider(id: string): boolean {
    return this.store.transaction(() => {
      const n = this.store.prepare('DELETE FROM providers WHERE id = ?').run(id).changes;
      this.store.prepare('DELETE FROM provider_models WHERE provider_id = ?').run(id);
      return n > 0;
    });
  }

  // ----- models ------------------------------------------------------------------------------

  /** Custom models of every provider, or of the providers in `ids`. */
  listModels(ids?: readonly string[]): ProviderModelRecord[] {
    const only = ids ? ' WHERE provider_id IN (SELECT value FROM json_each(?))' : '';
    const rows = this.store.prepare(`SELECT * FROM provider_models${only} ORDER BY provider_id, created_at, model`).all(...(ids ? [JSON.stringify(ids)] : [])) as ModelRow[];
    return rows.map((r) => ({
      provider: r.provider_id,
      spec: { ...parseJson<ModelSpec>(r.spec, { id: r.model, type: 'chat' }), id: r.model },
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }));
  }

  getModel(provider: string, model: string): ProviderModelRecord | undefined {
    const r = this.store.prepare('SELECT * FROM provider_models WHERE provider_id = ? AND model = ?').get(provider, model) as
      | ModelRow
      | undefined;
    if (!r) return undefined;
    return { provider, spec: { ...parseJson<ModelSpec>(r.spec, { id: model, type: 'chat' }), id: model }, createdAt: r.created_at, updatedAt: r.updated_at };
  }

  saveModel(provider: string, spec: ModelSpec, now: number): void {
    this.store
      .prepare(
        `INSERT INTO provider_models (provider_id, model, spec, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(provider_id, model) DO UPDATE SET spec=excluded.spec, updated_at=excluded.updated_at`,
      )
      .run(provider, spec.id, JSON.stringify(spec), now, now);
  }

  /** Replace the model list of a provider in one transaction. */
  replaceModels(provider: string, specs: ModelSpec[], now: number): void {
    this.store.transaction(() => {
      this.store.prepare('DELETE FROM provider_models WHERE provider_id = ?').run(provider);
      for (const s of specs) this.saveModel(provider, s, now);
    });
  }

  deleteModel(provider: string, model: string): boolean {
    return this.store.prepare('DELETE FROM provider_models WHERE provider_id = ? AND model = ?').run(provider, model).changes > 0;
  }

  // ----- aliases -----------------------------------------------------------------------------

  listAliases(): Map<string, string> {
    const rows = this.store.prepare('SELECT alias, model FROM aliases ORDER BY alias').all() as { alias: string; model: string }[];
    return new Map(rows.map((r) => [r.alias, r.model]));
  }

  saveAlias(alias: string, model: string, now: number): void {
    this.store
      .prepare('INSERT INTO aliases (alias, model, created_at) VALUES (?, ?, ?) ON CONFLICT(alias) DO UPDATE SET model=excluded.model')
      .run(alias, model, now);
  }

  deleteAlias(alias: string): boolean {
    return this.store.prepare('DELETE FROM aliases WHERE alias = ?').run(alias).changes > 0;
  }

  // ----- combos ------------------------------------------------------------------------------

  listCombos(): ComboConfig[] {
    const rows = this.store.prepare('SELECT * FROM combos ORDER BY name').all() as ComboRow[];
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      strategy: r.strategy as Strategy,
      targets: parseJson(r.targets, []),
      enabled: r.enabled === 1,
      ...(r.description !== null ? { description: r.description } : {}),
      ...(r.max_attempts !== null ? { maxAttempts: r.max_attempts } : {}),
      ...(r.options ? parseJson<Pick<ComboConfig, 'rules' | 'sla'>>(r.options, {}) : {}),
      source: 'api' as const,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }));
  }

  saveCombo(c: ComboConfig): void {
    this.store
      .prepare(
        `INSERT INTO combos (id, name, strategy, targets, enabled, description, max_attempts, options, created_at, updated_at)
         VALUES (@id, @name, @strategy, @targets, @enabled, @description, @max_attempts, @options, @created_at, @updated_at)
         ON CONFLICT(id) DO UPDATE SET name=excluded.name, strategy=excluded.strategy, targets=excluded.targets,
           enabled=excluded.enabled, description=excluded.description, max_attempts=excluded.max_attempts, options=excluded.options,
           updated_at=excluded.updated_at`,
      )
      .run({
        id: c.id,
        name: c.name,
        strategy: c.strategy,
        targets: JSON.stringify(c.targets),
        enabled: c.enabled ? 1 : 0,
        description: c.description ?? null,
        max_attempts: c.maxAttempts ?? null,
        options: c.rules || c.sla ? JSON.stringify({ ...(c.rules ? { rules: c.rules } : {}), ...(c.sla ? { sla: c.sla } : {}) }) : null,
        created_at: c.createdAt,
        updated_at: c.updatedAt,
      });
  }

  deleteCombo(id: string): boolean {
    return this.store.transaction(() => {
      const n = this.store.prepare('DELETE FROM combos WHERE id = ?').run(id).changes;
      this.store.prepare('DELETE FROM combo_mappings WHERE combo_id = ?').run(id);
      return n > 0;
    });
  }

  // ----- model-combo mappings ----------------------------------------------------------------

  listMappings(): ComboMapping[] {
    const rows = this.store.prepare('SELECT * FROM combo_mappings ORDER BY priority DESC, created_at, id').all() as MappingRow[];
    return rows.map((r) => ({
      id: r.id,
      pattern: r.pattern,
      comboId: r.combo_id,
      priority: r.priority,
      enabled: r.enabled === 1,
      ...(r.description !== null ? { description: r.description } : {}),
      source: 'api' as const,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }));
  }

  saveMapping(m: ComboMapping): void {
    this.store
      .prepare(
        `INSERT INTO combo_mappings (id, pattern, combo_id, priority, enabled, description, created_at, updated_at)
         VALUES (@id, @pattern, @combo_id, @priority, @enabled, @description, @created_at, @updated_at)
         ON CONFLICT(id) DO UPDATE SET pattern=excluded.pattern, combo_id=excluded.combo_id, priority=excluded.priority,
           enabled=excluded.enabled, description=excluded.description, updated_at=excluded.updated_at`,
      )
      .run({
        id: m.id,
        pattern: m.pattern,
        combo_id: m.comboId,
        priority: m.priority,
        enabled: m.enabled ? 1 : 0,
        description: m.description ?? null,
        created_at: m.createdAt,
        updated_at: m.updatedAt,
      });
  }

  deleteMapping(id: string): boolean {
    return this.store.prepare('DELETE FROM combo_mappings WHERE id = ?').run(id).changes > 0;
  }

  // ----- API keys ----------------------------------------------------------------------------

  listKeys(): ApiKeyRecord[] {
    const rows = this.store.prepare('SELECT * FROM api_keys ORDER BY created_at, id').all() as KeyRow[];
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      hash: r.key_hash,
      prefix: r.key_prefix,
      models: parseJson<string[]>(r.models, ['*']),
      scopes: parseJson<KeyScope[]>(r.scopes, ['inference']),
      enabled: r.enabled === 1,
      ...(r.expires_at !== null ? { expiresAt: r.expires_at } : {}),
      ...(r.revoked_at !== null ? { revokedAt: r.revoked_at } : {}),
      createdAt: r.created_at,
      ...(r.last_used_at !== null ? { lastUsedAt: r.last_used_at } : {}),
      ...(r.account_id !== null && r.account_id !== undefined ? { accountId: r.account_id } : {}),
      ...(r.rpm !== null && r.rpm !== undefined ? { rpm: r.rpm } : {}),
      source: 'api' as const,
    }));
  }

  saveKey(k: ApiKeyRecord): void {
    this.store
      .prepare(
        `INSERT INTO api_keys (id, name, key_hash, key_prefix, models, scopes, enabled, expires_at, revoked_at, created_at, last_used_at, account_id, rpm)
         VALUES (@id, @name, @key_hash, @key_prefix, @models, @scopes, @enabled, @expires_at, @revoked_at, @created_at, @last_used_at, @account_id, @rpm)
         ON CONFLICT(id) DO UPDATE SET name=excluded.name, models=excluded.models, scopes=excluded.scopes,
           enabled=excluded.enabled, expires_at=excluded.expires_at, revoked_at=excluded.revoked_at, rpm=excluded.rpm`,
      )
      .run({
        id: k.id,
        name: k.name,
        key_hash: k.hash,
        key_prefix: k.prefix,
        models: JSON.stringify(k.models),
        scopes: JSON.stringify(k.scopes),
        enabled: k.enabled ? 1 : 0,
        expires_at: k.expiresAt ?? null,
        revoked_at: k.revokedAt ?? null,
        created_at: k.createdAt,
        last_used_at: k.lastUsedAt ?? null,
        account_id: k.accountId ?? null,
        rpm: k.rpm ?? null,
      });
  }

  deleteKey(id: string): boolean {
    return this.store.prepare('DELETE FROM api_keys WHERE id = ?').run(id).changes > 0;
  }

  /** Batched `last_used_at` updates (one transaction per flush). */
  touchKeys(lastUsed: Map<string, number>): void {
    if (lastUsed.size === 0) return;
    const st = this.store.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?');
    this.store.transaction(() => {
      for (const [id, ts] of lastUsed) st.run(ts, id);
    });
  }

  // ----- pricing -----------------------------------------------------------------------------

  listPricing(): PriceEntry[] {
    const rows = this.store.prepare('SELECT * FROM pricing ORDER BY model').all() as {
      model: string;
      input: number | null;
      output: number | null;
      cached: number | null;
      media: string | null;
    }[];
    return rows.map((r) => ({
      model: r.model,
      ...(r.input !== null ? { input: r.input } : {}),
      ...(r.output !== null ? { output: r.output } : {}),
      ...(r.cached !== null ? { cached: r.cached } : {}),
      ...(r.media ? (JSON.parse(r.media) as MediaPrice) : {}),
      source: 'api' as const,
    }));
  }

  savePrice(p: PriceEntry, now: number): void {
    this.store
      .prepare(
        `INSERT INTO pricing (model, input, output, cached, media, updated_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT(model) DO UPDATE SET input=excluded.input, output=excluded.output, cached=excluded.cached, media=excluded.media, updated_at=excluded.updated_at`,
      )
      .run(p.model, p.input ?? null, p.output ?? null, p.cached ?? null, mediaJson(p), now);
  }

  deletePrice(model: string): boolean {
    return this.store.prepare('DELETE FROM pricing WHERE model = ?').run(model).changes > 0;
  }

  // ----- settings and sessions ---------------------------------------------------------------

  getSetting(key: string): string | undefined {
    const r = this.store.prepare('SELECT value FROM settings WHERE key = ?').get(key) as { value: string } | undefined;
    return r?.value;
  }

  setSetting(key: string, value: string): void {
    this.store.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value').run(key, value);
  }

  listSessions(now: number): { tokenHash: string; expiresAt: number }[] {
    this.store.prepare('DELETE FROM sessions WHERE expires_at <= ?').run(now);
    const rows = this.store.prepare('SELECT token_hash, expires_at FROM sessions').all() as { token_hash: string; expires_at: number }[];
    return rows.map((r) => ({ tokenHash: r.token_hash, expiresAt: r.expires_at }));
  }

  /** True when login sessions live in a store several daemons share (read them here, do not cache). */
  get sessionsShared(): boolean {
    return false;
  }

  /** Expiry of a login session, if it exists. */
  sessionExpiry(tokenHash: string): number | undefined {
    const r = this.store.prepare('SELECT expires_at FROM sessions WHERE token_hash = ?').get(tokenHash) as { expires_at: number } | undefined;
    return r?.expires_at;
  }

  saveSession(tokenHash: string, now: number, expiresAt: number): void {
    this.store.prepare('INSERT INTO sessions (token_hash, created_at, expires_at) VALUES (?, ?, ?)').run(tokenHash, now, expiresAt);
  }

  deleteSession(tokenHash: string): void {
    this.store.prepare('DELETE FROM sessions WHERE token_hash = ?').run(tokenHash);
  }

  deleteAllSessions(): void {
    this.store.prepare('DELETE FROM sessions').run();
  }

  // ----- request log -------------------------------------------------------------------------

  insertRequestLogs(entries: readonly RequestLogEntry[]): void {
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

  queryRequestLogs(q: LogQuery): { total: number; rows: RequestLogRow[] } {
    const { where, args } = this.logFilter(q);
    // Filters vary per call; these statements are prepared uncached (the SQL text has few variants anyway).
    const total = (this.store.prepare(`SELECT COUNT(*) AS n FROM request_log ${where}`).get(...args) as { n: number }).n;
    const rows = this.store
      .prepare(`SELECT * FROM request_log ${where} ORDER BY id DESC LIMIT ? OFFSET ?`)
      .all(...args, q.limit, q.offset) as Record<string, unknown>[];
    return { total, rows: rows.map(toLogRow) };
  }

  /** Aggregates per period (`day` or `hour`), optionally grouped by provider, model, combo, key or modality. */
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
  purgeRequestHistory(before: number): { requestLogs: number; compressionLogs: number } {
    return this.store.transaction(() => ({
      requestLogs: this.store.prepare('DELETE FROM request_log WHERE ts < ?').run(before).changes,
      compressionLogs: this.store.prepare('DELETE FROM compression_log WHERE ts < ?').run(before).changes,
    }));
  }

  history(q: { since: number; until?: number; period: 'day' | 'hour'; groupBy?: 'provider' | 'model' | 'combo' | 'api_key_id' | 'modality' }): HistoryBucket[] {
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
    attempts: parseJson<AttemptLog[]>(r.attempts as string, []),
    clientAborted: r.client_aborted === 1,
  };
}

function omitUndefined<T extends Record<string, unknown>>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

/** The media prices of an entry as stored (null when it has none). */
function mediaJson(p: PriceEntry): string | null {
  const m: MediaPrice = {};
  for (const k of MEDIA_PRICE_FIELDS) if (p[k] !== undefined && p[k] !== null) (m as Record<string, unknown>)[k] = p[k];
  return Object.keys(m).length > 0 ? JSON.stringify(m) : null;
}
