/**
 * Login sessions of the management UI in the daemon's SQLite file: the hash of each session token
 * and when it expires (../auth.ts issues and checks them). With shared storage they are records of
 * the shared configuration instead (pg-store.ts), so a login through one daemon works on every daemon.
 */
import type { Store } from '../../store/index.js';
import type { SchemaStep } from '../schema.js';

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

/** Login sessions as the gateway's database handle (../store.ts) keeps them, on either backend. */
export interface SessionData {
  /** True when several daemons share these sessions (read them here, do not cache). */
  readonly shared: boolean;
  /** Every live session (expired ones are deleted first). */
  list(now: number): { tokenHash: string; expiresAt: number }[];
  /** Expiry of a session, if it exists. */
  expiry(tokenHash: string): number | undefined;
  save(tokenHash: string, now: number, expiresAt: number): void;
  delete(tokenHash: string): void;
  deleteAll(): void;
}

export class SqliteSessions implements SessionData {
  readonly shared = false;

  constructor(private readonly store: Store) {}

  /** Every live session (expired ones are deleted first). */
  list(now: number): { tokenHash: string; expiresAt: number }[] {
    this.store.prepare('DELETE FROM sessions WHERE expires_at <= ?').run(now);
    const rows = this.store.prepare('SELECT token_hash, expires_at FROM sessions').all() as { token_hash: string; expires_at: number }[];
    return rows.map((r) => ({ tokenHash: r.token_hash, expiresAt: r.expires_at }));
  }

  /** Expiry of a session, if it exists. */
  expiry(tokenHash: string): number | undefined {
    const r = this.store.prepare('SELECT expires_at FROM sessions WHERE token_hash = ?').get(tokenHash) as { expires_at: number } | undefined;
    return r?.expires_at;
  }

  save(tokenHash: string, now: number, expiresAt: number): void {
    this.store.prepare('INSERT INTO sessions (token_hash, created_at, expires_at) VALUES (?, ?, ?)').run(tokenHash, now, expiresAt);
  }

  delete(tokenHash: string): void {
    this.store.prepare('DELETE FROM sessions WHERE token_hash = ?').run(tokenHash);
  }

  deleteAll(): void {
    this.store.prepare('DELETE FROM sessions').run();
  }
}
