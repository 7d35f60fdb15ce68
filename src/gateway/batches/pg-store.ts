/**
 * Batches in the PostgreSQL database several gateways share: the batches (`gw_batches`), each
 * line's recorded result (`gw_batch_results`, one per line: a second record of a line is ignored),
 * and the validated lines themselves (`gw_batch_lines`), which every daemon takes a few at a time:
 * `claim` selects lines nobody has recorded or holds with `FOR UPDATE SKIP LOCKED`, so concurrent
 * daemons get different lines, and marks them with the daemon and the time; a claim left stale by a
 * dead daemon is handed out again. New and cancelled batches are announced on `ctl_gw_batches`.
 */
import type { SharedPostgres } from '../../store/postgres.js';
import { fromRow, toRow, type BatchData, type BatchRecord, type BatchResult, type ClaimedLine } from './store.js';
import type { SchemaStep } from '../schema.js';

export const BATCHES_MIGRATION = `
  CREATE TABLE gw_batches (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    input_file_id TEXT NOT NULL,
    completion_window TEXT NOT NULL,
    status TEXT NOT NULL,
    metadata TEXT,
    errors TEXT,
    total INTEGER NOT NULL DEFAULT 0,
    output_file_id TEXT,
    error_file_id TEXT,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    in_progress_at BIGINT,
    finalizing_at BIGINT,
    completed_at BIGINT,
    failed_at BIGINT,
    expired_at BIGINT,
    cancelling_at BIGINT,
    cancelled_at BIGINT
  );
  CREATE INDEX gw_batches_owner ON gw_batches(owner, created_at, id);
  CREATE TABLE gw_batch_results (
    batch_id TEXT NOT NULL,
    line INTEGER NOT NULL,
    ok INTEGER NOT NULL,
    result TEXT NOT NULL,
    PRIMARY KEY (batch_id, line)
  );
  CREATE TABLE gw_batch_lines (
    batch_id TEXT NOT NULL,
    line INTEGER NOT NULL,
    raw TEXT NOT NULL,
    claimed_by TEXT,
    claimed_at BIGINT,
    PRIMARY KEY (batch_id, line)
  );
`;

/** Batches and their lines: this capability's share of the gateway's PostgreSQL migrations (placed by version in gateway/schema.ts). */
export const BATCHES_PG_SCHEMA: SchemaStep[] = [{ version: 4, up: BATCHES_MIGRATION }];

const CHANNEL = 'ctl_gw_batches';

export class PgBatchStore implements BatchData {
  private readonly listeners: ((id: string) => void)[] = [];
  readonly shared: NonNullable<BatchData['shared']>;

  private constructor(private readonly db: SharedPostgres) {
    this.shared = {
      addLines: (id, lines) => this.addLines(id, lines),
      claim: (id, daemon, n, now, staleBefore) => this.claim(id, daemon, n, now, staleBefore),
      beginFinalizing: (id, at) => this.beginFinalizing(id, at),
      onChange: (fn) => void this.listeners.push(fn),
      announce: (id) => this.db.notify(CHANNEL, id).catch(() => undefined),
    };
  }

  static async open(db: SharedPostgres): Promise<PgBatchStore> {
    const s = new PgBatchStore(db);
    await db.subscribe(
      CHANNEL,
      (id) => s.listeners.forEach((fn) => fn(id)),
      () => undefined, // the periodic scan finds what a lost notification announced
    );
    return s;
  }

  async insert(b: BatchRecord): Promise<void> {
    const row = toRow(b);
    const cols = Object.keys(row);
    await this.db.query(`INSERT INTO gw_batches (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`, Object.values(row));
    await this.shared.announce(b.id);
  }

  async update(id: string, patch: Partial<BatchRecord>): Promise<void> {
    const row = toRow(patch);
    const cols = Object.keys(row);
    if (cols.length === 0) return;
    await this.db.query(`UPDATE gw_batches SET ${cols.map((c, i) => `${c} = $${i + 1}`).join(', ')} WHERE id = $${cols.length + 1}`, [...Object.values(row), id]);
  }

  async get(id: string): Promise<BatchRecord | undefined> {
    const r = (await this.db.query('SELECT * FROM gw_batches WHERE id = $1', [id]))[0];
    return r ? fromRow(r) : undefined;
  }

