/**
 * SQL of batches and of each line's recorded result (one per line: a second record of a line is
 * ignored), on either database (store/sql.ts). Several daemons sharing the PostgreSQL database
 * also keep the validated lines themselves (`batch_lines`), which every daemon takes a few at a
 * time (SharedBatchStore): `claim` selects lines nobody has recorded or holds with `FOR UPDATE SKIP
 * LOCKED`, so concurrent daemons get different lines, and marks them with the daemon and the time;
 * a claim left stale by a dead daemon is handed out again. New and cancelled batches are announced
 * on `ctl_gw_batches`.
 */
import type { SharedPostgres } from '../../store/postgres.js';
import type { Sql } from '../../store/sql.js';
import type { SchemaStep } from '../schema.js';
import { PG_TYPES, SQLITE_TYPES, type ColumnTypes } from '../sql.js';

/** The batches and their results as `t`'s database declares them. */
const batchTables = (t: ColumnTypes) => `
CREATE TABLE ${t.p}batches (
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
  created_at ${t.big} NOT NULL,
  expires_at ${t.big} NOT NULL,
  in_progress_at ${t.big},
  finalizing_at ${t.big},
  completed_at ${t.big},
  failed_at ${t.big},
  expired_at ${t.big},
  cancelling_at ${t.big},
  cancelled_at ${t.big}
);
CREATE INDEX ${t.p}batches_owner ON ${t.p}batches(owner, created_at, id);
CREATE TABLE ${t.p}batch_results (
  batch_id TEXT NOT NULL,
  line INTEGER NOT NULL,
  ok INTEGER NOT NULL,
  result TEXT NOT NULL,
  PRIMARY KEY (batch_id, line)
)${t.withoutRowid};
`;

/** Batches in the shared database (`gw_batches`, `gw_batch_results`, and the lines to run in `gw_batch_lines`). */
export const BATCHES_MIGRATION = `${batchTables(PG_TYPES)}
CREATE TABLE gw_batch_lines (
  batch_id TEXT NOT NULL,
  line INTEGER NOT NULL,
  raw TEXT NOT NULL,
  claimed_by TEXT,
  claimed_at BIGINT,
  PRIMARY KEY (batch_id, line)
);
`;

/** Batches: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
/** Batches and their lines: this capability's share of the gateway's PostgreSQL migrations (placed by version in gateway/schema.ts). */
export const BATCHES_PG_SCHEMA: SchemaStep[] = [{ version: 4, up: BATCHES_MIGRATION }];

export const BATCHES_SCHEMA: SchemaStep[] = [
  // Batches, and each batch line's recorded result (a line with a result never runs again, even after kill -9).
  { version: 4, up: batchTables(SQLITE_TYPES) },
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
  /** Tables keyed by batch_id that go with a batch. */
  protected readonly lineTables = ['batch_results'];

  constructor(protected readonly sql: Sql) {}

  async insert(b: BatchRecord): Promise<void> {
    const row = toRow(b);
    const cols = Object.keys(row);
    await this.sql.run(`INSERT INTO batches (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`, ...Object.values(row));
  }

  /** Sets the given fields (undefined clears one). */
  async update(id: string, patch: Partial<BatchRecord>): Promise<void> {
    const row = toRow(patch);
    const cols = Object.keys(row);
    if (cols.length === 0) return;
    await this.sql.run(`UPDATE batches SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`, ...Object.values(row), id);
  }

  async get(id: string): Promise<BatchRecord | undefined> {
    const r = await this.sql.get<Record<string, unknown>>('SELECT * FROM batches WHERE id = ?', id);
    return r ? fromRow(r) : undefined;
  }

  /** Newest first; one more than `limit` when there are more. */
  async list(owner: string, limit: number, after?: BatchRecord): Promise<BatchRecord[]> {
    const rows = after
      ? await this.sql.all<Record<string, unknown>>('SELECT * FROM batches WHERE owner = ? AND (created_at, id) < (?, ?) ORDER BY created_at DESC, id DESC LIMIT ?', owner, after.createdAt, after.id, limit + 1)
      : await this.sql.all<Record<string, unknown>>('SELECT * FROM batches WHERE owner = ? ORDER BY created_at DESC, id DESC LIMIT ?', owner, limit + 1);
    return rows.map(fromRow);
  }

  /** Batches a runner must (re)start: not in a terminal status. */
  async unfinished(): Promise<BatchRecord[]> {
    return (await this.sql.all<Record<string, unknown>>("SELECT * FROM batches WHERE status NOT IN ('failed', 'completed', 'expired', 'cancelled') ORDER BY created_at")).map(fromRow);
  }

  async delete(id: string): Promise<void> {
    await this.sql.transaction(async (tx) => {
      for (const table of this.lineTables) await tx.run(`DELETE FROM ${table} WHERE batch_id = ?`, id);
      await tx.run('DELETE FROM batches WHERE id = ?', id);
    });
  }

  async record(batchId: string, r: BatchResult): Promise<void> {
    await this.sql.run('INSERT INTO batch_results (batch_id, line, ok, result) VALUES (?, ?, ?, ?) ON CONFLICT (batch_id, line) DO NOTHING', batchId, r.line, r.ok ? 1 : 0, r.result);
  }

  async recordedLines(batchId: string): Promise<Set<number>> {
    return new Set((await this.sql.all<{ line: number }>('SELECT line FROM batch_results WHERE batch_id = ?', batchId)).map((r) => r.line));
  }

  async counts(batchId: string): Promise<{ completed: number; failed: number }> {
    const rows = await this.sql.all<{ ok: number; n: number }>('SELECT ok, COUNT(*) AS n FROM batch_results WHERE batch_id = ? GROUP BY ok', batchId);
    return { completed: rows.find((r) => r.ok === 1)?.n ?? 0, failed: rows.find((r) => r.ok === 0)?.n ?? 0 };
  }

  /** Recorded results in line order, a page at a time (the output files are written from these). */
  async *results(batchId: string, ok: boolean, page = 1000): AsyncGenerator<string> {
    let from = -1;
    for (;;) {
      const rows = await this.sql.all<{ line: number; result: string }>('SELECT line, result FROM batch_results WHERE batch_id = ? AND ok = ? AND line > ? ORDER BY line LIMIT ?', batchId, ok ? 1 : 0, from, page);
      for (const r of rows) yield r.result;
      if (rows.length < page) return;
      from = rows.at(-1)!.line;
    }
  }
}

