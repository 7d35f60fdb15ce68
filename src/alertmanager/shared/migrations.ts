/**
 * The alert manager's tables in the database several daemons share (ctl.yaml `storage.postgres`):
 * silences and the notification log. Alerts are not shared: as with Alertmanager in HA, every
 * daemon receives every alert from Prometheus and keeps them in its own state dir.
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
];
