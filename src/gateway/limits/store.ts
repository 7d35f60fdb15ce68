/** SQL of budgets and token limits, and the request-log sums their windows start from (the SQL of request-log/reader.ts, read synchronously). */
import type { Store } from '../../store/index.js';
import type { ResetInterval } from './windows.js';
import type { SchemaStep } from '../schema.js';
import { SPEND_SQL, tokensQuery } from '../request-log/reader.js';

/** Budgets and token limits: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
export const LIMITS_SCHEMA: SchemaStep[] = [
  {
    version: 2,
    up: `
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
    // Hourly budgets.
    version: 12,
    up: `ALTER TABLE budgets ADD COLUMN hourly_limit_usd REAL;`,
  },
];

export interface BudgetConfig {
  apiKeyId: string;
  hourlyLimitUsd?: number;
  dailyLimitUsd?: number;
  weeklyLimitUsd?: number;
  monthlyLimitUsd?: number;
  warningThreshold: number;
  resetInterval?: ResetInterval;
  resetTime: string;
  createdAt: number;
  updatedAt: number;
}

export type ScopeType = 'model' | 'provider' | 'global';

export interface TokenLimit {
  id: string;
  apiKeyId: string;
  scopeType: ScopeType;
  scopeValue?: string;
  tokenLimit: number;
  resetInterval: ResetInterval;
  resetTime: string;
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
}

interface BudgetRow {
  api_key_id: string;
  hourly_limit_usd?: number | null;
  daily_limit_usd: number | null;
  weekly_limit_usd: number | null;
  monthly_limit_usd: number | null;
  warning_threshold: number;
  reset_interval: string | null;
  reset_time: string;
  created_at: number;
  updated_at: number;
}

interface LimitRow {
  id: string;
  api_key_id: string;
  scope_type: string;
  scope_value: string | null;
  token_limit: number;
  reset_interval: string;
  reset_time: string;
  enabled: number;
  created_at: number;
  updated_at: number;
}

export class LimitsStore {
  constructor(private readonly store: Store) {}

  listBudgets(): BudgetConfig[] {
    const rows = this.store.prepare('SELECT * FROM budgets ORDER BY api_key_id').all() as BudgetRow[];
    return rows.map((r) => ({
      apiKeyId: r.api_key_id,
      ...(r.hourly_limit_usd !== null && r.hourly_limit_usd !== undefined ? { hourlyLimitUsd: r.hourly_limit_usd } : {}),
      ...(r.daily_limit_usd !== null ? { dailyLimitUsd: r.daily_limit_usd } : {}),
      ...(r.weekly_limit_usd !== null ? { weeklyLimitUsd: r.weekly_limit_usd } : {}),
      ...(r.monthly_limit_usd !== null ? { monthlyLimitUsd: r.monthly_limit_usd } : {}),
      warningThreshold: r.warning_threshold,
      ...(r.reset_interval !== null ? { resetInterval: r.reset_interval as ResetInterval } : {}),
      resetTime: r.reset_time,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }));
  }

  saveBudget(b: BudgetConfig): void {
    this.store
      .prepare(
        `INSERT INTO budgets (api_key_id, hourly_limit_usd, daily_limit_usd, weekly_limit_usd, monthly_limit_usd, warning_threshold, reset_interval, reset_time, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(api_key_id) DO UPDATE SET hourly_limit_usd=excluded.hourly_limit_usd, daily_limit_usd=excluded.daily_limit_usd, weekly_limit_usd=excluded.weekly_limit_usd,
           monthly_limit_usd=excluded.monthly_limit_usd, warning_threshold=excluded.warning_threshold, reset_interval=excluded.reset_interval,
           reset_time=excluded.reset_time, updated_at=excluded.updated_at`,
      )
      .run(
        b.apiKeyId,
        b.hourlyLimitUsd ?? null,
        b.dailyLimitUsd ?? null,
        b.weeklyLimitUsd ?? null,
        b.monthlyLimitUsd ?? null,
        b.warningThreshold,
        b.resetInterval ?? null,
        b.resetTime,
        b.createdAt,
        b.updatedAt,
      );
  }

  deleteBudget(apiKeyId: string): boolean {
    return this.store.prepare('DELETE FROM budgets WHERE api_key_id = ?').run(apiKeyId).changes > 0;
  }

  listLimits(): TokenLimit[] {
    const rows = this.store.prepare('SELECT * FROM token_limits ORDER BY api_key_id, created_at, id').all() as LimitRow[];
    return rows.map((r) => ({
      id: r.id,
      apiKeyId: r.api_key_id,
      scopeType: r.scope_type as ScopeType,
      ...(r.scope_value !== null ? { scopeValue: r.scope_value } : {}),
      tokenLimit: r.token_limit,
      resetInterval: r.reset_interval as ResetInterval,
      resetTime: r.reset_time,
      enabled: r.enabled === 1,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }));
  }

  saveLimit(l: TokenLimit): void {
    this.store
      .prepare(
        `INSERT INTO token_limits (id, api_key_id, scope_type, scope_value, token_limit, reset_interval, reset_time, enabled, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET api_key_id=excluded.api_key_id, scope_type=excluded.scope_type, scope_value=excluded.scope_value,
           token_limit=excluded.token_limit, reset_interval=excluded.reset_interval, reset_time=excluded.reset_time,
           enabled=excluded.enabled, updated_at=excluded.updated_at`,
      )
      .run(l.id, l.apiKeyId, l.scopeType, l.scopeValue ?? null, l.tokenLimit, l.resetInterval, l.resetTime, l.enabled ? 1 : 0, l.createdAt, l.updatedAt);
  }

  deleteLimit(id: string): boolean {
    return this.store.prepare('DELETE FROM token_limits WHERE id = ?').run(id).changes > 0;
  }

  /** USD a key spent in [since, until). */
  spend(apiKeyId: string, since: number, until: number): number {
    return (this.store.prepare(SPEND_SQL).get(apiKeyId, since, until) as { c: number | null }).c ?? 0;
  }

  /** What the log holds beyond `spend` when the log is read asynchronously (the shared one); else nothing. */
  spendLater(_apiKeyId: string, _since: number, _until: number): Promise<number> | undefined {
    return undefined;
  }

  tokensLater(_apiKeyId: string, _scope: ScopeType, _value: string | undefined, _since: number, _until: number): Promise<number> | undefined {
    return undefined;
  }

  /** Tokens (in + out) a key used in [since, until) within a limit's scope. */
  tokens(apiKeyId: string, scope: ScopeType, value: string | undefined, since: number, until: number): number {
    const q = tokensQuery(apiKeyId, scope, value, since, until);
    return (this.store.prepare(q.sql).get(...q.args) as { t: number | null }).t ?? 0;
  }
}
