import { PERIODS, type Period, periodStart } from '../data/analytics.js';
import type { Services } from '../services.js';
import { startOfUtcDay, startOfUtcMonth } from '../time.js';
import { type ApiRegistry, queryEnum, queryInt } from './registry.js';
import { Activity, Analytics, CategoryAnalytics, DashboardStats } from './schemas.js';

export const DEFAULT_PERIOD: Period = '30d';

export function insightRoutes(api: ApiRegistry, s: Services): void {
  const periodParam = {
    name: 'period',
    schema: { enum: [...PERIODS], default: DEFAULT_PERIOD },
    description: 'published in the last 7 or 30 days, or all',
  };

  api.add({
    method: 'GET',
    path: '/api/analytics',
    tag: 'analytics',
    summary: 'Totals over published posts; engagement_rate = (likes + reposts + replies) / impressions × 100',
    query: [periodParam],
    response: Analytics,
    handler: async (ctx) => {
      const period = queryEnum(ctx, 'period', PERIODS, DEFAULT_PERIOD)!;
      return { ...(await s.analytics.totals(periodStart(period, s.clock.now()))), period };
    },
  });

  api.add({
    method: 'GET',
    path: '/api/analytics/categories',
    tag: 'analytics',
    summary: 'The same totals per category (every known category, zeros included)',
    query: [periodParam],
    response: CategoryAnalytics,
    handler: async (ctx) => {
      const period = queryEnum(ctx, 'period', PERIODS, DEFAULT_PERIOD)!;
      const rows = await s.analytics.byCategory(periodStart(period, s.clock.now()));
      const seen = new Set(rows.map((r) => r.category.toLowerCase()));
      for (const c of await s.categories.list()) {
        if (!seen.has(c.name.toLowerCase())) {
          rows.push({ category: c.name, post_count: 0, total_impressions: 0, total_likes: 0, total_reposts: 0, total_replies: 0, engagement_rate: 0 });
        }
      }
      rows.sort((a, b) => a.category.localeCompare(b.category));
      return rows.map((r) => ({ ...r, period }));
    },
  });

  api.add({
    method: 'GET',
    path: '/api/dashboard/stats',
    tag: 'dashboard',
    summary: 'Dashboard counters (days and months in UTC; drafted posts count by creation time)',
    response: DashboardStats,
    handler: async () => {
      const now = s.clock.now();
      const health = await s.sources.healthCounts();
      return {
        posts_today: await s.posts.countCreatedSince(startOfUtcDay(now)),
        posts_this_month: await s.posts.countCreatedSince(startOfUtcMonth(now)),
        pending_review: await s.posts.countByStatus('pending'),
        published_total: await s.posts.countByStatus('published'),
        sources_healthy: health.healthy,
        sources_total: health.total,
      };
    },
  });

  api.add({
    method: 'GET',
    path: '/api/activity',
    tag: 'dashboard',
    summary: 'Recent activity, newest first',
    query: [{ name: 'limit', schema: { type: 'integer', minimum: 1, maximum: 100, default: 10 }, description: 'how many entries (at most 100)' }],
    response: Activity,
    handler: (ctx) => s.activity.recent(queryInt(ctx, 'limit', 10, 1, 100)),
  });
}
