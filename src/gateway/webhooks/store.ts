/**
 * SQL of webhooks, their delivery queue and the attempts. The queue (`SqlDeliveryQueue`) is written
 * once for either database (store/sql.ts): this daemon's SQLite file, or the PostgreSQL database
 * several gateways share, where an event raised on any gateway is queued and every gateway sends
 * what is due, each delivery handed to one gateway at a time (`FOR UPDATE SKIP LOCKED`, then marked
 * with the gateway and a claim time). A gateway that dies mid-send leaves its claim to run out
 * (`CLAIM_MS`); another then retries it. The attempts log is shared too, so
 * `GET /api/webhooks/{id}/deliveries` shows every gateway's sends.
 */
import type { Store } from '../../store/index.js';
import type { Sql } from '../../store/sql.js';
import { PG_TYPES, SQLITE_TYPES, type ColumnTypes } from '../sql.js';
import type { SchemaStep } from '../schema.js';

/** The delivery queue and the attempts as `t`'s database declares them (`claims`: the shared database's claim columns). */
const queueTables = (t: ColumnTypes, claims = '') => `
CREATE TABLE ${t.p}webhook_deliveries (
  id TEXT PRIMARY KEY,
  webhook_id TEXT NOT NULL,
  event TEXT NOT NULL,
  payload TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at ${t.big},
  last_status INTEGER,
  last_error TEXT,
  created_at ${t.big} NOT NULL,
  delivered_at ${t.big}${claims}
);
CREATE INDEX ${t.p}webhook_deliveries_due ON ${t.p}webhook_deliveries(next_attempt_at) WHERE status = 'pending';
CREATE INDEX ${t.p}webhook_deliveries_hook ON ${t.p}webhook_deliveries(webhook_id, created_at);
CREATE TABLE ${t.p}webhook_attempts (
  delivery_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  at ${t.big} NOT NULL,
  status INTEGER,
  error TEXT,
  duration_ms INTEGER NOT NULL,
  PRIMARY KEY (delivery_id, attempt)
)${t.withoutRowid};
`;

/** The delivery queue and attempts in the shared database (webhook subscriptions are shared-configuration records). */
export const WEBHOOK_QUEUE_MIGRATION = queueTables(PG_TYPES, ',\n  claimed_by TEXT,\n  claimed_at BIGINT');

/** Longer than one send can take (its timeout): a claim this old belongs to a gateway that died. */
const CLAIM_MS = 60_000;

/** Outbound webhooks: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
/** The webhook delivery queue: this capability's share of the gateway's PostgreSQL migrations (placed by version in gateway/schema.ts). */
export const WEBHOOK_QUEUE_PG_SCHEMA: SchemaStep[] = [{ version: 5, up: WEBHOOK_QUEUE_MIGRATION }];

export const WEBHOOKS_SCHEMA: SchemaStep[] = [
  {
    // Outbound webhooks, their persisted delivery queue, and every delivery attempt.
    version: 5,
    up: `
CREATE TABLE webhooks (
  id TEXT PRIMARY KEY,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  secret TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  enabled INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);${queueTables(SQLITE_TYPES)}`,
  },
];

export interface WebhookRecord {
  id: string;
  url: string;
  /** Event types, or ['*'] for all. */
  events: string[];
  secret: string;
  description: string;
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
}

export interface DeliveryRecord {
  id: string;
  webhookId: string;
  event: string;
  payload: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt?: number;
  lastStatus?: number;
  lastError?: string;
  createdAt: number;
  deliveredAt?: number;
}

export interface AttemptRecord {
  attempt: number;
  at: number;
  status?: number;
  error?: string;
  durationMs: number;
}

const hook = (r: Record<string, unknown>): WebhookRecord => ({
  id: r.id as string,
  url: r.url as string,
  events: JSON.parse(r.events as string) as string[],
  secret: r.secret as string,
  description: r.description as string,
  enabled: r.enabled === 1,
  createdAt: r.created_at as number,
  updatedAt: r.updated_at as number,
});

