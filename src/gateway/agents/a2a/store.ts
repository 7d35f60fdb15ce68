/** SQL of A2A tasks. */
import type { Store } from '../../../store/index.js';
import type { SchemaStep } from '../../schema.js';

/** A2A tasks: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
export const A2A_SCHEMA: SchemaStep[] = [
  {
    version: 7,
    up: `
CREATE TABLE a2a_tasks (
  id TEXT PRIMARY KEY,
  skill TEXT NOT NULL,
  state TEXT NOT NULL,
  messages TEXT NOT NULL,
  artifacts TEXT NOT NULL DEFAULT '[]',
  metadata TEXT NOT NULL DEFAULT '{}',
  error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX a2a_tasks_time ON a2a_tasks(created_at);
`,
  },
  {
    // A2A tasks record who created them (the API key's id; NULL for an anonymous caller), so a caller
    // lists and reads its own tasks only.
    version: 18,
    up: `ALTER TABLE a2a_tasks ADD COLUMN owner TEXT;`,
  },
];

export const TASK_STATES = ['submitted', 'working', 'completed', 'failed', 'cancelled'] as const;
export type TaskState = (typeof TASK_STATES)[number];

export interface A2aMessage {
  role: string;
  content: string;
}

export type Artifact = { type: 'text'; text: string } | { type: 'data'; data: unknown };

export interface TaskRecord {
  id: string;
  skill: string;
  state: TaskState;
  messages: A2aMessage[];
  artifacts: Artifact[];
  metadata: Record<string, unknown>;
  error?: string;
  createdAt: number;
  updatedAt: number;
  /** Who created it: an API key's id, `env:GATEWAY_API_KEY`, or null (an anonymous caller, the control socket). */
  owner: string | null;
}

/** Whose tasks a caller sees: everyone's (the control socket) or one owner's. */
export type TaskScope = { all: true } | { all: false; owner: string | null };

const ownerClause = (scope: TaskScope, args: unknown[]): string | undefined => {
  if (scope.all) return undefined;
  if (scope.owner === null) return 'owner IS NULL';
  args.push(scope.owner);
  return 'owner = ?';
};

const row = (r: Record<string, unknown>): TaskRecord => ({
  id: r.id as string,
  skill: r.skill as string,
  state: r.state as TaskState,
  messages: JSON.parse(r.messages as string) as A2aMessage[],
  artifacts: JSON.parse(r.artifacts as string) as Artifact[],
  metadata: JSON.parse(r.metadata as string) as Record<string, unknown>,
  ...(r.error !== null ? { error: r.error as string } : {}),
  createdAt: r.created_at as number,
  updatedAt: r.updated_at as number,
  owner: (r.owner as string | null) ?? null,
});

export class TaskStore {
  constructor(private readonly store: Store) {}

  /** A task, when `scope` may see it (another owner's task is as good as missing). */
  get(id: string, scope: TaskScope = { all: true }): TaskRecord | undefined {
    const args: unknown[] = [id];
    const own = ownerClause(scope, args);
    const r = this.store.prepare(`SELECT * FROM a2a_tasks WHERE id = ?${own ? ` AND ${own}` : ''}`).get(...args) as Record<string, unknown> | undefined;
    return r ? row(r) : undefined;
  }

  save(t: TaskRecord): void {
    this.store
      .prepare(
        `INSERT INTO a2a_tasks (id, skill, state, messages, artifacts, metadata, error, created_at, updated_at, owner) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET state = excluded.state, artifacts = excluded.artifacts, metadata = excluded.metadata, error = excluded.error, updated_at = excluded.updated_at`,
      )
      .run(t.id, t.skill, t.state, JSON.stringify(t.messages), JSON.stringify(t.artifacts), JSON.stringify(t.metadata), t.error ?? null, t.createdAt, t.updatedAt, t.owner);
  }

  /** Move a task to a new state unless it already ended (a cancel wins over a late finish). */
  finish(t: TaskRecord): boolean {
    const r = this.store
      .prepare(`UPDATE a2a_tasks SET state = ?, artifacts = ?, metadata = ?, error = ?, updated_at = ? WHERE id = ? AND state IN ('submitted', 'working')`)
      .run(t.state, JSON.stringify(t.artifacts), JSON.stringify(t.metadata), t.error ?? null, t.updatedAt, t.id);
    return r.changes > 0;
  }

  list(f: { state?: TaskState; skill?: string; scope?: TaskScope }, offset: number, limit: number): { rows: TaskRecord[]; total: number } {
    const parts: string[] = [];
    const args: unknown[] = [];
    const own = ownerClause(f.scope ?? { all: true }, args);
    if (own) parts.push(own);
    if (f.state) (parts.push('state = ?'), args.push(f.state));
    if (f.skill) (parts.push('skill = ?'), args.push(f.skill));
    const w = parts.length ? parts.join(' AND ') : '1';
    const total = (this.store.prepare(`SELECT count(*) AS n FROM a2a_tasks WHERE ${w}`).get(...args) as { n: number }).n;
    const rows = this.store.prepare(`SELECT * FROM a2a_tasks WHERE ${w} ORDER BY created_at DESC, id LIMIT ? OFFSET ?`).all(...args, limit, offset) as Record<string, unknown>[];
    return { rows: rows.map(row), total };
  }

  counts(scope: TaskScope = { all: true }): Record<TaskState, number> {
    const out = Object.fromEntries(TASK_STATES.map((s) => [s, 0])) as Record<TaskState, number>;
    const args: unknown[] = [];
    const own = ownerClause(scope, args);
    for (const r of this.store.prepare(`SELECT state, count(*) AS n FROM a2a_tasks${own ? ` WHERE ${own}` : ''} GROUP BY state`).all(...args) as { state: TaskState; n: number }[]) out[r.state] = r.n;
    return out;
  }

  /** Tasks a stop left in flight: failed on start (their work cannot resume). */
  failInterrupted(now: number): number {
    return this.store.prepare(`UPDATE a2a_tasks SET state = 'failed', error = 'the gateway stopped while the task ran', updated_at = ? WHERE state IN ('submitted', 'working')`).run(now).changes;
  }
}
