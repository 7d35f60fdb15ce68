/** The MCP audit log: one row per tool call (tool, outcome, duration, caller), in the gateway's database. */
import type { Store } from '../../../store/index.js';
import type { SchemaStep } from '../../schema.js';

/** The MCP audit log: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
export const MCP_AUDIT_SCHEMA: SchemaStep[] = [
  {
    version: 7,
    up: `
CREATE TABLE mcp_audit (
  id INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  tool TEXT NOT NULL,
  success INTEGER NOT NULL,
  duration_ms REAL NOT NULL,
  api_key_id TEXT,
  session_id TEXT,
  error TEXT
);
CREATE INDEX mcp_audit_tool ON mcp_audit(tool, id);
`,
  },
];

export interface AuditEntry {
  id: number;
  at: number;
  tool: string;
  success: boolean;
  durationMs: number;
  apiKeyId?: string;
  sessionId?: string;
  error?: string;
}

export interface AuditFilter {
  tool?: string;
  success?: boolean;
  apiKeyId?: string;
}

function where(f: AuditFilter): { sql: string; args: unknown[] } {
  const parts: string[] = [];
  const args: unknown[] = [];
  if (f.tool !== undefined) (parts.push('tool = ?'), args.push(f.tool));
  if (f.success !== undefined) (parts.push('success = ?'), args.push(f.success ? 1 : 0));
  if (f.apiKeyId !== undefined) (parts.push('api_key_id = ?'), args.push(f.apiKeyId));
  return { sql: parts.length ? parts.join(' AND ') : '1', args };
}

export class McpAudit {
  constructor(private readonly store: Store) {}

  record(e: Omit<AuditEntry, 'id'>): void {
    this.store
      .prepare('INSERT INTO mcp_audit (at, tool, success, duration_ms, api_key_id, session_id, error) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(e.at, e.tool, e.success ? 1 : 0, e.durationMs, e.apiKeyId ?? null, e.sessionId ?? null, e.error ?? null);
  }

  list(f: AuditFilter, offset: number, limit: number): { rows: AuditEntry[]; total: number } {
    const w = where(f);
    const total = (this.store.prepare(`SELECT count(*) AS n FROM mcp_audit WHERE ${w.sql}`).get(...w.args) as { n: number }).n;
    const rows = this.store.prepare(`SELECT * FROM mcp_audit WHERE ${w.sql} ORDER BY id DESC LIMIT ? OFFSET ?`).all(...w.args, limit, offset) as Record<string, unknown>[];
    return {
      total,
      rows: rows.map((r) => ({
        id: r.id as number,
        at: r.at as number,
        tool: r.tool as string,
        success: r.success === 1,
        durationMs: r.duration_ms as number,
        ...(r.api_key_id !== null ? { apiKeyId: r.api_key_id as string } : {}),
        ...(r.session_id !== null ? { sessionId: r.session_id as string } : {}),
        ...(r.error !== null ? { error: r.error as string } : {}),
      })),
    };
  }

  stats(): { total: number; success: number; failed: number; avgDurationMs: number; byTool: { tool: string; calls: number; failed: number; avgDurationMs: number }[] } {
    const t = this.store.prepare('SELECT count(*) AS n, coalesce(sum(success), 0) AS ok, coalesce(avg(duration_ms), 0) AS avg FROM mcp_audit').get() as { n: number; ok: number; avg: number };
    const byTool = (this.store.prepare('SELECT tool, count(*) AS n, sum(1 - success) AS failed, avg(duration_ms) AS avg FROM mcp_audit GROUP BY tool ORDER BY n DESC, tool').all() as { tool: string; n: number; failed: number; avg: number }[]).map((r) => ({
      tool: r.tool,
      calls: r.n,
      failed: r.failed,
      avgDurationMs: Math.round(r.avg * 10) / 10,
    }));
    return { total: t.n, success: t.ok, failed: t.n - t.ok, avgDurationMs: Math.round(t.avg * 10) / 10, byTool };
  }
}
