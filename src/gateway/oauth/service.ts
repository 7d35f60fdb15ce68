/**
 * OAuth logins as provider accounts. A device-code flow (RFC 8628) or an authorization-code flow
 * with PKCE (RFC 7636, S256) gets tokens from the provider's authorization server; they are sealed
 * (vault.ts) into oauth_tokens and the login becomes an account (`oauth:<provider>:<id>`) of the
 * provider, which is created, API-managed, on the first login. The account's key is the current
 * access token, read from memory (GatewayStore.accountKey), never stored in the clear. Tokens are
 * refreshed when less than five minutes remain (checked every 30 s), and on demand.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Egress } from '../../egress/index.js';
import type { GatewayState } from '../state.js';
import type { GatewayStore } from '../store.js';
import type { OAuthProviderConfig } from './config.js';
import type { Vault } from './vault.js';
import type { SchemaStep } from '../schema.js';
import { GatewayError } from '../errors.js';

/** OAuth tokens: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
export const OAUTH_SCHEMA: SchemaStep[] = [
  {
    // OAuth tokens of provider accounts, encrypted (AES-256-GCM, the key in DIR/secrets).
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
];

interface Tokens {
  access_token: string;
  refresh_token?: string;
  token_type?: string;
  id_token?: string;
}

interface Flow {
  id: string;
  kind: 'device' | 'authorization-code';
  providerId: string;
  expiresAt: number;
  deviceCode?: string;
  interval?: number;
  verifier?: string;
  state?: string;
}

export interface AccountStatus {
  id: string;
  label: string;
  expiresAt: string | null;
  scopes: string[];
  lastError: string | null;
  updatedAt: string;
}

const REFRESH_BEFORE_MS = 5 * 60_000;
const b64url = (b: Buffer) => b.toString('base64url');

/** Who logged in, from an id_token's claims (not verified: only a label and a stable account id). */
function identityOf(t: Tokens & Record<string, unknown>): { sub?: string; label?: string } {
  const fromToken = (jwt: string | undefined) => {
    const part = jwt?.split('.')[1];
    if (!part) return {};
    try {
      const c = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as { sub?: unknown; email?: unknown; name?: unknown };
      return { ...(typeof c.sub === 'string' ? { sub: c.sub } : {}), ...(typeof c.email === 'string' ? { label: c.email } : typeof c.name === 'string' ? { label: c.name } : {}) };
    } catch {
      return {};
    }
  };
  const account = t.account as { email_address?: string; uuid?: string } | undefined;
  return { ...fromToken(t.id_token), ...(account?.uuid ? { sub: account.uuid } : {}), ...(account?.email_address ? { label: account.email_address } : {}) };
}

