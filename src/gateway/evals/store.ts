/** Eval suites, runs and results in the gateway database. */
import type { Store } from '../../store/index.js';
import type { Grader } from './graders.js';
import type { SchemaStep } from '../schema.js';

/** Evals: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
export const EVALS_SCHEMA: SchemaStep[] = [
  {
    // Eval suites, their runs and the graded result of every case and model.
    version: 13,
    up: `
CREATE TABLE eval_suites (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  description TEXT,
  grader TEXT,
  cases TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE eval_runs (
  id TEXT PRIMARY KEY,
  suite_id TEXT NOT NULL,
  models TEXT NOT NULL,
  judge_model TEXT,
  status TEXT NOT NULL,
  summary TEXT,
  error TEXT,
  started_at INTEGER NOT NULL,
  finished_at INTEGER
);
CREATE INDEX eval_runs_suite ON eval_runs(suite_id, started_at);
CREATE TABLE eval_results (
  run_id TEXT NOT NULL,
  case_id TEXT NOT NULL,
  model TEXT NOT NULL,
  passed INTEGER NOT NULL,
  score REAL NOT NULL,
  output TEXT,
  reason TEXT,
  error TEXT,
  latency_ms INTEGER,
  cost REAL,
  PRIMARY KEY (run_id, case_id, model)
);
`,
  },
];

export interface EvalCase {
  id: string;
  /** A prompt, or chat messages. */
  input: string | { role: 'system' | 'user' | 'assistant'; content: string }[];
  expected?: string;
  grader?: Grader;
  weight?: number;
}

export interface EvalSuite {
  id: string;
  name: string;
  description?: string;
  /** The grader of cases that name none. */
  grader?: Grader;
  cases: EvalCase[];
  createdAt: number;
  updatedAt: number;
}

export interface ModelSummary {
  model: string;
  score: number;
  passed: number;
  failed: number;
  errors: number;
  avgLatencyMs: number | null;
  costUsd: number;
}

export interface EvalRun {
  id: string;
  suiteId: string;
  models: string[];
  judgeModel?: string;
  status: 'running' | 'completed' | 'failed';
  summary?: ModelSummary[];
  error?: string;
  startedAt: number;
  finishedAt?: number;
}

export interface EvalResult {
  runId: string;
  caseId: string;
  model: string;
  passed: boolean;
  score: number;
  output: string | null;
  reason: string | null;
  error: string | null;
  latencyMs: number | null;
  cost: number | null;
}

const suiteOf = (r: Record<string, unknown>): EvalSuite => ({
  id: r.id as string,
  name: r.name as string,
  ...(r.description !== null ? { description: r.description as string } : {}),
  ...(r.grader !== null ? { grader: JSON.parse(r.grader as string) as Grader } : {}),
  cases: JSON.parse(r.cases as string) as EvalCase[],
  createdAt: r.created_at as number,
  updatedAt: r.updated_at as number,
});

const runOf = (r: Record<string, unknown>): EvalRun => ({
  id: r.id as string,
  suiteId: r.suite_id as string,
  models: JSON.parse(r.models as string) as string[],
  ...(r.judge_model !== null ? { judgeModel: r.judge_model as string } : {}),
  status: r.status as EvalRun['status'],
  ...(r.summary !== null ? { summary: JSON.parse(r.summary as string) as ModelSummary[] } : {}),
  ...(r.error !== null ? { error: r.error as string } : {}),
  startedAt: r.started_at as number,
  ...(r.finished_at !== null ? { finishedAt: r.finished_at as number } : {}),
});

export class EvalStore {
  constructor(private readonly store: Store) {}

  saveSuite(s: EvalSuite): void {
    this.store
      .prepare(
        `INSERT INTO eval_suites (id, name, description, grader, cases, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET name = excluded.name, description = excluded.description, grader = excluded.grader, cases = excluded.cases, updated_at = excluded.updated_at`,
      )
      .run(s.id, s.name, s.description ?? null, s.grader ? JSON.stringify(s.grader) : null, JSON.stringify(s.cases), s.createdAt, s.updatedAt);
  }

  suite(idOrName: string): EvalSuite | undefined {
    const r = this.store.prepare('SELECT * FROM eval_suites WHERE id = ? OR name = ?').get(idOrName, idOrName) as Record<string, unknown> | undefined;
    return r ? suiteOf(r) : undefined;
  }

  suites(): EvalSuite[] {
    return (this.store.prepare('SELECT * FROM eval_suites ORDER BY created_at, id').all() as Record<string, unknown>[]).map(suiteOf);
  }

  saveRun(r: EvalRun): void {
    this.store
      .prepare(
        `INSERT INTO eval_runs (id, suite_id, models, judge_model, status, summary, error, started_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET status = excluded.status, summary = excluded.summary, error = excluded.error, finished_at = excluded.finished_at`,
      )
      .run(r.id, r.suiteId, JSON.stringify(r.models), r.judgeModel ?? null, r.status, r.summary ? JSON.stringify(r.summary) : null, r.error ?? null, r.startedAt, r.finishedAt ?? null);
  }

  run(id: string): EvalRun | undefined {
    const r = this.store.prepare('SELECT * FROM eval_runs WHERE id = ?').get(id) as Record<string, unknown> | undefined;
    return r ? runOf(r) : undefined;
  }

  runs(suiteId?: string, limit = 50): EvalRun[] {
    const rows = (suiteId === undefined ? this.store.prepare('SELECT * FROM eval_runs ORDER BY started_at DESC, id LIMIT ?').all(limit) : this.store.prepare('SELECT * FROM eval_runs WHERE suite_id = ? ORDER BY started_at DESC, id LIMIT ?').all(suiteId, limit)) as Record<string, unknown>[];
    return rows.map(runOf);
  }

  /** Runs left `running` by a daemon that stopped: they never finish now. */
  failInterrupted(now: number): void {
    this.store.prepare("UPDATE eval_runs SET status = 'failed', error = 'the daemon stopped during the run', finished_at = ? WHERE status = 'running'").run(now);
  }

  saveResult(r: EvalResult): void {
    this.store
      .prepare('INSERT OR REPLACE INTO eval_results (run_id, case_id, model, passed, score, output, reason, error, latency_ms, cost) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(r.runId, r.caseId, r.model, r.passed ? 1 : 0, r.score, r.output, r.reason, r.error, r.latencyMs, r.cost);
  }

  results(runId: string): EvalResult[] {
    return (this.store.prepare('SELECT * FROM eval_results WHERE run_id = ? ORDER BY model, case_id').all(runId) as Record<string, unknown>[]).map((r) => ({
      runId: r.run_id as string,
      caseId: r.case_id as string,
      model: r.model as string,
      passed: r.passed === 1,
      score: r.score as number,
      output: r.output as string | null,
      reason: r.reason as string | null,
      error: r.error as string | null,
      latencyMs: r.latency_ms as number | null,
      cost: r.cost as number | null,
    }));
  }
}
