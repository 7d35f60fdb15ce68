/**
 * Routing policies: for every key (global) or one API key, models allowed and denied (ids or globs,
 * matched against the model asked for and each target it resolves to; deny wins) and a ceiling on
 * max tokens. A request a policy refuses gets 403 in its own wire format, naming the policy.
 */
import type { Store } from '../../store/index.js';
import { modelAllowed } from '../auth.js';
import type { SchemaStep } from '../schema.js';
import { GatewayError } from '../errors.js';

/** Routing policies: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
export const POLICIES_SCHEMA: SchemaStep[] = [
  {
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
`,
  },
];

export interface Policy {
  id: string;
  name: string;
  /** Undefined: every request. */
  apiKeyId?: string;
  allowModels: string[];
  denyModels: string[];
  maxTokens?: number;
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
}

const row = (r: Record<string, unknown>): Policy => ({
  id: r.id as string,
  name: r.name as string,
  ...(r.api_key_id !== null ? { apiKeyId: r.api_key_id as string } : {}),
  allowModels: JSON.parse(r.allow_models as string) as string[],
  denyModels: JSON.parse(r.deny_models as string) as string[],
  ...(r.max_tokens !== null ? { maxTokens: r.max_tokens as number } : {}),
  enabled: r.enabled === 1,
  createdAt: r.created_at as number,
  updatedAt: r.updated_at as number,
});

export class Policies {
  /** Enabled policies, cached: every inference request reads them. */
  private active: Policy[] | undefined;
  /** `applicable` of each key asked about, for the current `active`. */
  private readonly byKey = new Map<string | undefined, Policy[]>();

  constructor(private readonly store: Store) {}

  list(): Policy[] {
    return (this.store.prepare('SELECT * FROM policies ORDER BY created_at, id').all() as Record<string, unknown>[]).map(row);
  }

  get(id: string): Policy | undefined {
    const r = this.store.prepare('SELECT * FROM policies WHERE id = ?').get(id) as Record<string, unknown> | undefined;
    return r ? row(r) : undefined;
  }

  save(p: Policy): void {
    this.store
      .prepare(
        `INSERT INTO policies (id, name, api_key_id, allow_models, deny_models, max_tokens, enabled, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET name = excluded.name, api_key_id = excluded.api_key_id, allow_models = excluded.allow_models, deny_models = excluded.deny_models,
           max_tokens = excluded.max_tokens, enabled = excluded.enabled, updated_at = excluded.updated_at`,
      )
      .run(p.id, p.name, p.apiKeyId ?? null, JSON.stringify(p.allowModels), JSON.stringify(p.denyModels), p.maxTokens ?? null, p.enabled ? 1 : 0, p.createdAt, p.updatedAt);
    this.active = undefined;
  }

  delete(id: string): boolean {
    this.active = undefined;
    return this.store.prepare('DELETE FROM policies WHERE id = ?').run(id).changes > 0;
  }

  /** The enabled policies that apply to a key (the unkeyed ones and its own), kept per key until a change. */
  private applicable(apiKeyId: string | undefined): Policy[] {
    if (this.active === undefined) {
      this.active = this.list().filter((p) => p.enabled);
      this.byKey.clear();
    }
    if (this.active.length === 0) return this.active;
    let out = this.byKey.get(apiKeyId);
    if (!out) {
      if (this.byKey.size >= 10_000) this.byKey.clear();
      this.byKey.set(apiKeyId, (out = this.active.filter((p) => p.apiKeyId === undefined || p.apiKeyId === apiKeyId)));
    }
    return out;
  }

  /** Whether any enabled policy applies to this key (callers skip building what the checks take otherwise). */
  appliesTo(apiKeyId: string | undefined): boolean {
    return this.applicable(apiKeyId).length > 0;
  }

  /** 403 when a policy refuses the model (asked for, or any target it resolves to). */
  checkModel(apiKeyId: string | undefined, requested: string, targets: readonly string[]): void {
    for (const p of this.applicable(apiKeyId)) {
      const names = [requested, ...targets];
      const denied = names.find((m) => p.denyModels.length > 0 && modelAllowed(p.denyModels, m));
      if (denied) throw new GatewayError('forbidden', `policy ${p.name} denies model ${denied}`, { code: 'policy_denied' });
      // Allowed: the model asked for, or (an alias, a combo) every target it resolves to.
      if (p.allowModels.length > 0 && !modelAllowed(p.allowModels, requested) && !(targets.length > 0 && targets.every((t) => modelAllowed(p.allowModels, t)))) {
        throw new GatewayError('forbidden', `policy ${p.name} does not allow model ${requested}`, { code: 'policy_denied' });
      }
    }
  }

  /** The max-tokens ceiling for a request: 403 above it; an unset max_tokens gets the ceiling. */
  maxTokens(apiKeyId: string | undefined, asked: number | undefined): number | undefined {
    let ceiling: number | undefined;
    let by = '';
    for (const p of this.applicable(apiKeyId)) {
      if (p.maxTokens !== undefined && (ceiling === undefined || p.maxTokens < ceiling)) {
        ceiling = p.maxTokens;
        by = p.name;
      }
    }
    if (ceiling === undefined) return asked;
    if (asked !== undefined && asked > ceiling) throw new GatewayError('forbidden', `policy ${by} allows at most ${ceiling} max tokens; this request asks for ${asked}`, { code: 'policy_denied' });
    return asked ?? ceiling;
  }
}
