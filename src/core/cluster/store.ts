/**
 * The Core API's own record of the cluster (`database/core.db`): the members this daemon trusts
 * (its trust store: name, address, certificate, failure domain, role, last heartbeat), the join
 * tokens it issued, and members removed (so a stale heartbeat from a peer that missed the removal
 * cannot bring one back).
 */
import type { Migration, Store } from '../../store/index.js';

export const CORE_MIGRATIONS: Migration[] = [
  {
    version: 1,
    up: `
      CREATE TABLE cluster_members (
        name TEXT PRIMARY KEY,
        address TEXT NOT NULL,
        certificate TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        role TEXT NOT NULL,
        failure_domain INTEGER NOT NULL DEFAULT 0,
        joined_at INTEGER NOT NULL,
        heartbeat INTEGER NOT NULL DEFAULT 0
      );
      CREATE TABLE cluster_tokens (
        name TEXT PRIMARY KEY,
        secret TEXT NOT NULL UNIQUE,
        expires_at INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL
      );
      CREATE TABLE cluster_removed (
        fingerprint TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        removed_at INTEGER NOT NULL
      );
    `,
  },
  {
    // Join tokens are the cluster's, not their issuer's: every member holds every token, and a
    // token used or revoked anywhere is remembered here so a member that missed it cannot bring it back.
    version: 2,
    up: `
      CREATE TABLE cluster_tokens_spent (
        secret TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        spent_by TEXT NOT NULL DEFAULT '',
        spent_at INTEGER NOT NULL
      );
    `,
  },
];

/** How long a used or revoked token is remembered (a member down longer than this may offer it again). */
export const SPENT_TOKEN_MEMORY_MS = 30 * 24 * 3600_000;

export interface Member {
  name: string;
  address: string;
  certificate: string;
  fingerprint: string;
  role: string;
  failure_domain: number;
  joined_at: number;
  heartbeat: number;
}

export interface Removal {
  fingerprint: string;
  name: string;
  removed_at: number;
}

export interface TokenRecord {
  name: string;
  secret: string;
  expires_at: number;
  created_at: number;
}

export class ClusterStore {
  constructor(private readonly store: Store) {}

  members(): Member[] {
    return this.store.prepare('SELECT * FROM cluster_members ORDER BY name').all() as Member[];
  }

  member(name: string): Member | undefined {
    return this.store.prepare('SELECT * FROM cluster_members WHERE name = ?').get(name) as Member | undefined;
  }

  memberByFingerprint(fp: string): Member | undefined {
    return this.store.prepare('SELECT * FROM cluster_members WHERE fingerprint = ?').get(fp) as Member | undefined;
  }

  /** Add or replace a member (its heartbeat and join time kept when it was known). */
  putMember(m: Member): void {
    this.store
      .prepare(
        `INSERT INTO cluster_members (name, address, certificate, fingerprint, role, failure_domain, joined_at, heartbeat)
         VALUES (@name, @address, @certificate, @fingerprint, @role, @failure_domain, @joined_at, @heartbeat)
         ON CONFLICT (name) DO UPDATE SET address = excluded.address, certificate = excluded.certificate,
           fingerprint = excluded.fingerprint, role = excluded.role, failure_domain = excluded.failure_domain,
           heartbeat = MAX(cluster_members.heartbeat, excluded.heartbeat)`,
      )
      .run(m);
    this.store.prepare('DELETE FROM cluster_removed WHERE fingerprint = ?').run(m.fingerprint);
  }

  heartbeat(name: string, at: number, failureDomain?: number, role?: string): void {
    this.store
      .prepare('UPDATE cluster_members SET heartbeat = MAX(heartbeat, ?), failure_domain = COALESCE(?, failure_domain), role = COALESCE(?, role) WHERE name = ?')
      .run(at, failureDomain ?? null, role ?? null, name);
  }

  removeMember(name: string, now: number): Member | undefined {
    const m = this.member(name);
    if (!m) return undefined;
    this.store.transaction(() => {
      this.store.prepare('DELETE FROM cluster_members WHERE name = ?').run(name);
      this.store.prepare('INSERT OR REPLACE INTO cluster_removed (fingerprint, name, removed_at) VALUES (?, ?, ?)').run(m.fingerprint, name, now);
    });
    return m;
  }

