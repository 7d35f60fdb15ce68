/** SQL of skills and their executions. */
import type { Store } from '../../store/index.js';
import type { SchemaStep } from '../schema.js';

/** Skills: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
export const SKILLS_SCHEMA: SchemaStep[] = [
  {
    // Skills and their executions.
    version: 6,
    up: `
CREATE TABLE skills (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  version TEXT NOT NULL,
  description TEXT NOT NULL,
  schema TEXT NOT NULL,
  handler_code TEXT NOT NULL,
  api_key_id TEXT,
  mode TEXT NOT NULL,
  source TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX skills_name ON skills(name, ifnull(api_key_id, ''));
CREATE TABLE skill_executions (
  id TEXT PRIMARY KEY,
  skill_id TEXT NOT NULL,
  skill_name TEXT NOT NULL,
  api_key_id TEXT,
  session_id TEXT,
  input TEXT,
  output TEXT,
  status TEXT NOT NULL,
  error TEXT,
  duration_ms INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX skill_executions_key ON skill_executions(api_key_id, created_at);
CREATE INDEX skill_executions_time ON skill_executions(created_at);
`,
  },
];

export const SKILL_MODES = ['on', 'off', 'auto'] as const;
export type SkillMode = (typeof SKILL_MODES)[number];
export const SKILL_SOURCES = ['marketplace', 'registry', 'local'] as const;
export type SkillSource = (typeof SKILL_SOURCES)[number];

export interface SkillRecord {
  id: string;
  name: string;
  version: string;
  description: string;
  schema: { input?: unknown; output?: unknown };
  handlerCode: string;
  apiKeyId?: string;
  mode: SkillMode;
  source: SkillSource;
  createdAt: number;
  updatedAt: number;
}

export interface ExecutionRecord {
  id: string;
  skillId: string;
  skillName: string;
  apiKeyId?: string;
  sessionId?: string;
  input?: string;
  output?: string;
  status: 'success' | 'error' | 'timeout' | 'memory' | 'invalid_input' | 'invalid_output' | 'crashed' | 'busy';
  error?: string;
  durationMs: number;
  createdAt: number;
  /** Set on a fresh record (never stored) when the output was dropped for being over 1 MiB. */
  outputTooLarge?: true;
  /** Read back: the stored text was over MAX_STORED_IO and was left out (rows of older versions). */
  inputDropped?: true;
  outputDropped?: true;
}

/** Inputs and outputs longer than this (characters) are not read back: only older versions wrote them. */
export const MAX_STORED_IO = 1024 * 1024;

const skill = (r: Record<string, unknown>): SkillRecord => ({
  id: r.id as string,
  name: r.name as string,
  version: r.version as string,
  description: r.description as string,
  schema: JSON.parse(r.schema as string) as SkillRecord['schema'],
  handlerCode: r.handler_code as string,
  ...(r.api_key_id !== null ? { apiKeyId: r.api_key_id as string } : {}),
  mode: r.mode as SkillMode,
  source: r.source as SkillSource,
  createdAt: r.created_at as number,
  updatedAt: r.updated_at as number,
});

const execution = (r: Record<string, unknown>): ExecutionRecord => ({
  id: r.id as string,
  skillId: r.skill_id as string,
  skillName: r.skill_name as string,
  ...(r.api_key_id !== null ? { apiKeyId: r.api_key_id as string } : {}),
  ...(r.session_id !== null ? { sessionId: r.session_id as string } : {}),
  ...(r.input !== null ? { input: r.input as string } : {}),
  ...(r.output !== null ? { output: r.output as string } : {}),
  ...(r.input_dropped ? { inputDropped: true as const } : {}),
  ...(r.output_dropped ? { outputDropped: true as const } : {}),
  status: r.status as ExecutionRecord['status'],
  ...(r.error !== null ? { error: r.error as string } : {}),
  durationMs: r.duration_ms as number,
  createdAt: r.created_at as number,
});

export interface SkillFilter {
  q?: string;
  mode?: SkillMode;
  source?: SkillSource;
}

export class SkillStore {
  /** Skills in `auto` mode, cached: chat requests read them on every call. */
  private autoCache: SkillRecord[] | undefined;

  constructor(readonly store: Store) {}

