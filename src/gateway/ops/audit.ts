/**
 * The compliance audit log: every management change (a management route with a method other than
 * GET), who made it (the control socket, a login session, or an API key), what and when, with the
 * resource as it was before (read through its own GET route) and the answer after; secrets
 * redacted. Append-only: database triggers refuse updates and deletes.
 */
import type { Store } from '../../store/index.js';
import type { SchemaStep } from '../schema.js';

/** The compliance audit log: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
export const AUDIT_SCHEMA: SchemaStep[] = [
  {
    // Append-only: nothing updates or deletes it.
    version: 10,
    up: `
CREATE TABLE audit_log (
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  actor TEXT NOT NULL,
  method TEXT NOT NULL,
  path TEXT NOT NULL,
  status INTEGER NOT NULL,
  before TEXT,
  after TEXT
);
CREATE INDEX audit_log_ts ON audit_log(ts);
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
`,
  },
];

export interface AuditRow {
  id: number;
  ts: number;
  actor: string;
  method: string;
  path: string;
  status: number;
  before?: unknown;
  after?: unknown;
}

const SECRET_KEY = /key|secret|token|password|authorization|cookie|credential/i;
const MAX_SUMMARY = 16 * 1024;

/** A copy with secret-looking fields masked and long strings cut; undefined stays undefined. */
export function redactSummary(v: unknown, depth = 0): unknown {
  if (v === undefined || v === null) return v;
  if (depth > 8) return '…';
  if (typeof v === 'string') return v.length > 500 ? `${v.slice(0, 500)}…` : v;
  if (Array.isArray(v)) return v.slice(0, 100).map((x) => redactSummary(x, depth + 1));
  if (typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = SECRET_KEY.test(k) && (typeof x === 'string' || typeof x === 'number') ? '[REDACTED]' : redactSummary(x, depth + 1);
    return out;
  }
  return v;
}

function text(v: unknown): string | null {
  if (v === undefined) return null;
  const s = JSON.stringify(redactSummary(v));
  return s.length > MAX_SUMMARY ? JSON.stringify({ truncated: true, bytes: s.length }) : s;
}

export interface AuditFilter {
  actor?: string;
  method?: string;
  path?: string;
  since?: number;
  until?: number;
}

export class AuditLog {
  constructor(private readonly store: Store) {}

  append(e: Omit<AuditRow, 'id'>): void {
    this.store.prepare('INSERT INTO audit_log (ts, actor, method, path, status, before, after) VALUES (?, ?, ?, ?, ?, ?, ?)').run(e.ts, e.actor, e.method, e.path, e.status, text(e.before), text(e.after));
  }

  list(f: AuditFilter, offset: number, limit: number): { rows: AuditRow[]; total: number } {
    const parts: string[] = [];
    const args: unknown[] = [];
    if (f.actor) (parts.push('actor = ?'), args.push(f.actor));
    if (f.method) (parts.push('method = ?'), args.push(f.method.toUpperCase()));
    if (f.path) (parts.push('instr(path, ?) = 1'), args.push(f.path));
    if (f.since !== undefined) (parts.push('ts >= ?'), args.push(f.since));
    if (f.until !== undefined) (parts.push('ts < ?'), args.push(f.until));
    const w = parts.length ? parts.join(' AND ') : '1';
    const total = (this.store.prepare(`SELECT count(*) AS n FROM audit_log WHERE ${w}`).get(...args) as { n: number }).n;
    const rows = this.store.prepare(`SELECT * FROM audit_log WHERE ${w} ORDER BY id DESC LIMIT ? OFFSET ?`).all(...args, limit, offset) as Record<string, unknown>[];
    return {
      total,
      rows: rows.map((r) => ({
        id: r.id as number,
        ts: r.ts as number,
        actor: r.actor as string,
        method: r.method as string,
        path: r.path as string,
        status: r.status as number,
        ...(r.before !== null ? { before: JSON.parse(r.before as string) as unknown } : {}),
        ...(r.after !== null ? { after: JSON.parse(r.after as string) as unknown } : {}),
      })),
    };
  }
}
