/**
 * The alert manager's tables in the database several daemons share (ctl.yaml `storage.postgres`):
 * silences, the notification log and the alerts (an alert posted to any daemon is every daemon's).
 */
import type { PgMigration } from '../../store/postgres.js';

export const SHARED_MIGRATIONS: PgMigration[] = [
  {
    version: 1,
    up: `
      CREATE TABLE am_silences (
        id TEXT PRIMARY KEY,
        data TEXT NOT NULL,
        updated_at BIGINT NOT NULL
      );
      -- key: SHA-256 (hex) of the log key (group key, receiver, integration). An entry with
      -- expires 0 holds only a claim (no notification logged yet).
      CREATE TABLE am_nflog (
        key TEXT PRIMARY KEY,
        firing TEXT NOT NULL DEFAULT '[]',
        resolved TEXT NOT NULL DEFAULT '[]',
        at BIGINT NOT NULL DEFAULT 0,
        expires BIGINT NOT NULL DEFAULT 0,
        claim_owner TEXT,
        claim_until BIGINT NOT NULL DEFAULT 0
      );
      CREATE INDEX am_nflog_expires ON am_nflog (expires);
    `,
  },
  {
    version: 2,
    up: `
      -- One row per alert (fingerprint of its labels): data is the stored alert as JSON; the
      -- later updated_at wins; ends_at lets garbage collection find resolved rows.
      CREATE TABLE am_alerts (
        fingerprint TEXT PRIMARY KEY,
        data TEXT NOT NULL,
        updated_at BIGINT NOT NULL,
        ends_at BIGINT NOT NULL
      );
      CREATE INDEX am_alerts_ends_at ON am_alerts (ends_at);
    `,
  },
];
