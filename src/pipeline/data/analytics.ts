import type { Store } from '../../store/index.js';
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
  constructor(private readonly store: Store) {}

  totals(since: string | null): Totals {
    const r = (
      since === null
        ? this.store.prepare(`SELECT ${SUMS} FROM posts WHERE status = 'published'`).get()
        : this.store.prepare(`SELECT ${SUMS} FROM posts WHERE status = 'published' AND published_at >= ?`).get(since)
    ) as SumRow;
    return toTotals(r);
  }

  byCategory(since: string | null): (Totals & { category: string })[] {
    const sql = `SELECT category, ${SUMS} FROM posts WHERE status = 'published' ${since === null ? '' : 'AND published_at >= ?'}
      GROUP BY category COLLATE NOCASE ORDER BY category COLLATE NOCASE`;
    const rows = (since === null ? this.store.prepare(sql).all() : this.store.prepare(sql).all(since)) as SumRow[];
    return rows.map((r) => ({ category: r.category ?? '', ...toTotals(r) }));
  }
}