  async list(owner: string, limit: number, after?: BatchRecord): Promise<BatchRecord[]> {
    const rows = after
      ? await this.db.query('SELECT * FROM gw_batches WHERE owner = $1 AND (created_at, id) < ($2, $3) ORDER BY created_at DESC, id DESC LIMIT $4', [owner, after.createdAt, after.id, limit + 1])
      : await this.db.query('SELECT * FROM gw_batches WHERE owner = $1 ORDER BY created_at DESC, id DESC LIMIT $2', [owner, limit + 1]);
    return rows.map(fromRow);
  }

  async unfinished(): Promise<BatchRecord[]> {
    return (await this.db.query("SELECT * FROM gw_batches WHERE status NOT IN ('failed', 'completed', 'expired', 'cancelled') ORDER BY created_at")).map(fromRow);
  }

  async delete(id: string): Promise<void> {
    await this.db.transaction(async (q) => {
      for (const table of ['gw_batch_lines', 'gw_batch_results']) await q.query(`DELETE FROM ${table} WHERE batch_id = $1`, [id]);
      await q.query('DELETE FROM gw_batches WHERE id = $1', [id]);
    });
  }

  async record(batchId: string, r: BatchResult): Promise<void> {
    await this.db.query('INSERT INTO gw_batch_results (batch_id, line, ok, result) VALUES ($1, $2, $3, $4) ON CONFLICT (batch_id, line) DO NOTHING', [batchId, r.line, r.ok ? 1 : 0, r.result]);
  }

  async recordedLines(batchId: string): Promise<Set<number>> {
    return new Set((await this.db.query<{ line: number }>('SELECT line FROM gw_batch_results WHERE batch_id = $1', [batchId])).map((r) => r.line));
  }

  async counts(batchId: string): Promise<{ completed: number; failed: number }> {
    const rows = await this.db.query<{ ok: number; n: number }>('SELECT ok, COUNT(*) AS n FROM gw_batch_results WHERE batch_id = $1 GROUP BY ok', [batchId]);
    return { completed: rows.find((r) => r.ok === 1)?.n ?? 0, failed: rows.find((r) => r.ok === 0)?.n ?? 0 };
  }

  async *results(batchId: string, ok: boolean, page = 1000): AsyncGenerator<string> {
    let from = -1;
    for (;;) {
      const rows = await this.db.query<{ line: number; result: string }>(
        'SELECT line, result FROM gw_batch_results WHERE batch_id = $1 AND ok = $2 AND line > $3 ORDER BY line LIMIT $4',
        [batchId, ok ? 1 : 0, from, page],
      );
      for (const r of rows) yield r.result;
      if (rows.length < page) return;
      from = rows.at(-1)!.line;
    }
  }

  private async addLines(batchId: string, lines: readonly ClaimedLine[]): Promise<void> {
    await this.db.query(
      'INSERT INTO gw_batch_lines (batch_id, line, raw) SELECT $1, l.line, l.raw FROM unnest($2::int[], $3::text[]) AS l(line, raw) ON CONFLICT (batch_id, line) DO NOTHING',
      [batchId, lines.map((l) => l.line), lines.map((l) => l.raw)],
    );
  }

  private async claim(batchId: string, daemon: string, n: number, now: number, staleBefore: number): Promise<ClaimedLine[]> {
    return this.db.query<ClaimedLine>(
      `UPDATE gw_batch_lines l SET claimed_by = $2, claimed_at = $3
       FROM (
         SELECT c.line FROM gw_batch_lines c
         WHERE c.batch_id = $1 AND (c.claimed_at IS NULL OR c.claimed_at < $4)
           AND NOT EXISTS (SELECT 1 FROM gw_batch_results r WHERE r.batch_id = c.batch_id AND r.line = c.line)
         ORDER BY c.line LIMIT $5
         FOR UPDATE SKIP LOCKED
       ) free
       WHERE l.batch_id = $1 AND l.line = free.line
       RETURNING l.line, l.raw`,
      [batchId, daemon, now, staleBefore, n],
    );
  }

  private async beginFinalizing(id: string, at: number): Promise<boolean> {
    const rows = await this.db.query("UPDATE gw_batches SET status = 'finalizing', finalizing_at = $2 WHERE id = $1 AND status IN ('in_progress', 'cancelling') RETURNING id", [id, at]);
    return rows.length > 0;
  }
}
