/**
 * The pipeline's `GET /metrics`: runs by status, posts by status, active sources by health
 * (a source is unhealthy after a failed fetch), read from its database when Prometheus scrapes.
 */
import { ComponentMetrics, type Labeled } from '../http/metrics.js';
import type { SourcesRepo } from './data/sources.js';
import type { Sql } from '../store/sql.js';

const byStatus = async (sql: Sql, text: string): Promise<Labeled> =>
  (await sql.all<{ status: string; n: number }>(text)).map((r) => [{ status: r.status }, r.n]);

export function pipelineMetrics(sql: Sql, sources: SourcesRepo): ComponentMetrics {
  return new ComponentMetrics((m) => {
    m.counter('ctl_pipeline_runs_total', 'Pipeline runs by status (completed, failed, interrupted, running).', ['status'], () => byStatus(sql, 'SELECT status, count(*) AS n FROM runs GROUP BY status'));
    m.gauge('ctl_pipeline_posts', 'Posts by status (pending, approved, published, rejected, failed).', ['status'], () => byStatus(sql, 'SELECT status, count(*) AS n FROM posts GROUP BY status'));
    m.gauge('ctl_pipeline_sources', 'Active sources by health (healthy, unhealthy).', ['health'], async () => {
      const r = await sources.failureCounts();
      return [
        [{ health: 'healthy' }, r.healthy],
        [{ health: 'unhealthy' }, r.unhealthy],
      ];
    });
  });
}