export const delivery = (r: Record<string, unknown>): DeliveryRecord => ({
  id: r.id as string,
  webhookId: r.webhook_id as string,
  event: r.event as string,
  payload: r.payload as string,
  status: r.status as DeliveryRecord['status'],
  attempts: r.attempts as number,
  ...(r.next_attempt_at !== null ? { nextAttemptAt: r.next_attempt_at as number } : {}),
  ...(r.last_status !== null ? { lastStatus: r.last_status as number } : {}),
  ...(r.last_error !== null ? { lastError: r.last_error as string } : {}),
  createdAt: r.created_at as number,
  ...(r.delivered_at !== null ? { deliveredAt: r.delivered_at as number } : {}),
});

/** Pending deliveries and their attempts. */
export interface DeliveryQueue {
  enqueue(list: readonly DeliveryRecord[]): Promise<void>;
  /** Deliveries whose attempt is due, each handed to one daemon (`daemon`) until it records the attempt. */
  due(now: number, limit: number, daemon: string): Promise<DeliveryRecord[]>;
  recordAttempt(d: DeliveryRecord, a: AttemptRecord, next: Pick<DeliveryRecord, 'status' | 'nextAttemptAt' | 'deliveredAt'>): Promise<void>;
  deliveries(webhookId: string, limit: number): Promise<(DeliveryRecord & { attemptLog: AttemptRecord[] })[]>;
  /** Drop what is still waiting for a webhook that goes. */
  dropPending(webhookId: string): Promise<void>;
}

const delivered = (rows: unknown[]) => (rows as Record<string, unknown>[]).map(delivery);

export class SqlDeliveryQueue implements DeliveryQueue {
  /** The shared database: deliveries are claimed by one gateway at a time (only its table has the claim columns). */
  private readonly claims: boolean;

  constructor(private readonly sql: Sql) {
    this.claims = sql.dialect === 'postgres';
  }

  async enqueue(list: readonly DeliveryRecord[]): Promise<void> {
    if (list.length === 0) return;
    if (this.claims) {
      // One statement for the lot (a round trip per delivery otherwise).
      await this.sql.run(
        `INSERT INTO webhook_deliveries (id, webhook_id, event, payload, status, attempts, next_attempt_at, created_at)
         SELECT d.id, d.webhook_id, d.event, d.payload, d.status, 0, d.next_attempt_at, d.created_at
         FROM json_to_recordset(?::json) AS d(id TEXT, webhook_id TEXT, event TEXT, payload TEXT, status TEXT, next_attempt_at BIGINT, created_at BIGINT)`,
        JSON.stringify(list.map((d) => ({ id: d.id, webhook_id: d.webhookId, event: d.event, payload: d.payload, status: d.status, next_attempt_at: d.nextAttemptAt ?? null, created_at: d.createdAt }))),
      );
      return;
    }
    await this.sql.transaction(async (tx) => {
      for (const d of list) {
        await tx.run(
          'INSERT INTO webhook_deliveries (id, webhook_id, event, payload, status, attempts, next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, 0, ?, ?)',
          d.id,
          d.webhookId,
          d.event,
          d.payload,
          d.status,
          d.nextAttemptAt ?? null,
          d.createdAt,
        );
      }
    });
  }

  async due(now: number, limit: number, daemon: string): Promise<DeliveryRecord[]> {
    if (!this.claims) return delivered(await this.sql.all("SELECT * FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?", now, limit));
    return delivered(
      await this.sql.all(
        `UPDATE webhook_deliveries d SET claimed_by = ?, claimed_at = ?
         FROM (
           SELECT id FROM webhook_deliveries
           WHERE status = 'pending' AND next_attempt_at <= ? AND (claimed_at IS NULL OR claimed_at < ?)
           ORDER BY next_attempt_at LIMIT ?
           FOR UPDATE SKIP LOCKED
         ) free
         WHERE d.id = free.id
         RETURNING d.*`,
        daemon,
        now,
        now,
        now - CLAIM_MS,
        limit,
      ),
    );
  }