  wasRemoved(fp: string): boolean {
    return this.store.prepare('SELECT 1 FROM cluster_removed WHERE fingerprint = ?').get(fp) !== undefined;
  }

  /** When the member with certificate `fp` was removed, if it was. */
  removal(fp: string): Removal | undefined {
    return this.store.prepare('SELECT fingerprint, name, removed_at FROM cluster_removed WHERE fingerprint = ?').get(fp) as Removal | undefined;
  }

  /** Every removal this member knows of (heartbeats carry them to members that missed one). */
  removals(): Removal[] {
    return this.store.prepare('SELECT fingerprint, name, removed_at FROM cluster_removed ORDER BY removed_at').all() as Removal[];
  }

  /** Remember a removal another member made, of a member this one does not hold. */
  noteRemoval(r: Removal): void {
    this.store.prepare('INSERT OR IGNORE INTO cluster_removed (fingerprint, name, removed_at) VALUES (@fingerprint, @name, @removed_at)').run(r);
  }

  setRole(name: string, role: string): void {
    this.store.prepare('UPDATE cluster_members SET role = ? WHERE name = ?').run(role, name);
  }

  /** Forget the cluster (this daemon was removed from it). */
  clear(): void {
    this.store.transaction(() => {
      this.store.prepare('DELETE FROM cluster_members').run();
      this.store.prepare('DELETE FROM cluster_tokens').run();
      this.store.prepare('DELETE FROM cluster_removed').run();
      this.store.prepare('DELETE FROM cluster_tokens_spent').run();
    });
  }

  tokens(now: number): TokenRecord[] {
    this.purgeTokens(now);
    return this.store.prepare('SELECT * FROM cluster_tokens ORDER BY name').all() as TokenRecord[];
  }

  token(secret: string): TokenRecord | undefined {
    return this.store.prepare('SELECT * FROM cluster_tokens WHERE secret = ?').get(secret) as TokenRecord | undefined;
  }

  addToken(t: TokenRecord): boolean {
    return this.store.prepare('INSERT OR IGNORE INTO cluster_tokens (name, secret, expires_at, created_at) VALUES (@name, @secret, @expires_at, @created_at)').run(t).changes === 1;
  }

  deleteToken(name: string): boolean {
    return this.store.prepare('DELETE FROM cluster_tokens WHERE name = ?').run(name).changes === 1;
  }

  purgeTokens(now: number): void {
    this.store.prepare('DELETE FROM cluster_tokens WHERE expires_at > 0 AND expires_at <= ?').run(now);
    this.store.prepare('DELETE FROM cluster_tokens_spent WHERE spent_at <= ?').run(now - SPENT_TOKEN_MEMORY_MS);
  }

  /** A token another member issued; false when this member has it already or it was used or revoked. */
  learnToken(t: TokenRecord): boolean {
    if (this.spent(t.secret)) return false;
    return this.store.prepare('INSERT OR IGNORE INTO cluster_tokens (name, secret, expires_at, created_at) VALUES (@name, @secret, @expires_at, @created_at)').run(t).changes === 1;
  }

  spent(secret: string): { spent_by: string } | undefined {
    return this.store.prepare('SELECT spent_by FROM cluster_tokens_spent WHERE secret = ?').get(secret) as { spent_by: string } | undefined;
  }

  /**
   * Mark a token used (by the joiner with certificate fingerprint `by`) or revoked (`by` = '').
   * False when it was already used by another joiner: the first one keeps it.
   */
  spend(secret: string, name: string, by: string, now: number): boolean {
    return this.store.transaction(() => {
      const was = this.spent(secret);
      if (was && was.spent_by !== by) return false;
      this.store.prepare('DELETE FROM cluster_tokens WHERE secret = ?').run(secret);
      if (!was) this.store.prepare('INSERT INTO cluster_tokens_spent (secret, name, spent_by, spent_at) VALUES (?, ?, ?, ?)').run(secret, name, by, now);
      return true;
    });
  }

  /** Used or revoked tokens still remembered, for heartbeats. */
  spentTokens(): { secret: string; name: string; spent_by: string }[] {
    return this.store.prepare('SELECT secret, name, spent_by FROM cluster_tokens_spent').all() as { secret: string; name: string; spent_by: string }[];
  }
}
