import type { Clock } from '../../http/clock.js';
import type { Sql } from '../../store/sql.js';
import { nowIso } from '../time.js';
import { parseColumn } from './json.js';

export type RunStatus = 'running' | 'completed' | 'failed' | 'interrupted';

interface RunRow {
  batch_id: string;
  status: RunStatus;
  stage: string;
  model: string | null;
  post_count: number;
  result: string | null;
  error: string | null;
  started_at: string;
  finished_at: string | null;
}

export interface RunRecord {
  batch_id: string;
  status: RunStatus;
  stage: string;
  model: string | null;
  post_count: number;
  error: string | null;
  started_at: string;
  finished_at: string | null;
  /** The pipeline result of a finished run. */
  result: Record<string, unknown> | null;
}

const toRun = (r: RunRow): RunRecord => ({ ...r, result: parseColumn<Record<string, unknown> | null>(r.result, null) });

/** One row per pipeline run (its batch). */
export class RunsRepo {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  async start(batchId: string, model: string): Promise<void> {
    await this.sql.run("INSERT INTO runs (batch_id, status, stage, model, started_at) VALUES (?, 'running', 'starting', ?, ?)", batchId, model, nowIso(this.clock));
  }

  async stage(batchId: string, stage: string): Promise<void> {
    await this.sql.run('UPDATE runs SET stage = ? WHERE batch_id = ?', stage, batchId);
  }

  async finish(batchId: string, status: RunStatus, postCount: number, result: unknown, error: string | null): Promise<void> {
    await this.sql.run(
      "UPDATE runs SET status = ?, stage = 'done', post_count = ?, result = ?, error = ?, finished_at = ? WHERE batch_id = ?",
      status,
      postCount,
      result === null ? null : JSON.stringify(result),
      error,
      nowIso(this.clock),
      batchId,
    );
  }

  /** Runs left `running` by a daemon that died are marked interrupted at start-up. */
  markInterrupted(): Promise<number> {
    return this.sql.run("UPDATE runs SET status = 'interrupted', stage = 'done', error = 'the daemon stopped during the run', finished_at = ? WHERE status = 'running'", nowIso(this.clock));
  }

  async get(batchId: string): Promise<RunRecord | undefined> {
    const r = await this.sql.get<RunRow>('SELECT * FROM runs WHERE batch_id = ?', batchId);
    return r && toRun(r);
  }

  async recent(limit: number): Promise<RunRecord[]> {
    // Ties on started_at in insertion order: SQLite's rowid, the seq column in PostgreSQL.
    const order = this.sql.dialect === 'sqlite' ? 'rowid' : 'seq';
    return (await this.sql.all<RunRow>(`SELECT * FROM runs ORDER BY started_at DESC, ${order} DESC LIMIT ?`, limit)).map(toRun);
  }
}
