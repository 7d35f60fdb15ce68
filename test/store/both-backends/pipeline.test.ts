/**
 * The pipeline's repositories (src/pipeline/data) on SQLite and on PostgreSQL: posts, their
 * metrics and analytics, sources, categories, style versions, proposals, runs, settings, used
 * items and activity answer the same on both.
 */
import { expect, it } from 'vitest';
import { inTransaction, reposOver, type Repos } from '../../../src/pipeline/data/repos.js';
import { PIPELINE_MIGRATIONS } from '../../../src/pipeline/data/migrations.js';
import { PIPELINE_SHARED_MIGRATIONS } from '../../../src/pipeline/data/pg-migrations.js';
import { PIPELINE_TABLES } from '../../../src/pipeline/data/tables.js';
import type { NewPost } from '../../../src/pipeline/data/posts.js';
import { PgSql, SqliteSql } from '../../../src/store/sql.js';
import { bothBackends } from './harness.js';

const T0 = Date.parse('2026-03-01T12:00:00.000Z');
let now = T0;
const clock = { now: () => now };
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

function draft(batch: string, content: string, over: Partial<NewPost> = {}): NewPost {
  return {
    batch_id: batch,
    content,
    thread: [],
    category: 'Tech',
    source_id: null,
    source_name: 'HN',
    source_title: `title of ${content}`,
    source_url: 'https://example.invalid/item',
    model: 'fake/model-1',
    ...over,
  };
}

