import type { Clock } from '../../http/clock.js';
import type { Store } from '../../store/index.js';
import { nowIso } from '../time.js';

export const SOURCE_TYPES = ['hackernews', 'rss'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

interface SourceRow {
  id: number;
  name: string;
  url: string;
  source_type: SourceType;
  category: string;
  is_active: number;
  last_fetched_at: string | null;
  last_success_at: string | null;
  last_error: string | null;
  last_item_count: number | null;
  consecutive_failures: number;
  created_at: string;
  updated_at: string;
}

export interface Source {
  id: number;
  name: string;
  url: string;
  source_type: SourceType;
  category: string;
  is_active: boolean;
  /** True when the last fetch succeeded; null before the first fetch. */
  healthy: boolean | null;
  last_fetched_at: string | null;
  last_success_at: string | null;
  last_error: string | null;
  last_item_count: number | null;
  consecutive_failures: number;
  created_at: string;
  updated_at: string;
}

export interface SourceInput {
  name: string;
  url: string;
  source_type: SourceType;
  category: string;
  is_active: boolean;
}

function toSource(r: SourceRow): Source {
  return {
    ...r,
    is_active: r.is_active === 1,
    healthy: r.last_fetched_at === null ? null : r.last_error === null,
  };
}

export class SourcesRepo {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  list(): Source[] {
    return (this.store.prepare('SELECT * FROM sources ORDER BY id').all() as SourceRow[]).map(toSource);
  }

  /** Active sources whose category is active too (or unknown to the categories table). */
  listForRun(): Source[] {
    return (
      this.store
        .prepare(
          `SELECT s.* FROM sources s LEFT JOIN categories c ON c.name = s.category COLLATE NOCASE
           WHERE s.is_active = 1 AND (c.id IS NULL OR c.is_active = 1) ORDER BY s.id`,
        )
        .all() as SourceRow[]
    ).map(toSource);
  }

  get(id: number): Source | undefined {
    const r = this.store.prepare('SELECT * FROM sources WHERE id = ?').get(id) as SourceRow | undefined;
    return r && toSource(r);
  }

  create(s: SourceInput): Source {
    const now = nowIso(this.clock);
    const id = this.store
      .prepare('INSERT INTO sources (name, url, source_type, category, is_active, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(s.name, s.url, s.source_type, s.category, s.is_active ? 1 : 0, now, now).lastInsertRowid;
    return this.get(Number(id))!;
  }

  update(id: number, s: SourceInput): void {
    this.store
      .prepare('UPDATE sources SET name = ?, url = ?, source_type = ?, category = ?, is_active = ?, updated_at = ? WHERE id = ?')
      .run(s.name, s.url, s.source_type, s.category, s.is_active ? 1 : 0, nowIso(this.clock), id);
  }

  delete(id: number): boolean {
    return this.store.prepare('DELETE FROM sources WHERE id = ?').run(id).changes > 0;
  }

  recordSuccess(id: number, itemCount: number): void {
    const now = nowIso(this.clock);
    this.store
      .prepare(
        'UPDATE sources SET last_fetched_at = ?, last_success_at = ?, last_error = NULL, last_item_count = ?, consecutive_failures = 0 WHERE id = ?',
      )
      .run(now, now, itemCount, id);
  }

  recordFailure(id: number, error: string): void {
    this.store
      .prepare(
        'UPDATE sources SET last_fetched_at = ?, last_error = ?, last_item_count = 0, consecutive_failures = consecutive_failures + 1 WHERE id = ?',
      )
      .run(nowIso(this.clock), error.slice(0, 500), id);
  }

  renameCategory(from: string, to: string): void {
    this.store.prepare('UPDATE sources SET category = ? WHERE category = ? COLLATE NOCASE').run(to, from);
  }

  /** `sources_total`: active sources; `sources_healthy`: those whose last fetch succeeded. */
  healthCounts(): { total: number; healthy: number } {
    const r = this.store
      .prepare(
        `SELECT COUNT(*) AS total, COALESCE(SUM(CASE WHEN last_fetched_at IS NOT NULL AND last_error IS NULL THEN 1 ELSE 0 END), 0) AS healthy
         FROM sources WHERE is_active = 1`,
      )
      .get() as { total: number; healthy: number };
    return r;
  }
}
