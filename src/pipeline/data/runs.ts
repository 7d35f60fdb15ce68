import type { Clock } from '../../http/clock.js';
import type { Store } from '../../store/index.js';
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
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  start(batchId: string, model: string): void {
    this.store
      .prepare("INSERT INTO runs (batch_id, status, stage, model, started_at) VALUES (?, 'running', 'starting', ?, ?)")
      .run(batchId, model, nowIso(this.clock));
  }

  stage(batchId: string, stage: string): void {
    this.store.prepare('UPDATE runs SET stage = ? WHERE batch_id = ?').run(stage, batchId);
  }

  finish(batchId: string, status: RunStatus, postCount: number, result: unknown, error: string | null): void {
    this.store
      .prepare("UPDATE runs SET status = ?, stage = 'done', post_count = ?, result = ?, error = ?, finished_at = ? WHERE batch_id = ?")
      .run(status, postCount, result === null ? null : JSON.stringify(result), error, nowIso(this.clock), batchId);
  }

  /** Runs left `running` by a daemon that died are marked interrupted at start-up. */
  markInterrupted(): number {
    return this.store
      .prepare("UPDATE runs SET status = 'interrupted', stage = 'done', error = 'the daemon stopped during the run', finished_at = ? WHERE status = 'running'")
      .run(nowIso(this.clock)).changes;
  }

  get(batchId: string): RunRecord | undefined {
    const r = this.store.prepare('SELECT * FROM runs WHERE batch_id = ?').get(batchId) as RunRow | undefined;
    return r && toRun(r);
  }

  recent(limit: number): RunRecord[] {
    return (this.store.prepare('SELECT * FROM runs ORDER BY started_at DESC, rowid DESC LIMIT ?').all(limit) as RunRow[]).map(toRun);
  }
}
