/**
 * The webhook delivery queue in the PostgreSQL database several gateways share: an event raised on
 * any gateway is queued here, and every gateway sends what is due, each delivery handed to one
 * gateway at a time (`FOR UPDATE SKIP LOCKED`, then marked with the gateway and a claim time). A
 * gateway that dies mid-send leaves its claim to run out (`CLAIM_MS`); another then retries it. The
 * attempts log is shared too, so `GET /api/webhooks/{id}/deliveries` shows every gateway's sends.
 */
import type { SharedPostgres } from '../../store/postgres.js';
import { attempt, delivery, type AttemptRecord, type DeliveryQueue, type DeliveryRecord } from './store.js';
import type { SchemaStep } from '../schema.js';

export const WEBHOOK_QUEUE_MIGRATION = `
  CREATE TABLE gw_webhook_deliveries (
    id TEXT PRIMARY KEY,
    webhook_id TEXT NOT NULL,
    event TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at BIGINT,
    last_status INTEGER,
    last_error TEXT,
    created_at BIGINT NOT NULL,
    delivered_at BIGINT,
    claimed_by TEXT,
    claimed_at BIGINT
  );
  CREATE INDEX gw_webhook_deliveries_due ON gw_webhook_deliveries(next_attempt_at) WHERE status = 'pending';
  CREATE INDEX gw_webhook_deliveries_hook ON gw_webhook_deliveries(webhook_id, created_at);
  CREATE TABLE gw_webhook_attempts (
    delivery_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    at BIGINT NOT NULL,
    status INTEGER,
    error TEXT,
    duration_ms INTEGER NOT NULL,
    PRIMARY KEY (delivery_id, attempt)
  );
`;

/** The webhook delivery queue: this capability's share of the gateway's PostgreSQL migrations (placed by version in gateway/schema.ts). */
export const WEBHOOK_QUEUE_PG_SCHEMA: SchemaStep[] = [{ version: 5, up: WEBHOOK_QUEUE_MIGRATION }];

/** Longer than one send can take (its timeout): a claim this old belongs to a gateway that died. */
const CLAIM_MS = 60_000;

export class PgDeliveryQueue implements DeliveryQueue {
  constructor(private readonly db: SharedPostgres) {}

  async enqueue(list: readonly DeliveryRecord[]): Promise<void> {
    if (list.length === 0) return;
    await this.db.query(
      `INSERT INTO gw_webhook_deliveries (id, webhook_id, event, payload, status, attempts, next_attempt_at, created_at)
       SELECT d.id, d.webhook_id, d.event, d.payload, d.status, 0, d.next_attempt_at, d.created_at
       FROM json_to_recordset($1::json) AS d(id TEXT, webhook_id TEXT, event TEXT, payload TEXT, status TEXT, next_attempt_at BIGINT, created_at BIGINT)`,
      [JSON.stringify(list.map((d) => ({ id: d.id, webhook_id: d.webhookId, event: d.event, payload: d.payload, status: d.status, next_attempt_at: d.nextAttemptAt ?? null, created_at: d.createdAt })))],
    );
  }

  async due(now: number, limit: number, daemon: string): Promise<DeliveryRecord[]> {
    const rows = await this.db.query(
      `UPDATE gw_webhook_deliveries d SET claimed_by = $3, claimed_at = $1
       FROM (
         SELECT id FROM gw_webhook_deliveries
         WHERE status = 'pending' AND next_attempt_at <= $1 AND (claimed_at IS NULL OR claimed_at < $4)
         ORDER BY next_attempt_at LIMIT $2
         FOR UPDATE SKIP LOCKED
       ) free
       WHERE d.id = free.id
       RETURNING d.*`,
      [now, limit, daemon, now - CLAIM_MS],
    );
    return rows.map(delivery);
  }

  async recordAttempt(d: DeliveryRecord, a: AttemptRecord, next: Pick<DeliveryRecord, 'status' | 'nextAttemptAt' | 'deliveredAt'>): Promise<void> {
    await this.db.transaction(async (q) => {
      await q.query(
        `INSERT INTO gw_webhook_attempts (delivery_id, attempt, at, status, error, duration_ms) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (delivery_id, attempt) DO UPDATE SET at = excluded.at, status = excluded.status, error = excluded.error, duration_ms = excluded.duration_ms`,
        [d.id, a.attempt, a.at, a.status ?? null, a.error ?? null, a.durationMs],
      );
      await q.query(
        `UPDATE gw_webhook_deliveries SET status = $1, attempts = $2, next_attempt_at = $3, last_status = $4, last_error = $5, delivered_at = $6,
           claimed_by = NULL, claimed_at = NULL WHERE id = $7`,
        [next.status, a.attempt, next.nextAttemptAt ?? null, a.status ?? null, a.error ?? null, next.deliveredAt ?? null, d.id],
      );
    });
  }

  async deliveries(webhookId: string, limit: number): Promise<(DeliveryRecord & { attemptLog: AttemptRecord[] })[]> {
    const rows = (await this.db.query('SELECT * FROM gw_webhook_deliveries WHERE webhook_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2', [webhookId, limit])).map(delivery);
    const out: (DeliveryRecord & { attemptLog: AttemptRecord[] })[] = [];
    for (const d of rows) out.push({ ...d, attemptLog: (await this.db.query('SELECT * FROM gw_webhook_attempts WHERE delivery_id = $1 ORDER BY attempt', [d.id])).map(attempt) });
    return out;
  }

  async dropPending(webhookId: string): Promise<void> {
    await this.db.query("DELETE FROM gw_webhook_deliveries WHERE webhook_id = $1 AND status = 'pending'", [webhookId]);
  }
}
