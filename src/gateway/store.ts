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
import type { Store } from '../store/index.js';
import type { SchemaStep } from './schema.js';
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

/**
 * Provider connections and their accounts, custom models, aliases, combos, model-combo mappings, API
 * keys (hashed), pricing overrides and settings: this capability's share of the gateway's SQLite
 * migrations (placed by version in gateway/schema.ts).
 */
export const CONFIG_SCHEMA: SchemaStep[] = [
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
`,
  },
  {
    // Prices of media (per image, per second of audio, per character, per search unit, per request), kept
    // as one JSON object beside the token prices.
    version: 3,
    up: `ALTER TABLE pricing ADD COLUMN media TEXT;`,
  },
  {
    // An API key pinned to a provider account (registered keys ask for it).
    version: 12,
    up: `ALTER TABLE api_keys ADD COLUMN account_id TEXT;`,
  },
  {
    // Options of the rules and sla-aware combo strategies ({rules?, sla?} as JSON).
    version: 15,
    up: `ALTER TABLE combos ADD COLUMN options TEXT;`,
  },
  {
    // Requests per minute per API key.
    version: 19,
    up: `ALTER TABLE api_keys ADD COLUMN rpm INTEGER;`,
  },
];

/** Login sessions of the management UI (token hashes): this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
export const SESSIONS_SCHEMA: SchemaStep[] = [
  {
    version: 1,
    up: `
CREATE TABLE sessions (
  token_hash TEXT PRIMARY KEY,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
`,
  },
];

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

  /** Per combo and target counts since `since` (seeds the in-memory combo metrics at start). */
  comboTargetCounts(since: number): { combo: string; target: string; requests: number; errors: number; avgLatency: number }[] {
    return this.store
      .prepare(
        `SELECT combo, provider || '/' || model AS target, COUNT(*) AS requests, SUM(status >= 400) AS errors, AVG(latency_ms) AS avgLatency
         FROM request_log WHERE combo IS NOT NULL AND provider IS NOT NULL AND ts >= ? GROUP BY combo, target`,
      )
      .all(since) as { combo: string; target: string; requests: number; errors: number; avgLatency: number }[];
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
