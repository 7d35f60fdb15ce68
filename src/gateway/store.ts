/**
 * The gateway's configuration in its SQLite file (`database/gateway.db`): provider connections and
 * their accounts, custom models, aliases, combos, model-combo mappings, API keys (hashed), pricing
 * overrides and settings. GatewayStore also opens the other capabilities' stores on the same file
 * (memory, files, batches, webhook deliveries, the request log, login sessions: each in its own
 * folder, written once for both databases on the kit's query layer through sql.ts), and SharedConfigStore (shared/config-store.ts) replaces it
 * when several daemons share a database. The schema is assembled in schema.ts.
 */
import type { MemoryData } from './memory/data.js';
import { MemoryStore } from './memory/store.js';
import { storedAccount } from './oauth/account-key.js';
import { FileStore, type FileData } from './files/store.js';
import { BatchStore, type BatchData } from './batches/store.js';
import { SqlDeliveryQueue, type DeliveryQueue } from './webhooks/store.js';
import { RequestLogStore, type RequestLogReader } from './request-log/reader.js';
import { sqliteSql } from './sql.js';
import { SqliteRequestLog, type RequestLogEntry } from './request-log/store.js';
import { SqliteSessions } from './sessions/store.js';
import { parseJsonColumn, type Store } from '../store/index.js';
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
    return new MemoryStore(sqliteSql(this.store));
  }

  /** Uploaded files (rows here, bytes on disk). */
  fileData(): FileData {
    return new FileStore(sqliteSql(this.store));
  }

  /** Webhook deliveries waiting to be sent, and their attempts. */
  deliveryQueue(): DeliveryQueue {
    return new SqlDeliveryQueue(sqliteSql(this.store));
  }

  /** Batches and their line results. */
  batchData(): BatchData {
    return new BatchStore(sqliteSql(this.store));
  }

  private reader?: RequestLogReader;

  /** Asynchronous reads of the request log (routes use these: the log may be shared). */
  get logs(): RequestLogReader {
    return (this.reader ??= new RequestLogStore(sqliteSql(this.store), (before) => this.store.prepare('DELETE FROM compression_log WHERE ts < ?').run(before).changes));
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
      headers: parseJsonColumn<Record<string, string>>(r.headers, {}),
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
      spec: { ...parseJsonColumn<ModelSpec>(r.spec, { id: r.model, type: 'chat' }), id: r.model },
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }));
  }

  getModel(provider: string, model: string): ProviderModelRecord | undefined {
    const r = this.store.prepare('SELECT * FROM provider_models WHERE provider_id = ? AND model = ?').get(provider, model) as
      | ModelRow
      | undefined;
    if (!r) return undefined;
    return { provider, spec: { ...parseJsonColumn<ModelSpec>(r.spec, { id: model, type: 'chat' }), id: model }, createdAt: r.created_at, updatedAt: r.updated_at };
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
      targets: parseJsonColumn(r.targets, []),
      enabled: r.enabled === 1,
      ...(r.description !== null ? { description: r.description } : {}),
      ...(r.max_attempts !== null ? { maxAttempts: r.max_attempts } : {}),
      ...(r.options ? parseJsonColumn<Pick<ComboConfig, 'rules' | 'sla'>>(r.options, {}) : {}),
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
      models: parseJsonColumn<string[]>(r.models, ['*']),
      scopes: parseJsonColumn<KeyScope[]>(r.scopes, ['inference']),
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

  // ----- settings and login sessions ------------------------------------------------------------

  getSetting(key: string): string | undefined {
    const r = this.store.prepare('SELECT value FROM settings WHERE key = ?').get(key) as { value: string } | undefined;
    return r?.value;
  }

  setSetting(key: string, value: string): void {
    this.store.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value').run(key, value);
  }

  /** Login sessions of the management UI, their expired ones dropped first (sessions/store.ts). */
  listSessions(now: number): { tokenHash: string; expiresAt: number }[] {
    return this.sessions.list(now);
  }

  /** True when login sessions live in a store several daemons share (read them here, do not cache). */
  get sessionsShared(): boolean {
    return false;
  }

  /** Expiry of a login session, if it exists. */
  sessionExpiry(tokenHash: string): number | undefined {
    return this.sessions.expiry(tokenHash);
  }

  saveSession(tokenHash: string, now: number, expiresAt: number): void {
    this.sessions.save(tokenHash, now, expiresAt);
  }

  deleteSession(tokenHash: string): void {
    this.sessions.delete(tokenHash);
  }

  deleteAllSessions(): void {
    this.sessions.deleteAll();
  }

  private get sessions(): SqliteSessions {
    return (this.localSessions ??= new SqliteSessions(this.store));
  }

  private localSessions?: SqliteSessions;

  // ----- request log -------------------------------------------------------------------------

  /** Append rows to the request log (the shared store sends them to the cluster's log instead). */
  insertRequestLogs(entries: readonly RequestLogEntry[]): void {
    (this.localLog ??= new SqliteRequestLog(this.store)).insert(entries);
  }

  private localLog?: SqliteRequestLog;
}

/** The media prices of an entry as stored (null when it has none). */
function mediaJson(p: PriceEntry): string | null {
  const m: MediaPrice = {};
  for (const k of MEDIA_PRICE_FIELDS) if (p[k] !== undefined && p[k] !== null) (m as Record<string, unknown>)[k] = p[k];
  return Object.keys(m).length > 0 ? JSON.stringify(m) : null;
}
