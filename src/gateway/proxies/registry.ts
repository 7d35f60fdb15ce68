/**
 * The outbound proxy registry: proxies (HTTP, HTTPS, SOCKS5) and their assignments to the whole gateway
 * (scope `global`), a provider (its id) or a connection (a provider account's id). An upstream call
 * uses the most specific enabled assignment: connection, then provider, then global; none: direct.
 * Assignments are read from memory on every provider call and rebuilt on each change.
 */
import { randomBytes } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { Egress } from '../../egress/index.js';
import { proxyDisplayUrl, proxyUrlOf, type ProxyProtocol, type ProxySpec } from '../../egress/proxy.js';
import type { Store } from '../../store/index.js';
import type { SchemaStep } from '../schema.js';
import { GatewayError } from '../errors.js';

/** Outbound proxies: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
export const PROXIES_SCHEMA: SchemaStep[] = [
  {
    // The proxy registry, its assignments (global '', a provider id, an account id) and probe history.
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
];

export type ProxyType = 'http' | 'https' | 'socks5' | 'socks5h';
export type AssignmentScope = 'global' | 'provider' | 'connection';
export const SCOPES: readonly AssignmentScope[] = ['global', 'provider', 'connection'];

export interface ProxyRecord {
  id: string;
  name: string;
  type: ProxyType;
  host: string;
  port: number;
  username?: string;
  password?: string;
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
}

export interface Assignment {
  scope: AssignmentScope;
  /** '' for global. */
  scopeId: string;
  proxyId: string;
  createdAt: number;
}

export interface ResolvedProxy {
  proxy: ProxyRecord;
  scope: AssignmentScope;
  scopeId: string;
}

/** Upstream connections per proxied dispatcher (as many as a provider gets without a proxy, in practice). */
const CONNECTIONS = 128;

const row = (r: Record<string, unknown>): ProxyRecord => ({
  id: r.id as string,
  name: r.name as string,
  type: r.type as ProxyType,
  host: r.host as string,
  port: r.port as number,
  ...(r.username !== null ? { username: r.username as string } : {}),
  ...(r.password !== null ? { password: r.password as string } : {}),
  enabled: r.enabled === 1,
  createdAt: r.created_at as number,
  updatedAt: r.updated_at as number,
});

export function specOf(p: ProxyRecord): ProxySpec {
  return { protocol: `${p.type}:` as ProxyProtocol, host: p.host, port: p.port, ...(p.username !== undefined ? { username: p.username } : {}), ...(p.password !== undefined ? { password: p.password } : {}) };
}

/** What the API shows: the password never, only whether one is set. */
export function proxyView(p: ProxyRecord): Record<string, unknown> {
  return {
    id: p.id,
    name: p.name,
    type: p.type,
    host: p.host,
    port: p.port,
    username: p.username ?? null,
    hasPassword: p.password !== undefined,
    url: proxyDisplayUrl(specOf(p)),
    enabled: p.enabled,
    createdAt: new Date(p.createdAt).toISOString(),
    updatedAt: new Date(p.updatedAt).toISOString(),
  };
}

export class ProxyRegistry {
  /** `scope\0scopeId` → proxy id; rebuilt after every change. */
  private byScope: Map<string, string> | undefined;
  private proxies: Map<string, ProxyRecord> | undefined;

  constructor(
    private readonly store: Store,
    private readonly egress: Egress,
    private readonly now: () => number,
  ) {}

  list(): ProxyRecord[] {
    return (this.store.prepare('SELECT * FROM proxies ORDER BY created_at, id').all() as Record<string, unknown>[]).map(row);
  }

  get(id: string): ProxyRecord | undefined {
    const r = this.store.prepare('SELECT * FROM proxies WHERE id = ?').get(id) as Record<string, unknown> | undefined;
    return r ? row(r) : undefined;
  }

  mustGet(id: string): ProxyRecord {
    const p = this.get(id);
    if (!p) throw new GatewayError('not-found', `proxy ${id} not found`, { code: 'not_found' });
    return p;
  }

  newId(): string {
    return `prx_${randomBytes(6).toString('hex')}`;
  }

  save(p: ProxyRecord): void {
    const prev = this.get(p.id);
    this.store
      .prepare(
        `INSERT INTO proxies (id, name, type, host, port, username, password, enabled, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET name = excluded.name, type = excluded.type, host = excluded.host, port = excluded.port, username = excluded.username,
           password = excluded.password, enabled = excluded.enabled, updated_at = excluded.updated_at`,
      )
      .run(p.id, p.name, p.type, p.host, p.port, p.username ?? null, p.password ?? null, p.enabled ? 1 : 0, p.createdAt, p.updatedAt);
    if (prev) this.forget(prev);
    this.changed();
  }

  /** Delete a proxy; refused (409) while assigned unless `force`, which detaches its assignments. */
  delete(id: string, force: boolean): { detached: number } {
    const p = this.mustGet(id);
    const used = this.assignments({ proxyId: id });
    if (used.length > 0 && !force) {
      throw new GatewayError('conflict', `proxy ${id} is assigned (${used.map((a) => (a.scope === 'global' ? 'global' : `${a.scope} ${a.scopeId}`)).join(', ')}); detach it first or pass force=1`, { code: 'proxy_in_use' });
    }
    this.store.transaction(() => {
      this.store.prepare('DELETE FROM proxy_assignments WHERE proxy_id = ?').run(id);
      this.store.prepare('DELETE FROM proxies WHERE id = ?').run(id);
    });
    this.forget(p);
    this.changed();
    return { detached: used.length };
  }

