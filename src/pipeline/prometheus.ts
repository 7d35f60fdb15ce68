/**
 * The pipeline's `GET /metrics`: runs by status, posts by status, active sources by health
 * (a source is unhealthy after a failed fetch), read from its database when Prometheus scrapes.
 */
import { ComponentMetrics, type Labeled } from '../http/metrics.js';
import type { Store } from '../store/index.js';

const byStatus = (store: Store, sql: string): Labeled =>
  (store.prepare(sql).all() as { status: string; n: number }[]).map((r) => [{ status: r.status }, r.n]);

export function pipelineMetrics(store: Store): ComponentMetrics {
  return new ComponentMetrics((m) => {
    m.counter('ctl_pipeline_runs_total', 'Pipeline runs by status (completed, failed, interrupted, running).', ['status'], () => byStatus(store, 'SELECT status, count(*) AS n FROM runs GROUP BY status'));
    m.gauge('ctl_pipeline_posts', 'Posts by status (pending, approved, published, rejected, failed).', ['status'], () => byStatus(store, 'SELECT status, count(*) AS n FROM posts GROUP BY status'));
    m.gauge('ctl_pipeline_sources', 'Active sources by health (healthy, unhealthy).', ['health'], () => {
      const r = store.prepare('SELECT sum(consecutive_failures = 0) AS healthy, sum(consecutive_failures > 0) AS unhealthy FROM sources WHERE is_active = 1').get() as { healthy: number | null; unhealthy: number | null };
      return [
        [{ health: 'healthy' }, r.healthy ?? 0],
        [{ health: 'unhealthy' }, r.unhealthy ?? 0],
      ];
    });
  });
}