const CHANNEL = 'ctl_gw_batches';

/** Batches in the database several daemons share: the lines to run kept too, handed out a few at a time. */
export class SharedBatchStore extends BatchStore {
  protected override readonly lineTables = ['batch_lines', 'batch_results'];
  private readonly listeners: ((id: string) => void)[] = [];
  readonly shared: NonNullable<BatchData['shared']>;

  private constructor(sql: Sql, db: SharedPostgres) {
    super(sql);
    this.shared = {
      addLines: (id, lines) => this.addLines(id, lines),
      claim: (id, daemon, n, now, staleBefore) => this.claim(id, daemon, n, now, staleBefore),
      beginFinalizing: (id, at) => this.beginFinalizing(id, at),
      onChange: (fn) => void this.listeners.push(fn),
      announce: (id) => db.notify(CHANNEL, id).catch(() => undefined),
    };
  }

  /** `sql`: the query layer of `db`, the gateway's tables prefixed. */
  static async open(sql: Sql, db: SharedPostgres): Promise<SharedBatchStore> {
    const s = new SharedBatchStore(sql, db);
    await db.subscribe(
      CHANNEL,
      (id) => s.listeners.forEach((fn) => fn(id)),
      () => undefined, // the periodic scan finds what a lost notification announced
    );
    return s;
  }

  override async insert(b: BatchRecord): Promise<void> {
    await super.insert(b);
    await this.shared.announce(b.id);
  }

  /** One statement for all the lines (arrays unnested). */
  private async addLines(batchId: string, lines: readonly ClaimedLine[]): Promise<void> {
    await this.sql.run(
      'INSERT INTO batch_lines (batch_id, line, raw) SELECT ?, l.line, l.raw FROM unnest(?::int[], ?::text[]) AS l(line, raw) ON CONFLICT (batch_id, line) DO NOTHING',
      batchId,
      lines.map((l) => l.line),
      lines.map((l) => l.raw),
    );
  }

  private async claim(batchId: string, daemon: string, n: number, now: number, staleBefore: number): Promise<ClaimedLine[]> {
    return this.sql.all<ClaimedLine>(
      `UPDATE batch_lines l SET claimed_by = ?, claimed_at = ?
       FROM (
         SELECT c.line FROM batch_lines c
         WHERE c.batch_id = ? AND (c.claimed_at IS NULL OR c.claimed_at < ?)
           AND NOT EXISTS (SELECT 1 FROM batch_results r WHERE r.batch_id = c.batch_id AND r.line = c.line)
         ORDER BY c.line LIMIT ?
         FOR UPDATE SKIP LOCKED
       ) free
       WHERE l.batch_id = ? AND l.line = free.line
       RETURNING l.line, l.raw`,
      daemon,
      now,
      batchId,
      staleBefore,
      n,
      batchId,
    );
  }

  private async beginFinalizing(id: string, at: number): Promise<boolean> {
    return (await this.sql.run("UPDATE batches SET status = 'finalizing', finalizing_at = ? WHERE id = ? AND status IN ('in_progress', 'cancelling')", at, id)) > 0;
  }
}