  assignments(filter: { proxyId?: string; scope?: AssignmentScope; scopeId?: string } = {}): Assignment[] {
    const where: string[] = [];
    const args: string[] = [];
    if (filter.proxyId !== undefined) (where.push('proxy_id = ?'), args.push(filter.proxyId));
    if (filter.scope !== undefined) (where.push('scope = ?'), args.push(filter.scope));
    if (filter.scopeId !== undefined) (where.push('scope_id = ?'), args.push(filter.scopeId));
    const sql = `SELECT * FROM proxy_assignments${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY scope, scope_id`;
    return (this.store.prepare(sql).all(...args) as Record<string, unknown>[]).map((r) => ({ scope: r.scope as AssignmentScope, scopeId: r.scope_id as string, proxyId: r.proxy_id as string, createdAt: r.created_at as number }));
  }

  /** Set (proxyId) or clear (null) the assignment of each scope id; one transaction. */
  assign(scope: AssignmentScope, scopeIds: readonly string[], proxyId: string | null): number {
    if (proxyId !== null) this.mustGet(proxyId);
    const ids = scope === 'global' ? [''] : scopeIds;
    if (ids.length === 0) throw new GatewayError('invalid', `scope ${scope} needs scope_id (or scope_ids)`);
    let changed = 0;
    this.store.transaction(() => {
      for (const id of ids) {
        changed +=
          proxyId === null
            ? this.store.prepare('DELETE FROM proxy_assignments WHERE scope = ? AND scope_id = ?').run(scope, id).changes
            : this.store
                .prepare('INSERT INTO proxy_assignments (scope, scope_id, proxy_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT(scope, scope_id) DO UPDATE SET proxy_id = excluded.proxy_id, created_at = excluded.created_at')
                .run(scope, id, proxyId, this.now()).changes;
      }
    });
    this.changed();
    return changed;
  }

  /** The proxy an upstream call for this provider account uses, and the assignment that chose it. */
  resolve(providerId: string, accountId: string | undefined): ResolvedProxy | undefined {
    const byScope = this.scopes();
    if (byScope.size === 0) return undefined;
    const tries: [AssignmentScope, string][] = accountId !== undefined ? [['connection', accountId], ['provider', providerId], ['global', '']] : [['provider', providerId], ['global', '']];
    for (const [scope, scopeId] of tries) {
      const id = byScope.get(`${scope}\0${scopeId}`);
      const proxy = id === undefined ? undefined : this.proxies!.get(id);
      // A disabled proxy is skipped: the next, wider assignment applies.
      if (proxy?.enabled) return { proxy, scope, scopeId };
    }
    return undefined;
  }

  /** The dispatcher of the proxy the call goes through, or undefined for a direct call. */
  dispatcherFor(providerId: string, accountId: string | undefined): Dispatcher | undefined {
    const r = this.resolve(providerId, accountId);
    return r ? this.dispatcherOf(r.proxy) : undefined;
  }

  dispatcherOf(p: ProxyRecord): Dispatcher {
    return this.egress.proxied(proxyUrlOf(specOf(p)), CONNECTIONS);
  }

  /** Drop cached dispatchers (PUT …/assignments does, as the seed says) so the next call connects anew. */
  clearDispatchers(): void {
    for (const p of this.list()) this.forget(p);
  }

  private forget(p: ProxyRecord): void {
    void this.egress.forgetProxy(proxyUrlOf(specOf(p)));
  }

  private changed(): void {
    this.byScope = undefined;
    this.proxies = undefined;
  }

  private scopes(): Map<string, string> {
    if (this.byScope) return this.byScope;
    this.proxies = new Map(this.list().map((p) => [p.id, p]));
    this.byScope = new Map(this.assignments().map((a) => [`${a.scope}\0${a.scopeId}`, a.proxyId]));
    return this.byScope;
  }

  // --- probe history -------------------------------------------------------------------------

  recordProbe(proxyId: string, ok: boolean, latencyMs: number | null, target: string | null, error: string | null): void {
    this.store.prepare('INSERT INTO proxy_probes (proxy_id, ts, ok, latency_ms, target, error) VALUES (?, ?, ?, ?, ?, ?)').run(proxyId, this.now(), ok ? 1 : 0, latencyMs, target, error);
  }

  /** Probes newer than `since`, per proxy, newest first; older ones are pruned past `keepMs`. */
  probes(since: number): { proxyId: string; ts: number; ok: boolean; latencyMs: number | null; target: string | null; error: string | null }[] {
    return (this.store.prepare('SELECT * FROM proxy_probes WHERE ts >= ? ORDER BY ts DESC, id DESC').all(since) as Record<string, unknown>[]).map((r) => ({
      proxyId: r.proxy_id as string,
      ts: r.ts as number,
      ok: r.ok === 1,
      latencyMs: r.latency_ms as number | null,
      target: r.target as string | null,
      error: r.error as string | null,
    }));
  }

  pruneProbes(before: number): void {
    this.store.prepare('DELETE FROM proxy_probes WHERE ts < ?').run(before);
  }
}