  async recordAttempt(d: DeliveryRecord, a: AttemptRecord, next: Pick<DeliveryRecord, 'status' | 'nextAttemptAt' | 'deliveredAt'>): Promise<void> {
    await this.sql.transaction(async (tx) => {
      await tx.run(
        `INSERT INTO webhook_attempts (delivery_id, attempt, at, status, error, duration_ms) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (delivery_id, attempt) DO UPDATE SET at = excluded.at, status = excluded.status, error = excluded.error, duration_ms = excluded.duration_ms`,
        d.id,
        a.attempt,
        a.at,
        a.status ?? null,
        a.error ?? null,
        a.durationMs,
      );
      await tx.run(
        `UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt_at = ?, last_status = ?, last_error = ?, delivered_at = ?${this.claims ? ', claimed_by = NULL, claimed_at = NULL' : ''} WHERE id = ?`,
        next.status,
        a.attempt,
        next.nextAttemptAt ?? null,
        a.status ?? null,
        a.error ?? null,
        next.deliveredAt ?? null,
        d.id,
      );
    });
  }

  async deliveries(webhookId: string, limit: number): Promise<(DeliveryRecord & { attemptLog: AttemptRecord[] })[]> {
    const rows = delivered(await this.sql.all('SELECT * FROM webhook_deliveries WHERE webhook_id = ? ORDER BY created_at DESC, id DESC LIMIT ?', webhookId, limit));
    const out: (DeliveryRecord & { attemptLog: AttemptRecord[] })[] = [];
    for (const d of rows) out.push({ ...d, attemptLog: (await this.sql.all<Record<string, unknown>>('SELECT * FROM webhook_attempts WHERE delivery_id = ? ORDER BY attempt', d.id)).map(attempt) });
    return out;
  }

  async dropPending(webhookId: string): Promise<void> {
    await this.sql.run("DELETE FROM webhook_deliveries WHERE webhook_id = ? AND status = 'pending'", webhookId);
  }
}

export const attempt = (a: Record<string, unknown>): AttemptRecord => ({
  attempt: a.attempt as number,
  at: a.at as number,
  ...(a.status !== null ? { status: a.status as number } : {}),
  ...(a.error !== null ? { error: a.error as string } : {}),
  durationMs: a.duration_ms as number,
});

/** Webhook subscriptions (shared-store.ts keeps them with the shared configuration). */
export class WebhookStore {
  constructor(readonly store: Store) {}

  /** Resolves once subscription changes are durable (the shared store commits in the background). */
  settled(): Promise<void> {
    return Promise.resolve();
  }

  list(): WebhookRecord[] {
    return (this.store.prepare('SELECT * FROM webhooks ORDER BY created_at, id').all() as Record<string, unknown>[]).map(hook);
  }

  get(id: string): WebhookRecord | undefined {
    const r = this.store.prepare('SELECT * FROM webhooks WHERE id = ?').get(id) as Record<string, unknown> | undefined;
    return r ? hook(r) : undefined;
  }

  save(w: WebhookRecord): void {
    this.store
      .prepare(
        `INSERT INTO webhooks (id, url, events, secret, description, enabled, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET url = excluded.url, events = excluded.events, secret = excluded.secret, description = excluded.description, enabled = excluded.enabled, updated_at = excluded.updated_at`,
      )
      .run(w.id, w.url, JSON.stringify(w.events), w.secret, w.description, w.enabled ? 1 : 0, w.createdAt, w.updatedAt);
  }

  delete(id: string): boolean {
    return this.store.prepare('DELETE FROM webhooks WHERE id = ?').run(id).changes > 0;
  }
}
