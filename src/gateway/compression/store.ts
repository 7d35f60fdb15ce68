/** SQL of compression: the per-request savings log, compression combos, and raw tool outputs kept by RTK. */
import type { Store } from '../../store/index.js';
import type { Step } from './modes.js';
import type { SchemaStep } from '../schema.js';

/** Compression: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
export const COMPRESSION_SCHEMA: SchemaStep[] = [
  {
    // What each request saved, compression combos, and raw tool outputs kept.
    version: 9,
    up: `
CREATE TABLE compression_log (
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  request_id TEXT NOT NULL,
  mode TEXT NOT NULL,
  source TEXT NOT NULL,
  engines TEXT NOT NULL,
  tokens_before INTEGER NOT NULL,
  tokens_after INTEGER NOT NULL
);
CREATE INDEX compression_log_ts ON compression_log(ts);
CREATE TABLE compression_combos (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  pipeline TEXT NOT NULL,
  assignments TEXT NOT NULL DEFAULT '[]',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE rtk_raw (
  id TEXT PRIMARY KEY,
  ts INTEGER NOT NULL,
  content TEXT NOT NULL
);
CREATE INDEX rtk_raw_ts ON rtk_raw(ts);
`,
  },
];

export interface CompressionCombo {
  id: string;
  name: string;
  description: string;
  pipeline: Step[];
  /** Routing combos (by name) this compression combo applies to. */
  assignments: string[];
  createdAt: number;
  updatedAt: number;
}

export interface CompressionLogEntry {
  ts: number;
  requestId: string;
  mode: string;
  source: string;
  engines: string[];
  tokensBefore: number;
  tokensAfter: number;
}

const combo = (r: Record<string, unknown>): CompressionCombo => ({
  id: r.id as string,
  name: r.name as string,
  description: r.description as string,
  pipeline: JSON.parse(r.pipeline as string) as Step[],
  assignments: JSON.parse(r.assignments as string) as string[],
  createdAt: r.created_at as number,
  updatedAt: r.updated_at as number,
});

/** Raw outputs kept at most (the oldest go first). */
const RAW_KEEP = 1000;

export class CompressionStore {
  private combosCache: CompressionCombo[] | undefined;

  constructor(private readonly store: Store) {}

  combos(): CompressionCombo[] {
    return (this.combosCache ??= (this.store.prepare('SELECT * FROM compression_combos ORDER BY name, id').all() as Record<string, unknown>[]).map(combo));
  }

  saveCombo(c: CompressionCombo): void {
    this.store
      .prepare(
        `INSERT INTO compression_combos (id, name, description, pipeline, assignments, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET name = excluded.name, description = excluded.description, pipeline = excluded.pipeline, assignments = excluded.assignments, updated_at = excluded.updated_at`,
      )
      .run(c.id, c.name, c.description, JSON.stringify(c.pipeline), JSON.stringify(c.assignments), c.createdAt, c.updatedAt);
    this.combosCache = undefined;
  }

  deleteCombo(id: string): boolean {
    this.combosCache = undefined;
    return this.store.prepare('DELETE FROM compression_combos WHERE id = ?').run(id).changes > 0;
  }

  log(e: CompressionLogEntry): void {
    this.store
      .prepare('INSERT INTO compression_log (ts, request_id, mode, source, engines, tokens_before, tokens_after) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(e.ts, e.requestId, e.mode, e.source, e.engines.join(','), e.tokensBefore, e.tokensAfter);
  }

  /** Totals since `since`, by mode and by engine. */
  summary(since: number): { requests: number; before: number; after: number; byMode: Record<string, { requests: number; before: number; after: number }>; byEngine: Record<string, number>; bySource: Record<string, number> } {
    const rows = this.store.prepare('SELECT mode, source, engines, tokens_before, tokens_after FROM compression_log WHERE ts >= ?').all(since) as { mode: string; source: string; engines: string; tokens_before: number; tokens_after: number }[];
    const out = { requests: rows.length, before: 0, after: 0, byMode: {} as Record<string, { requests: number; before: number; after: number }>, byEngine: {} as Record<string, number>, bySource: {} as Record<string, number> };
    for (const r of rows) {
      out.before += r.tokens_before;
      out.after += r.tokens_after;
      const m = (out.byMode[r.mode] ??= { requests: 0, before: 0, after: 0 });
      m.requests++;
      m.before += r.tokens_before;
      m.after += r.tokens_after;
      out.bySource[r.source] = (out.bySource[r.source] ?? 0) + 1;
      for (const e of r.engines.split(',').filter(Boolean)) out.byEngine[e] = (out.byEngine[e] ?? 0) + 1;
    }
    return out;
  }

  keepRaw(id: string, ts: number, content: string): void {
    this.store.prepare('INSERT INTO rtk_raw (id, ts, content) VALUES (?, ?, ?)').run(id, ts, content);
    this.store.prepare(`DELETE FROM rtk_raw WHERE id IN (SELECT id FROM rtk_raw ORDER BY ts DESC, id DESC LIMIT -1 OFFSET ${RAW_KEEP})`).run();
  }

  raw(id: string): { id: string; ts: number; content: string } | undefined {
    return this.store.prepare('SELECT * FROM rtk_raw WHERE id = ?').get(id) as { id: string; ts: number; content: string } | undefined;
  }
}
