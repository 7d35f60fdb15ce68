/** SQL of agent skills: named prompts (with an optional model and temperature). */
import type { Store } from '../../store/index.js';
import type { SchemaStep } from '../schema.js';

/** Agent skills: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
export const AGENT_SKILLS_SCHEMA: SchemaStep[] = [
  {
    // Prompt-based agent skills.
    version: 6,
    up: `
CREATE TABLE agent_skills (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL,
  prompt TEXT NOT NULL,
  model TEXT,
  temperature REAL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
`,
  },
];

export interface AgentSkillRecord {
  id: string;
  name: string;
  description: string;
  prompt: string;
  model?: string;
  temperature?: number;
  createdAt: number;
  updatedAt: number;
}

const row = (r: Record<string, unknown>): AgentSkillRecord => ({
  id: r.id as string,
  name: r.name as string,
  description: r.description as string,
  prompt: r.prompt as string,
  ...(r.model !== null ? { model: r.model as string } : {}),
  ...(r.temperature !== null ? { temperature: r.temperature as number } : {}),
  createdAt: r.created_at as number,
  updatedAt: r.updated_at as number,
});

export class AgentSkillStore {
  constructor(readonly store: Store) {}

  list(q: string | undefined, offset: number, limit: number): { rows: AgentSkillRecord[]; total: number } {
    const w = q ? `WHERE instr(lower(name), ?) > 0 OR instr(lower(description), ?) > 0` : '';
    const args = q ? [q.toLowerCase(), q.toLowerCase()] : [];
    const total = (this.store.prepare(`SELECT count(*) AS n FROM agent_skills ${w}`).get(...args) as { n: number }).n;
    const rows = this.store.prepare(`SELECT * FROM agent_skills ${w} ORDER BY name LIMIT ? OFFSET ?`).all(...args, limit, offset) as Record<string, unknown>[];
    return { rows: rows.map(row), total };
  }

  get(id: string): AgentSkillRecord | undefined {
    const r = this.store.prepare('SELECT * FROM agent_skills WHERE id = ? OR name = ?').get(id, id) as Record<string, unknown> | undefined;
    return r ? row(r) : undefined;
  }

  byName(name: string): AgentSkillRecord | undefined {
    const r = this.store.prepare('SELECT * FROM agent_skills WHERE name = ?').get(name) as Record<string, unknown> | undefined;
    return r ? row(r) : undefined;
  }

  save(s: AgentSkillRecord): void {
    this.store
      .prepare(
        `INSERT INTO agent_skills (id, name, description, prompt, model, temperature, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET name = excluded.name, description = excluded.description, prompt = excluded.prompt, model = excluded.model,
           temperature = excluded.temperature, updated_at = excluded.updated_at`,
      )
      .run(s.id, s.name, s.description, s.prompt, s.model ?? null, s.temperature ?? null, s.createdAt, s.updatedAt);
  }

  delete(id: string): boolean {
    return this.store.prepare('DELETE FROM agent_skills WHERE id = ?').run(id).changes > 0;
  }
}
