/**
 * Registered keys: gateway API keys issued by a program through /api/v1/registered-keys (a key with
 * the `keys` or `management` scope, or the control socket), optionally limited to one provider or
 * pinned to one of its accounts, with hourly and daily USD budgets and an expiry. Issuance has
 * quotas (active keys per issuer, keys issued per issuer per hour, active keys per account); a refusal
 * is a 429 naming the quota. `idempotencyKey` makes a retried issuance return the same key.
 */
import { randomBytes } from 'node:crypto';
import type { Store } from '../../store/index.js';
import { sha256Hex } from '../config-file.js';
import type { Budgets } from '../limits/budgets.js';
import { DEFAULT_WARNING_THRESHOLD } from '../limits/budgets.js';
import type { GatewayState } from '../state.js';
import type { ApiKeyRecord } from '../types.js';
import { generateKey, keyPrefix } from '../validate.js';
import { modelAllowed } from '../auth.js';
import type { SchemaStep } from '../schema.js';
import { GatewayError } from '../errors.js';

/** Registered keys: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
export const REGISTERED_KEYS_SCHEMA: SchemaStep[] = [
  {
    // API keys issued through /api/v1/registered-keys, pinned to a provider account when asked.
    version: 12,
    up: `
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
];

export interface RegisteredKeyQuotas {
  maxActivePerIssuer: number;
  maxIssuedPerHour: number;
  maxActivePerAccount: number;
}

export const DEFAULT_QUOTAS: RegisteredKeyQuotas = { maxActivePerIssuer: 100, maxIssuedPerHour: 30, maxActivePerAccount: 50 };

/** Who issues: an API key (its id and models) or the control socket. */
export interface Issuer {
  id: string;
  models: string[];
  /** Sees and revokes every registered key (management scope, control socket), not only its own. */
  all: boolean;
}

export interface IssueRequest {
  name?: string;
  provider?: string;
  accountId?: string;
  idempotencyKey?: string;
  expiresAt?: number;
  dailyBudget?: number;
  hourlyBudget?: number;
}

interface Row {
  key_id: string;
  issuer: string;
  provider: string | null;
  account_id: string | null;
  idempotency_key: string | null;
  created_at: number;
}

export interface QuotaCheck {
  allowed: boolean;
  reasons: string[];
  provider: string | null;
  accountId: string | null;
  limits: RegisteredKeyQuotas;
  usage: { activeForIssuer: number; issuedLastHour: number; activeForAccount: number | null };
  /** Seconds until the hourly quota frees a slot, when it is what refuses. */
  retryAfterSeconds?: number;
}

const HOUR = 3_600_000;
/** How long a retried issuance gets the raw key again (afterwards: the record, without the key). */
const REPLAY_MS = 10 * 60_000;

export class RegisteredKeys {
  /** idempotency replays: `issuer\0idempotencyKey` → the first answer, raw key included, for REPLAY_MS. */
  private readonly replays = new Map<string, { at: number; answer: Record<string, unknown> }>();

  constructor(
    private readonly store: Store,
    private readonly state: GatewayState,
    private readonly budgets: Budgets,
    private readonly quotas: () => RegisteredKeyQuotas,
    private readonly now: () => number,
    private readonly onIssued: (k: ApiKeyRecord) => void,
  ) {}

  private rows(issuer?: string): Row[] {
    return (issuer === undefined ? this.store.prepare('SELECT * FROM registered_keys ORDER BY created_at, key_id').all() : this.store.prepare('SELECT * FROM registered_keys WHERE issuer = ? ORDER BY created_at, key_id').all(issuer)) as Row[];
  }

  private row(keyId: string): Row | undefined {
    return this.store.prepare('SELECT * FROM registered_keys WHERE key_id = ?').get(keyId) as Row | undefined;
  }

