/**
 * Login sessions of the management UI with shared storage: records of the shared configuration
 * (kind `session` in `gw_config`, keyed by the token's hash, `{createdAt, expiresAt}`), held in
 * memory and announced like the rest of it, so a login through one daemon works on every daemon.
 */
import type { SharedConfigStore } from '../config/pg-store.js';
import type { SessionData } from './store.js';

interface StoredSession {
  createdAt: number;
  expiresAt: number;
}

export class PgSessions implements SessionData {
  readonly shared = true;

  constructor(private readonly config: SharedConfigStore) {}

  list(now: number): { tokenHash: string; expiresAt: number }[] {
    const out: { tokenHash: string; expiresAt: number }[] = [];
    for (const [tokenHash, v] of this.config.recordEntries<StoredSession>('session')) {
      if (v.expiresAt <= now) this.config.deleteRecord('session', tokenHash);
      else out.push({ tokenHash, expiresAt: v.expiresAt });
    }
    return out;
  }

  expiry(tokenHash: string): number | undefined {
    return this.config.record<StoredSession>('session', tokenHash)?.expiresAt;
  }

  save(tokenHash: string, now: number, expiresAt: number): void {
    this.config.putRecord('session', tokenHash, { createdAt: now, expiresAt } satisfies StoredSession);
  }

  delete(tokenHash: string): void {
    this.config.deleteRecord('session', tokenHash);
  }

  deleteAll(): void {
    for (const [tokenHash] of this.config.recordEntries('session')) this.config.deleteRecord('session', tokenHash);
  }
}
