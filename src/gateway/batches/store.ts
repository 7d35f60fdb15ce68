/** SQL of batches and of each line's recorded result. */
import type { Store } from '../../store/index.js';

export type BatchStatus = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';
export const TERMINAL: ReadonlySet<BatchStatus> = new Set(['failed', 'completed', 'expired', 'cancelled']);

export interface BatchError {
  code: string;
  message: string;
  param?: string | null;
  line?: number | null;
}

/** Timestamps in milliseconds. */
export interface BatchRecord {
  id: string;
  owner: string;
  endpoint: string;
  inputFileId: string;
  completionWindow: string;
  status: BatchStatus;
  metadata?: Record<string, string>;
  errors?: BatchError[];
  total: number;
  outputFileId?: string;
  errorFileId?: string;
  createdAt: number;
  expiresAt: number;
  inProgressAt?: number;
  finalizingAt?: number;
  completedAt?: number;
  failedAt?: number;
  expiredAt?: number;
  cancellingAt?: number;
  cancelledAt?: number;
}

const COLUMNS: [keyof BatchRecord, string][] = [
  ['id', 'id'],
  ['owner', 'owner'],
  ['endpoint', 'endpoint'],
  ['inputFileId', 'input_file_id'],
  ['completionWindow', 'completion_window'],
  ['status', 'status'],
  ['metadata', 'metadata'],
  ['errors', 'errors'],
  ['total', 'total'],
  ['outputFileId', 'output_file_id'],
  ['errorFileId', 'error_file_id'],
  ['createdAt', 'created_at'],
  ['expiresAt', 'expires_at'],
  ['inProgressAt', 'in_progress_at'],
  ['finalizingAt', 'finalizing_at'],
  ['completedAt', 'completed_at'],
  ['failedAt', 'failed_at'],
  ['expiredAt', 'expired_at'],
  ['cancellingAt', 'cancelling_at'],
  ['cancelledAt', 'cancelled_at'],
];
const JSON_FIELDS = new Set<keyof BatchRecord>(['metadata', 'errors']);

function toRow(b: Partial<BatchRecord>): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const [field, col] of COLUMNS) {
    if (!(field in b)) continue;
    const v = b[field];
    row[col] = v === undefined ? null : JSON_FIELDS.has(field) ? JSON.stringify(v) : v;
  }
  return row;
}

function fromRow(r: Record<string, unknown>): BatchRecord {
  const b: Record<string, unknown> = {};
  for (const [field, col] of COLUMNS) {
    const v = r[col];
    if (v === null || v === undefined) continue;
    b[field] = JSON_FIELDS.has(field) ? JSON.parse(v as string) : v;
  }
  return b as unknown as BatchRecord;
}

export interface BatchResult {
  line: number;
  ok: boolean;
  /** The output or error file's line (JSON). */
  result: string;
}

export class BatchStore {
  constructor(readonly store: Store) {}

  insert(b: BatchRecord): void {
    const row = toRow(b);
    const cols = Object.keys(row);
    this.store.prepare(`INSERT INTO batches (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`).run(...Object.values(row));
  }

  /** Sets the given fields (undefined clears one). */
  update(id: string, patch: Partial<BatchRecord>): void {
    const row = toRow(patch);
    const cols = Object.keys(row);
    if (cols.length === 0) return;
    this.store.prepare(`UPDATE batches SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`).run(...Object.values(row), id);
  }

  get(id: string): BatchRecord | undefined {
    const r = this.store.prepare('SELECT * FROM batches WHERE id = ?').get(id) as Record<string, unknown> | undefined;
    return r ? fromRow(r) : undefined;
  }

  /** Newest first; one more than `limit` when there are more. */
  list(owner: string, limit: number, after?: BatchRecord): BatchRecord[] {
    const rows = after
      ? this.store.prepare('SELECT * FROM batches WHERE owner = ? AND (created_at, id) < (?, ?) ORDER BY created_at DESC, id DESC LIMIT ?').all(owner, after.createdAt, after.id, limit + 1)
      : this.store.prepare('SELECT * FROM batches WHERE owner = ? ORDER BY created_at DESC, id DESC LIMIT ?').all(owner, limit + 1);
    return (rows as Record<string, unknown>[]).map(fromRow);
  }

  /** Batches a runner must (re)start: not in a terminal status. */
  unfinished(): BatchRecord[] {
    return (this.store.prepare("SELECT * FROM batches WHERE status NOT IN ('failed', 'completed', 'expired', 'cancelled') ORDER BY created_at").all() as Record<string, unknown>[]).map(fromRow);
  }

  delete(id: string): void {
    this.store.transaction(() => {
      this.store.prepare('DELETE FROM batch_results WHERE batch_id = ?').run(id);
      this.store.prepare('DELETE FROM batches WHERE id = ?').run(id);
    });
  }

  record(batchId: string, r: BatchResult): void {
    this.store.prepare('INSERT OR IGNORE INTO batch_results (batch_id, line, ok, result) VALUES (?, ?, ?, ?)').run(batchId, r.line, r.ok ? 1 : 0, r.result);
  }

  recordedLines(batchId: string): Set<number> {
    return new Set((this.store.prepare('SELECT line FROM batch_results WHERE batch_id = ?').all(batchId) as { line: number }[]).map((r) => r.line));
  }

  counts(batchId: string): { completed: number; failed: number } {
    const rows = this.store.prepare('SELECT ok, COUNT(*) AS n FROM batch_results WHERE batch_id = ? GROUP BY ok').all(batchId) as { ok: number; n: number }[];
    return { completed: rows.find((r) => r.ok === 1)?.n ?? 0, failed: rows.find((r) => r.ok === 0)?.n ?? 0 };
  }

  /** Recorded results in line order, a page at a time (the output files are written from these). */
  *results(batchId: string, ok: boolean, page = 1000): Generator<string> {
    let from = -1;
    for (;;) {
      const rows = this.store.prepare('SELECT line, result FROM batch_results WHERE batch_id = ? AND ok = ? AND line > ? ORDER BY line LIMIT ?').all(batchId, ok ? 1 : 0, from, page) as { line: number; result: string }[];
      for (const r of rows) yield r.result;
      if (rows.length < page) return;
      from = rows.at(-1)!.line;
    }
  }
}
