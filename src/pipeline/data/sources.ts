import type { Clock } from '../../http/clock.js';
import type { Sql } from '../../store/sql.js';
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
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  async list(): Promise<Source[]> {
    return (await this.sql.all<SourceRow>('SELECT * FROM sources ORDER BY id')).map(toSource);
  }

  /** Active sources whose category is active too (or unknown to the categories table). */
  async listForRun(): Promise<Source[]> {
    return (
      await this.sql.all<SourceRow>(
        `SELECT s.* FROM sources s LEFT JOIN categories c ON lower(c.name) = lower(s.category)
         WHERE s.is_active = 1 AND (c.id IS NULL OR c.is_active = 1) ORDER BY s.id`,
      )
    ).map(toSource);
  }

  async get(id: number): Promise<Source | undefined> {
    const r = await this.sql.get<SourceRow>('SELECT * FROM sources WHERE id = ?', id);
    return r && toSource(r);
  }

  async create(s: SourceInput): Promise<Source> {
    const now = nowIso(this.clock);
    const id = await this.sql.insert(
      'INSERT INTO sources (name, url, source_type, category, is_active, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      s.name,
      s.url,
      s.source_type,
      s.category,
      s.is_active ? 1 : 0,
      now,
      now,
    );
    return (await this.get(id))!;
  }

  async update(id: number, s: SourceInput): Promise<void> {
    await this.sql.run(
      'UPDATE sources SET name = ?, url = ?, source_type = ?, category = ?, is_active = ?, updated_at = ? WHERE id = ?',
      s.name,
      s.url,
      s.source_type,
      s.category,
      s.is_active ? 1 : 0,
      nowIso(this.clock),
      id,
    );
  }

  async delete(id: number): Promise<boolean> {
    return (await this.sql.run('DELETE FROM sources WHERE id = ?', id)) > 0;
  }

  async recordSuccess(id: number, itemCount: number): Promise<void> {
    const now = nowIso(this.clock);
    await this.sql.run(
      'UPDATE sources SET last_fetched_at = ?, last_success_at = ?, last_error = NULL, last_item_count = ?, consecutive_failures = 0 WHERE id = ?',
      now,
      now,
      itemCount,
      id,
    );
  }

  async recordFailure(id: number, error: string): Promise<void> {
    await this.sql.run(
      'UPDATE sources SET last_fetched_at = ?, last_error = ?, last_item_count = 0, consecutive_failures = consecutive_failures + 1 WHERE id = ?',
      nowIso(this.clock),
      error.slice(0, 500),
      id,
    );
  }

  async renameCategory(from: string, to: string): Promise<void> {
    await this.sql.run('UPDATE sources SET category = ? WHERE lower(category) = lower(?)', to, from);
  }

  /** `sources_total`: active sources; `sources_healthy`: those whose last fetch succeeded. */
  async healthCounts(): Promise<{ total: number; healthy: number }> {
    return (await this.sql.get<{ total: number; healthy: number }>(
      `SELECT COUNT(*) AS total, COALESCE(SUM(CASE WHEN last_fetched_at IS NOT NULL AND last_error IS NULL THEN 1 ELSE 0 END), 0) AS healthy
       FROM sources WHERE is_active = 1`,
    ))!;
  }

  /** Active sources whose last fetch succeeded, and those failing now (the /metrics gauge). */
  async failureCounts(): Promise<{ healthy: number; unhealthy: number }> {
    const r = await this.sql.get<{ healthy: number | null; unhealthy: number | null }>(
      `SELECT SUM(CASE WHEN consecutive_failures = 0 THEN 1 ELSE 0 END) AS healthy, SUM(CASE WHEN consecutive_failures > 0 THEN 1 ELSE 0 END) AS unhealthy
       FROM sources WHERE is_active = 1`,
    );
    return { healthy: r?.healthy ?? 0, unhealthy: r?.unhealthy ?? 0 };
  }
}
