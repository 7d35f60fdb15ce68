/** Fetch public metrics from X for the posts published in the metrics window. */
import type { Clock } from '../../http/clock.js';
import type { ActivityRepo } from '../data/activity.js';
import type { PostsRepo } from '../data/posts.js';
import type { Repos } from '../data/repos.js';
import type { XApiClient } from './x-api.js';

export interface MetricsFetchResult {
  requested: number;
  updated: number;
  post_ids: number[];
  errors: { post_id: number | null; external_id: string; detail: string }[];
}

export async function fetchMetrics(
  x: XApiClient,
  d: { posts: PostsRepo; activity: ActivityRepo; tx<T>(fn: (r: Repos) => Promise<T>): Promise<T>; clock: Clock; windowDays: number },
): Promise<MetricsFetchResult> {
  const since = new Date(d.clock.now() - d.windowDays * 86_400_000).toISOString();
  const posts = await d.posts.publishedSince(since);
  const byExternal = new Map(posts.map((p) => [p.external_id!, p.id]));
  const { metrics, errors } = await x.metrics([...byExternal.keys()]);
  const updated: number[] = [];
  await d.tx(async (r) => {
    for (const [ext, m] of metrics) {
      const id = byExternal.get(ext);
      if (id === undefined) continue;
      await r.posts.recordMetrics(id, m, 'x');
      updated.push(id);
    }
    if (posts.length > 0) await r.activity.add('metrics_fetched', `Metrics fetched from X for ${updated.length} of ${posts.length} published posts`);
  });
  return {
    requested: posts.length,
    updated: updated.length,
    post_ids: updated,
    errors: errors.map((e) => ({ post_id: byExternal.get(e.id) ?? null, external_id: e.id, detail: e.detail })),
  };
}