  private active(r: Row, now: number): boolean {
    const k = this.state.catalog.keysById.get(r.key_id);
    return k !== undefined && k.revokedAt === undefined && (k.expiresAt === undefined || k.expiresAt > now);
  }

  /** The provider an account belongs to, or a 400. */
  private providerOfAccount(accountId: string): string {
    for (const p of this.state.catalog.providers.values()) if (p.config.accounts.some((a) => a.id === accountId)) return p.config.id;
    throw new GatewayError('invalid', `accountId: no provider account ${JSON.stringify(accountId)}`);
  }

  /** Provider and account as asked, checked (400 for unknown ones or an account of another provider). */
  private target(provider: string | undefined, accountId: string | undefined): { provider?: string; accountId?: string } {
    if (accountId !== undefined) {
      const owner = this.providerOfAccount(accountId);
      if (provider !== undefined && provider !== owner) throw new GatewayError('invalid', `accountId ${accountId} belongs to provider ${owner}, not ${provider}`);
      return { provider: owner, accountId };
    }
    if (provider !== undefined && !this.state.catalog.providers.has(provider)) throw new GatewayError('invalid', `provider: no provider ${JSON.stringify(provider)}`);
    return provider !== undefined ? { provider } : {};
  }

  check(issuer: Issuer, provider?: string, accountId?: string): QuotaCheck {
    const t = this.target(provider, accountId);
    const now = this.now();
    const q = this.quotas();
    const mine = this.rows(issuer.id);
    const activeForIssuer = mine.filter((r) => this.active(r, now)).length;
    const lastHour = mine.filter((r) => r.created_at > now - HOUR);
    const activeForAccount = t.accountId !== undefined ? this.rows().filter((r) => r.account_id === t.accountId && this.active(r, now)).length : null;
    const reasons: string[] = [];
    let retryAfterSeconds: number | undefined;
    if (activeForIssuer >= q.maxActivePerIssuer) reasons.push(`this issuer has ${activeForIssuer} active registered keys (limit ${q.maxActivePerIssuer})`);
    if (lastHour.length >= q.maxIssuedPerHour) {
      reasons.push(`this issuer issued ${lastHour.length} keys in the last hour (limit ${q.maxIssuedPerHour})`);
      retryAfterSeconds = Math.max(1, Math.ceil((Math.min(...lastHour.map((r) => r.created_at)) + HOUR - now) / 1000));
    }
    if (activeForAccount !== null && activeForAccount >= q.maxActivePerAccount) reasons.push(`account ${t.accountId} has ${activeForAccount} active registered keys (limit ${q.maxActivePerAccount})`);
    if (t.accountId !== undefined) {
      const acc = [...this.state.catalog.providers.get(t.provider!)!.config.accounts].find((a) => a.id === t.accountId)!;
      if (!acc.enabled) reasons.push(`account ${t.accountId} is disabled`);
    }
    if (t.provider !== undefined && this.modelsFor(issuer, t.provider).length === 0) reasons.push(`the issuing key may not use provider ${t.provider}`);
    return {
      allowed: reasons.length === 0,
      reasons,
      provider: t.provider ?? null,
      accountId: t.accountId ?? null,
      limits: q,
      usage: { activeForIssuer, issuedLastHour: lastHour.length, activeForAccount },
      ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
    };
  }

  /** The models a key issued for `provider` may use: never wider than the issuer's. */
  private modelsFor(issuer: Issuer, provider: string | undefined): string[] {
    if (provider === undefined) return issuer.models;
    if (modelAllowed(issuer.models, `${provider}/*`) || issuer.models.includes('*')) return [`${provider}/*`];
    return issuer.models.filter((m) => m.startsWith(`${provider}/`));
  }