bothBackends<Repos>(
  'pipeline repositories',
  {
    sqlite: (b) => reposOver(new SqliteSql(b.sqlite(PIPELINE_MIGRATIONS)), clock),
    postgres: async (b) => {
      const db = await b.postgres();
      await db.migrate('pipeline', PIPELINE_SHARED_MIGRATIONS);
      return reposOver(PgSql.over(db, PIPELINE_TABLES), clock);
    },
  },
  (open) => {
    it('drafts posts in one transaction, lists and searches them case-insensitively, pages newest first', async () => {
      now = T0;
      const r = await open();
      const ids = await inTransaction(r.sql, clock, (tx) =>
        tx.posts.insertMany([draft('b1', 'Rust 2.0 released', { thread: ['part two', "it's 100%_done"] }), draft('b1', 'A new CPU'), draft('b2', 'Postgres tips')]),
      );
      expect(ids).toHaveLength(3);
      expect(ids[1]! > ids[0]! && ids[2]! > ids[1]!).toBe(true);
      const first = await r.posts.get(ids[0]!);
      expect(first).toMatchObject({ status: 'pending', content: 'Rust 2.0 released', thread: ['part two', "it's 100%_done"], external_ids: [], publish_attempts: 0, engagement_rate: 0, created_at: at(0) });
      expect((await r.posts.list({ page: 1, pageSize: 10 })).total).toBe(3);
      expect((await r.posts.list({ batch_id: 'b1', page: 1, pageSize: 10 })).items.map((p) => p.content)).toEqual(['A new CPU', 'Rust 2.0 released']);
      expect((await r.posts.list({ search: 'RUST', page: 1, pageSize: 10 })).items.map((p) => p.id)).toEqual([ids[0]]);
      // LIKE wildcards in the search are literal; the thread is searched too.
      expect((await r.posts.list({ search: '100%_d', page: 1, pageSize: 10 })).items.map((p) => p.id)).toEqual([ids[0]]);
      expect((await r.posts.list({ search: '0%_x', page: 1, pageSize: 10 })).total).toBe(0);
      expect((await r.posts.list({ search: 'title of a new', page: 1, pageSize: 10 })).items.map((p) => p.id)).toEqual([ids[1]]);
      const page2 = await r.posts.list({ page: 2, pageSize: 2 });
      expect(page2).toMatchObject({ total: 3 });
      expect(page2.items.map((p) => p.id)).toEqual([ids[0]]);
      expect(await r.posts.countCreatedSince(at(0))).toBe(3);
      expect(await r.posts.countCreatedSince(at(1))).toBe(0);
      expect(await r.posts.countByStatus('pending')).toBe(3);
    });

    it('rolls a failed drafting transaction back whole', async () => {
      const r = await open();
      await expect(
        inTransaction(r.sql, clock, async (tx) => {
          await tx.posts.insertMany([draft('b1', 'kept?')]);
          await tx.usedItems.markUsed(['hn:1'], 'b1');
          throw new Error('model failed');
        }),
      ).rejects.toThrow('model failed');
      expect((await r.posts.list({ page: 1, pageSize: 10 })).total).toBe(0);
      expect(await r.usedItems.used(['hn:1'])).toEqual(new Set());
    });

    it('reviews, edits (keeping the first text), schedules, publishes and fails posts', async () => {
      now = T0;
      const r = await open();
      const [a, b, c] = await r.posts.insertMany([draft('b', 'one'), draft('b', 'two'), draft('b', 'three')]);
      now = T0 + 60_000;
      await r.posts.update(a!, { status: 'approved', content: 'one, edited', thread: ['x'], feedback: 'shorter', scheduled_for: at(5) });
      await r.posts.update(a!, { content: 'one, edited twice' });
      await r.posts.update(b!, { status: 'approved', scheduled_for: at(30) });
      await r.posts.update(c!, { status: 'rejected', feedback: 'off topic' });
      expect(await r.posts.get(a!)).toMatchObject({ status: 'approved', content: 'one, edited twice', original_content: 'one', thread: ['x'], feedback: 'shorter', reviewed_at: at(1), scheduled_for: at(5) });
      expect((await r.posts.dueForPublishing(at(10), 10)).map((p) => p.id)).toEqual([a]);
      expect((await r.posts.dueForPublishing(at(60), 1)).map((p) => p.id)).toEqual([a]);
      await r.posts.setImage(a!, 'img-1.png', '/images/img-1.png');
      expect(await r.posts.imageFile(a!)).toBe('img-1.png');
      expect((await r.posts.get(a!))!.image_url).toBe('/images/img-1.png');
      await r.posts.recordPublishedParts(a!, ['x1']);
      expect(await r.posts.get(a!)).toMatchObject({ external_id: 'x1', external_ids: ['x1'], status: 'approved' });
      now = T0 + 10 * 60_000;
      await r.posts.markPublished(a!, ['x1', 'x2']);
      await r.posts.markPublishFailure(b!, 'rate limited', false);
      await r.posts.markPublishFailure(b!, 'gone', true);
      expect(await r.posts.get(a!)).toMatchObject({ status: 'published', published_at: at(10), external_id: 'x1', external_ids: ['x1', 'x2'], publish_error: null });
      expect(await r.posts.get(b!)).toMatchObject({ status: 'failed', publish_attempts: 2, publish_error: 'gone' });
      expect((await r.posts.publishedSince(at(9))).map((p) => p.id)).toEqual([a]);
      expect(await r.posts.publishedSince(at(11))).toEqual([]);
      // A new review clears the failure.
      await r.posts.update(b!, { status: 'approved' });
      expect(await r.posts.get(b!)).toMatchObject({ status: 'approved', publish_attempts: 0, publish_error: null });
      const feedback = await r.posts.recentFeedback(10);
      expect(feedback.map((f) => f.content).sort()).toEqual(['one, edited twice', 'three']);
    });

    it('records metrics snapshots, ranks by engagement and sums them per period and category', async () => {
      now = T0;
      const r = await open();
      const ids = await r.posts.insertMany([draft('b', 'p1', { category: 'Tech' }), draft('b', 'p2', { category: 'tech' }), draft('b', 'p3', { category: 'Science' }), draft('b', 'p4')]);
      for (const [i, id] of ids.slice(0, 3).entries()) {
        now = T0 + i * 86_400_000 * 10;
        await r.posts.markPublished(id, [`x${id}`]);
      }
      await r.posts.recordMetrics(ids[0]!, { impressions: 100, likes: 1, retweets: 0, replies: 0 }, 'api');
      await r.posts.recordMetrics(ids[0]!, { impressions: 200, likes: 10, retweets: 5, replies: 5 }, 'api');
      await r.posts.recordMetrics(ids[1]!, { impressions: 1000, likes: 1, retweets: 1, replies: 1 }, 'manual');
      await r.posts.recordMetrics(ids[2]!, { impressions: 10, likes: 5, retweets: 0, replies: 0 }, 'api');
      expect(await r.posts.metricsHistory(ids[0]!)).toEqual([
        { impressions: 200, likes: 10, retweets: 5, replies: 5, source: 'api', recorded_at: at(20 * 24 * 60) },
        { impressions: 100, likes: 1, retweets: 0, replies: 0, source: 'api', recorded_at: at(20 * 24 * 60) },
      ]);
      expect(await r.posts.get(ids[0]!)).toMatchObject({ impressions: 200, likes: 10, engagement_rate: 10, metrics_source: 'api' });
      expect((await r.posts.rankedByEngagement('best', 3)).map((p) => p.id)).toEqual([ids[2], ids[0], ids[1]]);
      expect((await r.posts.rankedByEngagement('worst', 1)).map((p) => p.id)).toEqual([ids[1]]);
      expect(await r.analytics.totals(null)).toEqual({ post_count: 3, total_impressions: 1210, total_likes: 16, total_reposts: 6, total_replies: 6, engagement_rate: 2.31 });
      expect(await r.analytics.totals(at(10 * 24 * 60))).toMatchObject({ post_count: 2, total_impressions: 1010 });
      expect(await r.analytics.totals(at(100 * 24 * 60))).toEqual({ post_count: 0, total_impressions: 0, total_likes: 0, total_reposts: 0, total_replies: 0, engagement_rate: 0 });
      const cats = await r.analytics.byCategory(null);
      expect(cats.map((c) => [c.category, c.post_count, c.total_impressions])).toEqual([
        ['Science', 1, 10],
        ['Tech', 2, 1200],
      ]);
      expect(await r.analytics.byCategory(at(100 * 24 * 60))).toEqual([]);
    });

    it('keeps sources with their fetch health, and renames categories case-insensitively on sources and posts', async () => {
      now = T0;
      const r = await open();
      const s1 = await r.sources.create({ name: 'HN', url: 'https://news.invalid', source_type: 'hackernews', category: 'Tech', is_active: true });
      const s2 = await r.sources.create({ name: 'Feed', url: 'https://feed.invalid/rss', source_type: 'rss', category: 'Science', is_active: true });
      const s3 = await r.sources.create({ name: 'Off', url: 'https://off.invalid/rss', source_type: 'rss', category: 'Tech', is_active: false });
      expect(s1).toMatchObject({ is_active: true, healthy: null, consecutive_failures: 0, last_item_count: null, created_at: at(0) });
      expect(await r.sources.healthCounts()).toEqual({ total: 2, healthy: 0 });
      await r.sources.recordSuccess(s1.id, 12);
      await r.sources.recordFailure(s2.id, 'x'.repeat(600));
      await r.sources.recordFailure(s2.id, 'timeout');
      expect(await r.sources.get(s1.id)).toMatchObject({ healthy: true, last_item_count: 12, last_error: null });
      expect(await r.sources.get(s2.id)).toMatchObject({ healthy: false, consecutive_failures: 2, last_error: 'timeout', last_item_count: 0 });
      expect(await r.sources.healthCounts()).toEqual({ total: 2, healthy: 1 });
      expect(await r.sources.failureCounts()).toEqual({ healthy: 1, unhealthy: 1 });
      await r.sources.recordFailure(s1.id, 'y'.repeat(600));
      expect((await r.sources.get(s1.id))!.last_error).toHaveLength(500);
      // A category switched off keeps its sources out of runs; a category nobody made does not.
      const science = await r.categories.create('science', true);
      await r.categories.update(science.id, 'science', false);
      expect((await r.sources.listForRun()).map((s) => s.id)).toEqual([s1.id]);
      await r.sources.update(s3.id, { name: 'On', url: 'https://on.invalid/rss', source_type: 'rss', category: 'Tech', is_active: true });
      expect((await r.sources.listForRun()).map((s) => s.name)).toEqual(['HN', 'On']);
      const [post] = await r.posts.insertMany([draft('b', 'p', { category: 'TECH' })]);
      await inTransaction(r.sql, clock, async (tx) => {
        await tx.sources.renameCategory('tech', 'Computing');
        await tx.posts.renameCategory('tech', 'Computing');
      });
      expect((await r.sources.list()).map((s) => s.category)).toEqual(['Computing', 'Science', 'Computing']);
      expect((await r.posts.get(post!))!.category).toBe('Computing');
      expect(await r.sources.delete(s2.id)).toBe(true);
      expect(await r.sources.delete(s2.id)).toBe(false);
      expect(await r.sources.get(s2.id)).toBeUndefined();
    });

    it('keeps categories unique by name whatever the case, ordered by name', async () => {
      const r = await open();
      const tech = await r.categories.create('Tech', true);
      expect(await r.categories.ensure('TECH')).toEqual(tech);
      const art = await r.categories.ensure('art');
      expect(art).toMatchObject({ name: 'art', is_active: true });
      expect((await r.categories.list()).map((c) => c.name)).toEqual(['art', 'Tech']);
      expect(await r.categories.byName('ART')).toEqual(art);
      expect(await r.categories.get(999_999)).toBeUndefined();
      await r.categories.update(tech.id, 'Technology', false);
      expect(await r.categories.get(tech.id)).toMatchObject({ name: 'Technology', is_active: false });
    });

    it('versions the style: a default once, each patch a new version on the latest', async () => {
      now = T0;
      const r = await open();
      await r.style.ensureDefault();
      await r.style.ensureDefault();
      expect(await r.style.current()).toMatchObject({ version: 1, tone: 'informative and concise', topics: [], hashtag_policy: 'never', thread_preference: false, origin: 'default' });
      now = T0 + 60_000;
      const [v2, v3] = await Promise.all([r.style.update({ tone: 'witty', topics: ['rust'] }, 'api'), r.style.update({ hashtag_policy: 'always' }, 'proposal:1')]);
      expect(v2).toMatchObject({ tone: 'witty', topics: ['rust'], hashtag_policy: 'never', origin: 'api', updated_at: at(1) });
      // The second patch applies to the first's result, not to the default both started from.
      expect(v3).toMatchObject({ tone: 'witty', topics: ['rust'], hashtag_policy: 'always', origin: 'proposal:1' });
      expect(await r.style.currentStored()).toEqual({ tone: 'witty', topics: ['rust'], use_hashtags: true, thread_style: false });
      expect((await r.style.history(10)).map((v) => v.origin)).toEqual(['proposal:1', 'api', 'default']);
    });

    it('keeps proposals and their decisions', async () => {
      now = T0;
      const r = await open();
      const [p1, p2] = await r.proposals.insertMany([
        { title: 'Be witty', rationale: 'likes', evidence: ['post 1'], current_value: { tone: 'dry' }, proposed_value: { tone: 'witty' }, model: 'm' },
        { title: 'Hashtags', rationale: 'reach', evidence: [], current_value: { hashtag_policy: 'never' }, proposed_value: { hashtag_policy: 'always' }, model: null },
      ]);
      now = T0 + 60_000;
      await r.proposals.decide(p1!, 'approved', 7);
      expect(await r.proposals.get(p1!)).toMatchObject({ type: 'style', status: 'approved', style_version_id: 7, decided_at: at(1), evidence: ['post 1'], proposed_value: { tone: 'witty' } });
      expect((await r.proposals.list('pending')).map((p) => p.id)).toEqual([p2]);
      expect((await r.proposals.list()).map((p) => p.id)).toEqual([p2, p1]);
    });

    it('records runs, marks the ones left running interrupted, lists the newest first in start order', async () => {
      now = T0;
      const r = await open();
      await r.runs.start('b1', 'm1');
      await r.runs.start('b2', 'm1');
      await r.runs.start('b3', 'm2');
      await r.runs.stage('b1', 'drafting');
      expect(await r.runs.get('b1')).toMatchObject({ status: 'running', stage: 'drafting', model: 'm1', started_at: at(0), finished_at: null, result: null });
      now = T0 + 60_000;
      await r.runs.finish('b1', 'completed', 3, { drafted: 3, note: "it's" }, null);
      await r.runs.finish('b2', 'failed', 0, null, 'model down');
      expect(await r.runs.markInterrupted()).toBe(1);
      expect(await r.runs.markInterrupted()).toBe(0);
      expect(await r.runs.get('b1')).toMatchObject({ status: 'completed', stage: 'done', post_count: 3, result: { drafted: 3, note: "it's" }, finished_at: at(1) });
      expect(await r.runs.get('b3')).toMatchObject({ status: 'interrupted', error: 'the daemon stopped during the run' });
      expect((await r.runs.recent(2)).map((x) => x.batch_id)).toEqual(['b3', 'b2']);
      expect(await r.runs.get('nope')).toBeUndefined();
      await expect(r.runs.start('b1', 'm1')).rejects.toThrow();
    });

    it('keeps settings, used items and the activity log', async () => {
      now = T0;
      const r = await open();
      expect(await r.settings.get('model')).toBeUndefined();
      await r.settings.set('model', 'a');
      await r.settings.set('model', 'b');
      expect(await r.settings.get('model')).toBe('b');
      expect(await r.settings.delete('model')).toBe(true);
      expect(await r.settings.delete('model')).toBe(false);
      await r.usedItems.markUsed(['hn:1', 'hn:2'], 'b1');
      await r.usedItems.markUsed(['hn:2', 'rss:x'], 'b2');
      expect(await r.usedItems.used(['hn:2', 'hn:3', 'rss:x'])).toEqual(new Set(['hn:2', 'rss:x']));
      await r.activity.add('post', 'post 1 approved', 'post', 1);
      await r.activity.add('run', 'run started');
      expect(await r.activity.recent(5)).toEqual([
        { id: expect.any(Number), type: 'run', message: 'run started', entity_type: null, entity_id: null, created_at: at(0) },
        { id: expect.any(Number), type: 'post', message: 'post 1 approved', entity_type: 'post', entity_id: '1', created_at: at(0) },
      ]);
    });
  },
);
