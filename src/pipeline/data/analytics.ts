import type { Sql } from '../../store/sql.js';
import { engagementRate } from './posts.js';

export const PERIODS = ['7d', '30d', 'all'] as const;
export type Period = (typeof PERIODS)[number];

export interface Totals {
  post_count: number;
  total_impressions: number;
  total_likes: number;
  total_reposts: number;
  total_replies: number;
  engagement_rate: number;
}

/** The ISO lower bound of a period on `published_at`, or null for `all`. */
export function periodStart(period: Period, nowMs: number): string | null {
  if (period === 'all') return null;
  const days = period === '7d' ? 7 : 30;
  return new Date(nowMs - days * 86_400_000).toISOString();
}

interface SumRow {
  category?: string;
  post_count: number;
  impressions: number;
  likes: number;
  retweets: number;
  replies: number;
}

function toTotals(r: SumRow): Totals {
  return {
    post_count: r.post_count,
    total_impressions: r.impressions,
    total_likes: r.likes,
    total_reposts: r.retweets,
    total_replies: r.replies,
    engagement_rate: engagementRate(r),
  };
}

const SUMS = `COUNT(*) AS post_count, COALESCE(SUM(impressions), 0) AS impressions, COALESCE(SUM(likes), 0) AS likes,
  COALESCE(SUM(retweets), 0) AS retweets, COALESCE(SUM(replies), 0) AS replies`;

/** Aggregates over published posts (by `published_at`). */
export class AnalyticsRepo {
  constructor(private readonly sql: Sql) {}

  async totals(since: string | null): Promise<Totals> {
    const r =
      since === null
        ? await this.sql.get<SumRow>(`SELECT ${SUMS} FROM posts WHERE status = 'published'`)
        : await this.sql.get<SumRow>(`SELECT ${SUMS} FROM posts WHERE status = 'published' AND published_at >= ?`, since);
    return toTotals(r!);
  }

  async byCategory(since: string | null): Promise<(Totals & { category: string })[]> {
    // Categories differing only in case are one (the first spelling names it).
    const sql = `SELECT min(category) AS category, ${SUMS} FROM posts WHERE status = 'published' ${since === null ? '' : 'AND published_at >= ?'}
      GROUP BY lower(category) ORDER BY lower(category)`;
    const rows = since === null ? await this.sql.all<SumRow>(sql) : await this.sql.all<SumRow>(sql, since);
    return rows.map((r) => ({ category: r.category ?? '', ...toTotals(r) }));
  }
}