export class OAuthService {
  private readonly flows = new Map<string, Flow>();
  private readonly access = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: GatewayStore,
    private readonly vault: Vault,
    private readonly providers: OAuthProviderConfig[],
    private readonly egress: Egress,
    private readonly now: () => number,
    private readonly log: Logger,
  ) {
    // Before the catalog is built: accounts of OAuth logins get their access token from memory.
    db.accountKey = (id) => (id.startsWith('oauth:') ? (this.access.get(id) ?? '') : undefined);
    for (const r of this.rows()) {
      try {
        this.access.set(r.account_id, this.vault.open<Tokens>(r.sealed).access_token);
      } catch (e) {
        this.log.error({ account: r.account_id, err: (e as Error).message }, 'gateway: an OAuth token cannot be opened (another key?); log in again');
      }
    }
  }

  private state: GatewayState | undefined;
  attach(state: GatewayState): void {
    this.state = state;
  }

  provider(id: string): OAuthProviderConfig {
    const p = this.providers.find((x) => x.id === id);
    if (!p) throw new GatewayError('not-found', `no OAuth provider ${id} (ctl.yaml gateway.oauth_providers${this.providers.length ? `: ${this.providers.map((x) => x.id).join(', ')}` : ' is empty'})`);
    return p;
  }

  list(): OAuthProviderConfig[] {
    return this.providers;
  }

  private rows(providerId?: string): { account_id: string; provider_id: string; label: string; sealed: string; expires_at: number | null; scopes: string | null; last_error: string | null; updated_at: number }[] {
    return (providerId === undefined ? this.db.store.prepare('SELECT * FROM oauth_tokens').all() : this.db.store.prepare('SELECT * FROM oauth_tokens WHERE provider_id = ? ORDER BY created_at').all(providerId)) as never;
  }

  /** POST a form to the token endpoint; the JSON answer, or the OAuth error it names. */
  private async tokenCall(p: OAuthProviderConfig, form: Record<string, string>): Promise<{ ok: true; body: Tokens & Record<string, unknown> } | { ok: false; error: string; description: string; status: number }> {
    const res = await this.egress.request(p.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ client_id: p.clientId, ...(p.clientSecret ? { client_secret: p.clientSecret } : {}), ...form }).toString(),
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    const text = await res.body.text();
    let j: Record<string, unknown> = {};
    try {
      j = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // not JSON
    }
    if (res.statusCode >= 200 && res.statusCode < 300 && typeof j.access_token === 'string') return { ok: true, body: j as Tokens & Record<string, unknown> };
    return { ok: false, error: typeof j.error === 'string' ? j.error : `http_${res.statusCode}`, description: typeof j.error_description === 'string' ? j.error_description : text.slice(0, 200), status: res.statusCode };
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, f] of this.flows) if (f.expiresAt <= now) this.flows.delete(id);
  }

  async startDevice(id: string): Promise<Record<string, unknown>> {
    const p = this.provider(id);
    if (!p.deviceAuthorizationUrl) throw new GatewayError('invalid', `${p.id} has no device_authorization_url: use the authorization-code flow (authorize)`);
    this.sweep();
    const res = await this.egress.request(p.deviceAuthorizationUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ client_id: p.clientId, ...(p.scopes.length ? { scope: p.scopes.join(' ') } : {}), ...p.extraParams }).toString(),
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    const j = (await res.body.json().catch(() => ({}))) as Record<string, unknown>;
    if (res.statusCode !== 200 || typeof j.device_code !== 'string' || typeof j.user_code !== 'string') throw new GatewayError('remote', `${p.id}: the device authorization endpoint answered ${res.statusCode}${typeof j.error === 'string' ? ` ${j.error}` : ''}`, { code: 'oauth_upstream' });
    const expiresIn = typeof j.expires_in === 'number' ? j.expires_in : 900;
    const flow: Flow = { id: `flow_${b64url(randomBytes(12))}`, kind: 'device', providerId: p.id, deviceCode: j.device_code, interval: typeof j.interval === 'number' ? j.interval : 5, expiresAt: this.now() + expiresIn * 1000 };
    this.flows.set(flow.id, flow);
    return { flowId: flow.id, userCode: j.user_code, verificationUri: j.verification_uri ?? j.verification_url ?? null, verificationUriComplete: j.verification_uri_complete ?? null, expiresIn, interval: flow.interval };
  }

  async poll(id: string, flowId: string): Promise<Record<string, unknown>> {
    const p = this.provider(id);
    const f = this.flows.get(flowId);
    if (!f || f.providerId !== p.id || f.kind !== 'device') throw new GatewayError('not-found', `no device flow ${flowId} for ${p.id} (expired, finished, or never started)`);
    if (f.expiresAt <= this.now()) {
      this.flows.delete(flowId);
      return { status: 'expired' };
    }
    const r = await this.tokenCall(p, { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: f.deviceCode! });
    if (!r.ok) {
      if (r.error === 'authorization_pending') return { status: 'pending', interval: f.interval };
      if (r.error === 'slow_down') return { status: 'pending', interval: (f.interval = (f.interval ?? 5) + 5) };
      this.flows.delete(flowId);
      if (r.error === 'expired_token') return { status: 'expired' };
      if (r.error === 'access_denied') return { status: 'denied' };
      throw new GatewayError('remote', `${p.id}: token endpoint: ${r.error} ${r.description}`.trim(), { code: 'oauth_upstream' });
    }
    this.flows.delete(flowId);
    return { status: 'authorized', ...(await this.complete(p, r.body)) };
  }

  startAuthorize(id: string): Record<string, unknown> {
    const p = this.provider(id);
    if (!p.authorizeUrl || !p.redirectUri) throw new GatewayError('invalid', `${p.id} has no authorize_url: use the device-code flow (device)`);
    this.sweep();
    const verifier = b64url(randomBytes(32));
    const state = b64url(randomBytes(16));
    const flow: Flow = { id: `flow_${b64url(randomBytes(12))}`, kind: 'authorization-code', providerId: p.id, verifier, state, expiresAt: this.now() + 10 * 60_000 };
    this.flows.set(flow.id, flow);
    const u = new URL(p.authorizeUrl);
    const params: Record<string, string> = {
      response_type: 'code',
      client_id: p.clientId,
      redirect_uri: p.redirectUri,
      code_challenge: b64url(createHash('sha256').update(verifier).digest()),
      code_challenge_method: 'S256',
      state,
      ...(p.scopes.length ? { scope: p.scopes.join(' ') } : {}),
      ...p.extraParams,
    };
    for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
    return { flowId: flow.id, authorizeUrl: u.toString(), state, expiresIn: 600 };
  }

  /** Finish an authorization-code flow: by its state (the redirect) or its id (a pasted code). */
  async exchange(id: string, code: string, ref: { state?: string; flowId?: string }): Promise<Record<string, unknown>> {
    const p = this.provider(id);
    const f = [...this.flows.values()].find((x) => x.providerId === p.id && x.kind === 'authorization-code' && ((ref.state !== undefined && x.state === ref.state) || (ref.flowId !== undefined && x.id === ref.flowId)));
    if (!f || f.expiresAt <= this.now()) throw new GatewayError('invalid', 'unknown or expired authorization (start again with authorize)');
    this.flows.delete(f.id);
    const r = await this.tokenCall(p, { grant_type: 'authorization_code', code, redirect_uri: p.redirectUri!, code_verifier: f.verifier! });
    if (!r.ok) throw new GatewayError(r.status >= 400 && r.status < 500 ? 'invalid' : 'remote', `${p.id}: the code was refused: ${r.error} ${r.description}`.trim(), { code: 'oauth_refused' });
    return { status: 'authorized', ...(await this.complete(p, r.body)) };
  }

  /** Keep the tokens and make (or renew) the account; the provider is created on its first login. */
  private async complete(p: OAuthProviderConfig, t: Tokens & Record<string, unknown>): Promise<Record<string, unknown>> {
    const state = this.state!;
    const existing = state.catalog.providers.get(p.id);
    if (existing && existing.config.source === 'file') throw new GatewayError('conflict', `provider ${p.id} is defined in gateway.yaml; give the OAuth provider another id`);
    const now = this.now();
    const who = identityOf(t);
    const accountId = `oauth:${p.id}:${(who.sub ? createHash('sha256').update(who.sub).digest('hex') : b64url(randomBytes(9))).slice(0, 16)}`;
    const label = who.label ?? who.sub ?? `login-${this.rows(p.id).length + 1}`;
    const expiresAt = typeof t.expires_in === 'number' ? now + t.expires_in * 1000 : null;
    const scopes = typeof t.scope === 'string' ? t.scope : p.scopes.join(' ');
    const sealed = this.vault.seal({ access_token: t.access_token, ...(t.refresh_token ? { refresh_token: t.refresh_token } : {}), ...(t.token_type ? { token_type: t.token_type } : {}) });
    this.db.transaction(() => {
      if (!this.db.providerExists(p.id)) {
        this.db.saveProvider({ id: p.id, kind: p.kind, name: p.name, baseUrl: p.baseUrl, enabled: true, priority: 0, headers: {}, accounts: [], models: [], source: 'api', createdAt: now, updatedAt: now });
        this.db.replaceModels(p.id, p.models.map((id) => ({ id, type: 'chat' as const })), now);
      }
      this.db.store
        .prepare(
          `INSERT INTO oauth_tokens (account_id, provider_id, label, sealed, expires_at, scopes, last_error, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?)
           ON CONFLICT(account_id) DO UPDATE SET label = excluded.label, sealed = excluded.sealed, expires_at = excluded.expires_at, scopes = excluded.scopes, last_error = NULL, updated_at = excluded.updated_at`,
        )
        .run(accountId, p.id, label, sealed, expiresAt, scopes, now, now);
      this.db.addAccounts(p.id, [{ id: accountId, name: label, apiKey: '', enabled: true, priority: 0 }], now);
      // A provider its last logout disabled is in service again.
      if (this.rows(p.id).length === 1) this.db.store.prepare('UPDATE providers SET enabled = 1 WHERE id = ?').run(p.id);
    });
    this.access.set(accountId, t.access_token);
    await state.commit({ providers: [p.id] });
    return { provider: p.id, accountId, label, expiresAt: expiresAt === null ? null : new Date(expiresAt).toISOString() };
  }

  /** Refresh one account's tokens now. */
  async refresh(accountId: string): Promise<AccountStatus> {
    const row = this.rows().find((r) => r.account_id === accountId);
    if (!row) throw new GatewayError('not-found', `no OAuth account ${accountId}`);
    const p = this.provider(row.provider_id);
    const tokens = this.vault.open<Tokens>(row.sealed);
    if (!tokens.refresh_token) throw new GatewayError('conflict', `${accountId} has no refresh token: log in again`, { code: 'oauth_no_refresh_token' });
    const r = await this.tokenCall(p, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    const now = this.now();
    if (!r.ok) {
      this.db.store.prepare('UPDATE oauth_tokens SET last_error = ?, updated_at = ? WHERE account_id = ?').run(`${r.error}: ${r.description}`.slice(0, 500), now, accountId);
      throw new GatewayError('remote', `${p.id}: refresh refused: ${r.error} ${r.description}`.trim(), { code: 'oauth_refresh_failed' });
    }
    const next: Tokens = { access_token: r.body.access_token, refresh_token: r.body.refresh_token ?? tokens.refresh_token, ...(r.body.token_type ? { token_type: r.body.token_type } : {}) };
    const expiresAt = typeof r.body.expires_in === 'number' ? now + r.body.expires_in * 1000 : null;
    this.db.store.prepare('UPDATE oauth_tokens SET sealed = ?, expires_at = ?, last_error = NULL, updated_at = ? WHERE account_id = ?').run(this.vault.seal(next), expiresAt, now, accountId);
    this.access.set(accountId, next.access_token);
    await this.state!.commit({ providers: [p.id] });
    return this.accounts(p.id).find((a) => a.id === accountId)!;
  }

  /** Refresh every token that expires within five minutes (failures are recorded and logged). */
  async refreshDue(): Promise<void> {
    const now = this.now();
    for (const r of this.rows()) {
      if (r.expires_at === null || r.expires_at - now > REFRESH_BEFORE_MS) continue;
      await this.refresh(r.account_id).catch((e: Error) => this.log.warn({ account: r.account_id, err: e.message }, 'gateway: OAuth refresh failed'));
    }
  }

  start(): void {
    this.timer = setInterval(() => void this.refreshDue(), 30_000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  accounts(providerId: string): AccountStatus[] {
    return this.rows(providerId).map((r) => ({
      id: r.account_id,
      label: r.label,
      expiresAt: r.expires_at === null ? null : new Date(r.expires_at).toISOString(),
      scopes: r.scopes ? r.scopes.split(' ').filter(Boolean) : [],
      lastError: r.last_error,
      updatedAt: new Date(r.updated_at).toISOString(),
    }));
  }

  /** Log out: the tokens and the account go (one account, or all of the provider's). */
  async logout(providerId: string, accountId?: string): Promise<number> {
    const rows = this.rows(providerId).filter((r) => accountId === undefined || r.account_id === accountId);
    if (accountId !== undefined && rows.length === 0) throw new GatewayError('not-found', `no OAuth account ${accountId} on ${providerId}`);
    this.db.transaction(() => {
      for (const r of rows) {
        this.db.store.prepare('DELETE FROM oauth_tokens WHERE account_id = ?').run(r.account_id);
        this.db.deleteAccount(r.account_id);
        this.access.delete(r.account_id);
      }
      // With no account left the provider would be routed to as a keyless one (requests upstream with no
      // Authorization): it is disabled until the next login enables it again.
      const left = this.db.store.prepare('SELECT COUNT(*) AS n FROM provider_accounts WHERE provider_id = ?').get(providerId) as { n: number };
      if (rows.length > 0 && left.n === 0) this.db.store.prepare('UPDATE providers SET enabled = 0, updated_at = ? WHERE id = ?').run(this.now(), providerId);
    });
    await this.state!.commit({ providers: [providerId] });
    return rows.length;
  }
}