  list(f: SkillFilter, offset: number, limit: number): { rows: SkillRecord[]; total: number } {
    const parts: string[] = [];
    const args: unknown[] = [];
    if (f.mode) (parts.push('mode = ?'), args.push(f.mode));
    if (f.source) (parts.push('source = ?'), args.push(f.source));
    if (f.q) (parts.push(`(instr(lower(name), ?) > 0 OR instr(lower(description), ?) > 0)`), args.push(f.q.toLowerCase(), f.q.toLowerCase()));
    const w = parts.length ? parts.join(' AND ') : '1';
    const total = (this.store.prepare(`SELECT count(*) AS n FROM skills WHERE ${w}`).get(...args) as { n: number }).n;
    const rows = this.store.prepare(`SELECT * FROM skills WHERE ${w} ORDER BY name, id LIMIT ? OFFSET ?`).all(...args, limit, offset) as Record<string, unknown>[];
    return { rows: rows.map(skill), total };
  }

  get(id: string): SkillRecord | undefined {
    const r = this.store.prepare('SELECT * FROM skills WHERE id = ?').get(id) as Record<string, unknown> | undefined;
    return r ? skill(r) : undefined;
  }

  /** The skill a caller means by name: the caller key's own first, else the shared one. */
  byName(name: string, apiKeyId: string | undefined): SkillRecord | undefined {
    const r = this.store.prepare(`SELECT * FROM skills WHERE name = ? AND (api_key_id IS NULL OR api_key_id = ?) ORDER BY api_key_id IS NULL LIMIT 1`).get(name, apiKeyId ?? null) as Record<string, unknown> | undefined;
    return r ? skill(r) : undefined;
  }

  /** Same name and owner (for install, which replaces). */
  sameSlot(name: string, apiKeyId: string | undefined): SkillRecord | undefined {
    const r = this.store.prepare(`SELECT * FROM skills WHERE name = ? AND ifnull(api_key_id, '') = ?`).get(name, apiKeyId ?? '') as Record<string, unknown> | undefined;
    return r ? skill(r) : undefined;
  }

  save(s: SkillRecord): void {
    this.store
      .prepare(
        `INSERT INTO skills (id, name, version, description, schema, handler_code, api_key_id, mode, source, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET name = excluded.name, version = excluded.version, description = excluded.description, schema = excluded.schema,
           handler_code = excluded.handler_code, api_key_id = excluded.api_key_id, mode = excluded.mode, source = excluded.source, updated_at = excluded.updated_at`,
      )
      .run(s.id, s.name, s.version, s.description, JSON.stringify(s.schema), s.handlerCode, s.apiKeyId ?? null, s.mode, s.source, s.createdAt, s.updatedAt);
    this.autoCache = undefined;
  }

  delete(id: string): boolean {
    this.autoCache = undefined;
    return this.store.prepare('DELETE FROM skills WHERE id = ?').run(id).changes > 0;
  }

  auto(): SkillRecord[] {
    return (this.autoCache ??= (this.store.prepare(`SELECT * FROM skills WHERE mode = 'auto' ORDER BY name`).all() as Record<string, unknown>[]).map(skill));
  }

  addExecution(e: ExecutionRecord): void {
    this.store
      .prepare(`INSERT INTO skill_executions (id, skill_id, skill_name, api_key_id, session_id, input, output, status, error, duration_ms, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(e.id, e.skillId, e.skillName, e.apiKeyId ?? null, e.sessionId ?? null, e.input ?? null, e.output ?? null, e.status, e.error ?? null, e.durationMs, e.createdAt);
  }

  executions(f: { apiKeyId?: string; skillName?: string }, offset: number, limit: number): { rows: ExecutionRecord[]; total: number } {
    const parts: string[] = [];
    const args: unknown[] = [];
    if (f.apiKeyId !== undefined) (parts.push('api_key_id = ?'), args.push(f.apiKeyId));
    if (f.skillName !== undefined) (parts.push('skill_name = ?'), args.push(f.skillName));
    const w = parts.length ? parts.join(' AND ') : '1';
    const total = (this.store.prepare(`SELECT count(*) AS n FROM skill_executions WHERE ${w}`).get(...args) as { n: number }).n;
    // An input or output too long to show is not even read (older versions stored up to whatever a skill returned).
    const rows = this.store
      .prepare(
        `SELECT id, skill_id, skill_name, api_key_id, session_id, status, error, duration_ms, created_at,
           CASE WHEN length(input) > ${MAX_STORED_IO} THEN NULL ELSE input END AS input, length(input) > ${MAX_STORED_IO} AS input_dropped,
           CASE WHEN length(output) > ${MAX_STORED_IO} THEN NULL ELSE output END AS output, length(output) > ${MAX_STORED_IO} AS output_dropped
         FROM skill_executions WHERE ${w} ORDER BY created_at DESC, id LIMIT ? OFFSET ?`,
      )
      .all(...args, limit, offset) as Record<string, unknown>[];
    return { rows: rows.map(execution), total };
  }
}