  /** Issue a key: 201 with the raw key; a repeated idempotencyKey answers 200 with the same key. */
  async issue(issuer: Issuer, req: IssueRequest): Promise<{ status: number; body: Record<string, unknown> }> {
    const now = this.now();
    if (req.idempotencyKey !== undefined) {
      const prev = this.store.prepare('SELECT * FROM registered_keys WHERE issuer = ? AND idempotency_key = ?').get(issuer.id, req.idempotencyKey) as Row | undefined;
      if (prev && this.state.catalog.keysById.has(prev.key_id)) {
        const replay = this.replays.get(`${issuer.id}\0${req.idempotencyKey}`);
        if (replay && now - replay.at < REPLAY_MS) return { status: 200, body: { ...replay.answer, idempotentReplay: true } };
        return { status: 200, body: { ...this.view(prev, now), idempotentReplay: true, notice: 'already issued for this idempotencyKey; the key itself is shown only when it is issued' } };
      }
    }
    if (req.expiresAt !== undefined && req.expiresAt <= now) throw new GatewayError('invalid', 'expiresAt is in the past');
    this.pruneRevoked(now);
    const q = this.check(issuer, req.provider, req.accountId);
    if (!q.allowed) {
      throw new GatewayError('limited', `registered key refused by quota: ${q.reasons.join('; ')}`, {
        code: 'quota_exceeded',
        ...(q.retryAfterSeconds !== undefined ? { retryAfterS: q.retryAfterSeconds } : {}),
      });
    }
    const raw = generateKey();
    const id = `key_${randomBytes(9).toString('base64url')}`;
    const k: ApiKeyRecord = {
      id,
      name: req.name ?? `registered-${id.slice(4, 12)}`,
      hash: sha256Hex(raw),
      prefix: keyPrefix(raw),
      models: this.modelsFor(issuer, q.provider ?? undefined),
      scopes: ['inference'],
      enabled: true,
      ...(req.expiresAt !== undefined ? { expiresAt: req.expiresAt } : {}),
      ...(q.accountId !== null ? { accountId: q.accountId } : {}),
      createdAt: now,
      source: 'api',
    };
    const row: Row = { key_id: id, issuer: issuer.id, provider: q.provider, account_id: q.accountId, idempotency_key: req.idempotencyKey ?? null, created_at: now };
    this.store.transaction(() => {
      // A revoked key's idempotencyKey may be used again.
      if (row.idempotency_key !== null) this.store.prepare('UPDATE registered_keys SET idempotency_key = NULL WHERE issuer = ? AND idempotency_key = ?').run(row.issuer, row.idempotency_key);
      this.state.db.saveKey(k);
      this.store.prepare('INSERT INTO registered_keys (key_id, issuer, provider, account_id, idempotency_key, created_at) VALUES (?, ?, ?, ?, ?, ?)').run(row.key_id, row.issuer, row.provider, row.account_id, row.idempotency_key, row.created_at);
    });
    await this.state.commit({ keys: true });
    if (req.dailyBudget !== undefined || req.hourlyBudget !== undefined) {
      this.budgets.set({
        apiKeyId: id,
        ...(req.hourlyBudget ? { hourlyLimitUsd: req.hourlyBudget } : {}),
        ...(req.dailyBudget ? { dailyLimitUsd: req.dailyBudget } : {}),
        warningThreshold: DEFAULT_WARNING_THRESHOLD,
        resetTime: '00:00',
        createdAt: now,
        updatedAt: now,
      });
    }
    this.onIssued(k);
    const answer = { ...this.view(row, now), key: raw, notice: 'store this key now: it is not shown again' };
    if (req.idempotencyKey !== undefined) {
      for (const [key, v] of this.replays) if (now - v.at >= REPLAY_MS) this.replays.delete(key);
      this.replays.set(`${issuer.id}\0${req.idempotencyKey}`, { at: now, answer });
    }
    return { status: 201, body: answer };
  }

