/**
 * SQL of batches and of each line's recorded result: the daemon's SQLite file here; the PostgreSQL
 * database of several daemons in pg-store.ts, which also hands out lines to run.
 */
import type { Store } from '../../store/index.js';
import type { SchemaStep } from '../schema.js';

/** Batches: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
export const BATCHES_SCHEMA: SchemaStep[] = [
  {
    // Batches, and each batch line's recorded result (a line with a result never runs again, even after
    // kill -9).
    version: 4,
    up: `
CREATE TABLE batches (
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
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  in_progress_at INTEGER,
  finalizing_at INTEGER,
  completed_at INTEGER,
  failed_at INTEGER,
  expired_at INTEGER,
  cancelling_at INTEGER,
  cancelled_at INTEGER
);
CREATE INDEX batches_owner ON batches(owner, created_at, id);
CREATE TABLE batch_results (
  batch_id TEXT NOT NULL,
  line INTEGER NOT NULL,
  ok INTEGER NOT NULL,
  result TEXT NOT NULL,
  PRIMARY KEY (batch_id, line)
) WITHOUT ROWID;
`,
  },
];

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

export function toRow(b: Partial<BatchRecord>): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const [field, col] of COLUMNS) {
    if (!(field in b)) continue;
    const v = b[field];
    row[col] = v === undefined ? null : JSON_FIELDS.has(field) ? JSON.stringify(v) : v;
  }
  return row;
}

export function fromRow(r: Record<string, unknown>): BatchRecord {
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

/** A line handed to one daemon to run (several daemons on one database). */
export interface ClaimedLine {
  line: number;
  /** The input file's line as uploaded. */
  raw: string;
}

/** What the batch service needs of its store. */
export interface BatchData {
  insert(b: BatchRecord): Promise<void>;
  update(id: string, patch: Partial<BatchRecord>): Promise<void>;
  get(id: string): Promise<BatchRecord | undefined>;
  list(owner: string, limit: number, after?: BatchRecord): Promise<BatchRecord[]>;
  unfinished(): Promise<BatchRecord[]>;
  delete(id: string): Promise<void>;
  record(batchId: string, r: BatchResult): Promise<void>;
  recordedLines(batchId: string): Promise<Set<number>>;
  counts(batchId: string): Promise<{ completed: number; failed: number }>;
  results(batchId: string, ok: boolean, page?: number): AsyncGenerator<string>;
  /**
   * Several daemons: the lines of a validated batch, kept so any daemon can run them; `claim` hands
   * out up to `n` lines nobody has recorded or holds (a claim older than `staleBefore` is free again:
   * its daemon died), each to one daemon only (`FOR UPDATE SKIP LOCKED`).
   */
  shared?: {
    addLines(batchId: string, lines: readonly ClaimedLine[]): Promise<void>;
    claim(batchId: string, daemon: string, n: number, now: number, staleBefore: number): Promise<ClaimedLine[]>;
    /** Move a batch to finalizing; false when another daemon did it first (or it is not running). */
    beginFinalizing(id: string, at: number): Promise<boolean>;
    /** Another daemon created or cancelled a batch. */
    onChange(fn: (batchId: string) => void): void;
    announce(batchId: string): Promise<void>;
  };
}

export class BatchStore implements BatchData {
  constructor(readonly store: Store) {}

  async insert(b: BatchRecord): Promise<void> {
    const row = toRow(b);
    const cols = Object.keys(row);
    this.store.prepare(`INSERT INTO batches (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`).run(...Object.values(row));
  }

  /** Sets the given fields (undefined clears one). */
  async update(id: string, patch: Partial<BatchRecord>): Promise<void> {
    const row = toRow(patch);
    const cols = Object.keys(row);
    if (cols.length === 0) return;
    this.store.prepare(`UPDATE batches SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`).run(...Object.values(row), id);
  }

  async get(id: string): Promise<BatchRecord | undefined> {
    const r = this.store.prepare('SELECT * FROM batches WHERE id = ?').get(id) as Record<string, unknown> | undefined;
    return r ? fromRow(r) : undefined;
  }

  /** Newest first; one more than `limit` when there are more. */
  async list(owner: string, limit: number, after?: BatchRecord): Promise<BatchRecord[]> {
    const rows = after
      ? this.store.prepare('SELECT * FROM batches WHERE owner = ? AND (created_at, id) < (?, ?) ORDER BY created_at DESC, id DESC LIMIT ?').all(owner, after.createdAt, after.id, limit + 1)
      : this.store.prepare('SELECT * FROM batches WHERE owner = ? ORDER BY created_at DESC, id DESC LIMIT ?').all(owner, limit + 1);
    return (rows as Record<string, unknown>[]).map(fromRow);
  }

  /** Batches a runner must (re)start: not in a terminal status. */
  async unfinished(): Promise<BatchRecord[]> {
    return (this.store.prepare("SELECT * FROM batches WHERE status NOT IN ('failed', 'completed', 'expired', 'cancelled') ORDER BY created_at").all() as Record<string, unknown>[]).map(fromRow);
  }

  async delete(id: string): Promise<void> {
    this.store.transaction(() => {
      this.store.prepare('DELETE FROM batch_results WHERE batch_id = ?').run(id);
      this.store.prepare('DELETE FROM batches WHERE id = ?').run(id);
    });
  }

  async record(batchId: string, r: BatchResult): Promise<void> {
    this.store.prepare('INSERT OR IGNORE INTO batch_results (batch_id, line, ok, result) VALUES (?, ?, ?, ?)').run(batchId, r.line, r.ok ? 1 : 0, r.result);
  }

  async recordedLines(batchId: string): Promise<Set<number>> {
    return new Set((this.store.prepare('SELECT line FROM batch_results WHERE batch_id = ?').all(batchId) as { line: number }[]).map((r) => r.line));
  }

  async counts(batchId: string): Promise<{ completed: number; failed: number }> {
    const rows = this.store.prepare('SELECT ok, COUNT(*) AS n FROM batch_results WHERE batch_id = ? GROUP BY ok').all(batchId) as { ok: number; n: number }[];
    return { completed: rows.find((r) => r.ok === 1)?.n ?? 0, failed: rows.find((r) => r.ok === 0)?.n ?? 0 };
  }

  /** Recorded results in line order, a page at a time (the output files are written from these). */
  async *results(batchId: string, ok: boolean, page = 1000): AsyncGenerator<string> {
    let from = -1;
    for (;;) {
      const rows = this.store.prepare('SELECT line, result FROM batch_results WHERE batch_id = ? AND ok = ? AND line > ? ORDER BY line LIMIT ?').all(batchId, ok ? 1 : 0, from, page) as { line: number; result: string }[];
      for (const r of rows) yield r.result;
      if (rows.length < page) return;
      from = rows.at(-1)!.line;
    }
  }
}