  /** Rows of revoked keys older than the hourly window are no longer needed. */
  private pruneRevoked(now: number): void {
    // The keys come from the gateway store (with shared storage they are not in this file's api_keys).
    const live = JSON.stringify(this.state.db.listKeys().map((k) => k.id));
    this.store.prepare('DELETE FROM registered_keys WHERE created_at < ? AND key_id NOT IN (SELECT value FROM json_each(?))').run(now - HOUR, live);
  }

  list(issuer: Issuer): Record<string, unknown>[] {
    const now = this.now();
    return this.rows(issuer.all ? undefined : issuer.id)
      .filter((r) => this.state.catalog.keysById.has(r.key_id))
      .map((r) => this.view(r, now));
  }

  /** One registered key the issuer may see, or a 404. */
  get(issuer: Issuer, keyId: string): Record<string, unknown> {
    return this.view(this.visible(issuer, keyId), this.now());
  }

  private visible(issuer: Issuer, keyId: string): Row {
    const r = this.row(keyId);
    if (!r || (!issuer.all && r.issuer !== issuer.id) || !this.state.catalog.keysById.has(keyId)) throw new GatewayError('not-found', `registered key ${keyId} not found`);
    return r;
  }

  /** Revoke = delete: the key stops working at once; its budget goes with it. */
  async revoke(issuer: Issuer, keyId: string): Promise<ApiKeyRecord> {
    this.visible(issuer, keyId);
    const k = this.state.catalog.keysById.get(keyId)!;
    // The registered_keys row stays for an hour: keys issued per hour count revoked ones too.
    this.state.db.deleteKey(keyId);
    this.budgets.remove(keyId);
    await this.state.commit({ keys: true });
    return k;
  }

  private view(r: Row, now: number): Record<string, unknown> {
    const k = this.state.catalog.keysById.get(r.key_id);
    const b = this.budgets.get(r.key_id);
    const iso = (ms: number) => new Date(ms).toISOString();
    return {
      id: r.key_id,
      name: k?.name ?? null,
      prefix: k?.prefix ?? null,
      models: k?.models ?? [],
      provider: r.provider,
      accountId: r.account_id,
      issuer: r.issuer,
      idempotencyKey: r.idempotency_key,
      status: !k ? 'deleted' : k.expiresAt !== undefined && k.expiresAt <= now ? 'expired' : 'active',
      createdAt: iso(r.created_at),
      expiresAt: k?.expiresAt !== undefined ? iso(k.expiresAt) : null,
      lastUsedAt: k?.lastUsedAt !== undefined ? iso(k.lastUsedAt) : null,
      dailyBudget: b?.dailyLimitUsd ?? null,
      hourlyBudget: b?.hourlyLimitUsd ?? null,
      ...(b ? { budget: this.budgets.view(b, now) } : {}),
    };
  }
}

/** ctl.yaml `gateway.registered_keys`: issuance quotas (max_active_per_issuer, max_issued_per_hour, max_active_per_account). */
export function registeredKeyQuotas(config: Record<string, unknown>): RegisteredKeyQuotas {
  const q = config.registered_keys;
  if (q === undefined || q === null) return DEFAULT_QUOTAS;
  if (typeof q !== 'object' || Array.isArray(q)) throw new Error('ctl.yaml gateway.registered_keys must be a mapping');
  const o = q as Record<string, unknown>;
  const names = { max_active_per_issuer: 'maxActivePerIssuer', max_issued_per_hour: 'maxIssuedPerHour', max_active_per_account: 'maxActivePerAccount' } as const;
  const out: RegisteredKeyQuotas = { ...DEFAULT_QUOTAS };
  for (const [k, v] of Object.entries(o)) {
    if (!(k in names)) throw new Error(`ctl.yaml gateway.registered_keys: unknown field ${k}`);
    if (!Number.isInteger(v) || (v as number) < 0 || (v as number) > 1_000_000) throw new Error(`ctl.yaml gateway.registered_keys.${k} must be an integer from 0 to 1000000`);
    out[names[k as keyof typeof names]] = v as number;
  }
  return out;
}
