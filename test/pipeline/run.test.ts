import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeHackerNews, startFakeHackerNews } from '../fakes/hackernews.js';
import { type FakeFeeds, startFakeFeeds } from '../fakes/rss.js';
import pino from 'pino';
import { ComponentAlerts } from '../../src/daemon/internal-alerts.js';
import { FakeGateway, type Harness, defaultResponder, promptItems, startPipeline } from './harness.js';

let hn: FakeHackerNews;
let feeds: FakeFeeds;

beforeAll(async () => {
  hn = await startFakeHackerNews();
  feeds = await startFakeFeeds();
});
afterAll(async () => {
  await hn.close();
  await feeds.close();
});

async function withSources(h: Harness, list: { name: string; url: string; source_type: string; category?: string }[]): Promise<number[]> {
  const ids: number[] = [];
  for (const s of list) {
    const r = await h.request('POST', '/api/sources', { body: s });
    expect(r.status).toBe(201);
    ids.push(r.json.id);
  }
  return ids;
}

// Timeouts generous enough for a loaded machine; the slow fakes never answer, so they always expire.
const config = () => ({ 'hn-api-base-url': hn.baseUrl, 'fetch-timeout': '1s', 'source-timeout': '3s', 'batch-size': 4 });

describe('pipeline run', () => {
  let h: Harness;
  afterEach(async () => {
    hn.mode = 'ok';
    await h?.close();
  });

  it('fetches HN, RSS and Atom, marks a slow and a garbage source unhealthy, and drafts a batch', async () => {
    h = await startPipeline({ config: config() });
    await h.login();
    await h.request('PUT', '/api/style', { body: { tone: 'dry', topics: ['SQLite'], hashtag_policy: 'never' } });
    await withSources(h, [
      { name: 'HN', url: 'https://news.ycombinator.com/', source_type: 'hackernews', category: 'tech' },
      { name: 'Blog', url: feeds.url('/rss.xml'), source_type: 'rss', category: 'tech' },
      { name: 'Atom blog', url: feeds.url('/atom.xml'), source_type: 'rss', category: 'science' },
      { name: 'Slow', url: feeds.url('/slow.xml'), source_type: 'rss' },
      { name: 'Garbage', url: feeds.url('/garbage.xml'), source_type: 'rss' },
      { name: 'Missing', url: feeds.url('/missing.xml'), source_type: 'rss' },
    ]);
    const started = Date.now();
    const r = await h.request('POST', '/api/pipeline/run');
    expect(r.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(8000);
    const res = r.json;
    expect(res).toMatchObject({ status: 'completed', post_count: 4, items_selected: 4, sources_total: 6, sources_healthy: 3, model: 'fake/model-1', posts_rejected: 0 });
    expect(res.batch_id).toMatch(/^\d{8}T\d{6}Z-[0-9a-f]{6}$/);
    // 3 HN stories (the dead one is skipped) + 3 RSS + 3 Atom.
    expect(res.items_fetched).toBe(9);
    const byName = Object.fromEntries(res.sources.map((s: { name: string }) => [s.name, s]));
    expect(byName.Slow).toMatchObject({ healthy: false, error: expect.stringMatching(/timed out after 1000 ms/) });
    expect(byName.Garbage).toMatchObject({ healthy: false, error: expect.stringMatching(/not an RSS or Atom feed/) });
    expect(byName.Missing).toMatchObject({ healthy: false, error: expect.stringMatching(/HTTP 404/) });
    expect(byName.HN).toMatchObject({ healthy: true, items: 3 });

    // The prompt carried the style and the items.
    const req = h.gateway!.requests[0]!;
    expect(req.model).toBe('fake/model-1');
    expect(req.json).toBe(true);
    expect(req.messages[0]!.content).toMatch(/Tone: dry/);
    expect(req.messages[0]!.content).toMatch(/never use hashtags/);
    expect(req.messages[0]!.content).toMatch(/Topics of interest: SQLite/);
    expect(promptItems(req)).toHaveLength(4);

    const posts = (await h.request('GET', `/api/posts?batch_id=${res.batch_id}`)).json;
    expect(posts.total).toBe(4);
    for (const p of posts.items) {
      expect(p).toMatchObject({ status: 'pending', batch_id: res.batch_id, model: 'fake/model-1' });
      expect(p.content).toMatch(/^New: /);
      expect(p.source_title).toBeTruthy();
    }
    const sources = (await h.request('GET', '/api/sources')).json as { name: string; healthy: boolean; consecutive_failures: number; last_error: string | null }[];
    expect(sources.find((s) => s.name === 'Slow')).toMatchObject({ healthy: false, consecutive_failures: 1 });
    expect(sources.find((s) => s.name === 'Blog')).toMatchObject({ healthy: true, last_error: null });
    const stats = (await h.request('GET', '/api/dashboard/stats')).json;
    expect(stats).toMatchObject({ sources_healthy: 3, sources_total: 6, pending_review: 4, posts_today: 4 });

    const runs = (await h.request('GET', '/api/pipeline/runs')).json;
    expect(runs[0]).toMatchObject({ batch_id: res.batch_id, status: 'completed', post_count: 4 });
    expect((await h.request('GET', `/api/pipeline/runs/${res.batch_id}`)).json.result.post_count).toBe(4);
    expect((await h.request('GET', '/api/pipeline/runs/nope')).status).toBe(404);
    expect((await h.request('GET', '/api/activity?limit=1')).json[0].message).toMatch(/drafted 4 posts \(3\/6 sources healthy\)/);

    // A second run skips the items already drafted.
    const r2 = (await h.request('POST', '/api/pipeline/run')).json;
    expect(r2.items_new).toBe(5);
    expect(r2.post_count).toBe(4);
    const titles = new Set([...posts.items, ...(await h.request('GET', `/api/posts?batch_id=${r2.batch_id}`)).json.items].map((p: { source_title: string }) => p.source_title));
    expect(titles.size).toBe(8);
  });

  it('runs one at a time and reports progress', async () => {
    h = await startPipeline({ config: config() });
    await h.login();
    await withSources(h, [{ name: 'Blog', url: feeds.url('/rss.xml'), source_type: 'rss' }]);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    h.gateway!.responder = async (req) => {
      await gate;
      return defaultResponder(req);
    };
    const first = await h.request('POST', '/api/pipeline/run?wait=false');
    expect(first.status).toBe(202);
    expect(first.json).toMatchObject({ status: 'running', status_url: `/api/pipeline/runs/${first.json.batch_id}` });
    const second = await h.request('POST', '/api/pipeline/run');
    expect(second.status).toBe(409);
    expect(second.json.detail).toMatch(/already in progress/);
    for (let i = 0; i < 50 && h.gateway!.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const status = (await h.request('GET', '/api/pipeline/status')).json;
    expect(status).toMatchObject({ running: true, run: { batch_id: first.json.batch_id, stage: 'drafting', sources_done: 1, items_selected: 3 } });
    expect((await h.request('GET', `/api/pipeline/runs/${first.json.batch_id}`)).json).toMatchObject({ status: 'running', stage: 'drafting' });
    release();
    let done;
    for (let i = 0; i < 100; i++) {
      done = (await h.request('GET', '/api/pipeline/status')).json;
      if (!done.running) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(done).toMatchObject({ running: false, run: { status: 'completed', stage: 'done', post_count: 3 } });
    expect((await h.request('POST', '/api/pipeline/run')).status).toBe(200);
    expect((await h.request('POST', '/api/pipeline/run?wait=maybe')).status).toBe(422);
  });

  it('answers 503 without the gateway and 400 without a model', async () => {
    h = await startPipeline({ config: config(), gateway: null });
    await h.login();
    const r = await h.request('POST', '/api/pipeline/run');
    expect(r.status).toBe(503);
    expect(r.json.detail).toMatch(/gateway is not running/);
    expect((await h.request('POST', '/api/proposals/generate')).status).toBe(503);
    await h.close();
    h = await startPipeline({ config: config(), env: { PIPELINE_MODEL: '' } });
    await h.login();
    const m = await h.request('POST', '/api/pipeline/run');
    expect(m.status).toBe(400);
    expect(m.json.detail).toMatch(/no model configured/);
    expect((await h.request('GET', '/api/settings/model')).json).toEqual({ model_id: null, source: 'env' });
    await h.request('PUT', '/api/settings/model', { body: { model_id: 'db/model' } });
    expect((await h.request('POST', '/api/pipeline/run')).json).toMatchObject({ model: 'db/model', post_count: 0, sources_total: 0 });
  });

  it('repairs or rejects bad model output per post and never crashes', async () => {
    h = await startPipeline({ config: config() });
    await h.login();
    await withSources(h, [{ name: 'Blog', url: feeds.url('/rss.xml'), source_type: 'rss' }]);
    // First: prose only, twice → no posts, items stay unused.
    h.gateway!.responder = () => 'Sorry, here are some thoughts without JSON.';
    const r1 = (await h.request('POST', '/api/pipeline/run')).json;
    expect(r1).toMatchObject({ post_count: 0, posts_rejected: 1, rejected: [{ index: -1, reason: 'model answer is not valid JSON' }] });
    expect(h.gateway!.requests).toHaveLength(2); // one repair round trip
    expect(h.gateway!.requests[1]!.messages.at(-1)!.content).toMatch(/not valid JSON/);
    // Then: the repair answer is fine.
    let call = 0;
    h.gateway!.responder = (req) => (call++ === 0 ? 'oops {' : defaultResponder(req));
    const r2 = (await h.request('POST', '/api/pipeline/run')).json;
    expect(r2.post_count).toBe(3);
    // Then: mixed quality per post.
    feeds.rss = feeds.rss.map((e, i) => ({ ...e, link: `${e.link}-v2`, title: `Fresh ${i}` }));
    h.gateway!.responder = () =>
      '```json\n' +
      JSON.stringify({
        posts: [
          { item: 1, content: 'x'.repeat(400) },
          { item: 2, content: 'Good post #hashtag' },
          { item: 3, content: null },
        ],
      }) +
      '\n```';
    const r3 = (await h.request('POST', '/api/pipeline/run')).json;
    expect(r3.post_count).toBe(1);
    expect(r3.rejected.map((x: { reason: string }) => x.reason)).toEqual(['post is too long (400 > 280 characters)', 'post has no text']);
    expect(r3.repairs).toEqual([{ item: 2, repairs: ['hashtags removed (policy never)'] }]);
    const post = (await h.request('GET', `/api/posts/${r3.post_ids[0]}`)).json;
    expect(post.content).toBe('Good post');
    // The rejected items were not spent: a later run offers them again.
    h.gateway!.responder = defaultResponder;
    expect((await h.request('POST', '/api/pipeline/run')).json).toMatchObject({ items_new: 2, post_count: 2 });
  });

  it('raises PipelineRunFailed and PipelineSourceUnhealthy in the alert manager, and resolves them when a run succeeds', async () => {
    const posted: { labels: Record<string, string>; endsAt?: number; annotations: Record<string, string>; generatorURL: string }[][] = [];
    const alerts = new ComponentAlerts('pipeline', true, () => ({ post: (a) => (posted.push(a), []) }), () => 'http://127.0.0.1:8000', { now: () => Date.now() }, pino({ level: 'silent' }));
    h = await startPipeline({ config: config(), alerts });
    await h.login();
    const [, missing] = await withSources(h, [
      { name: 'Blog', url: feeds.url('/rss.xml'), source_type: 'rss' },
      { name: 'Missing', url: feeds.url('/missing.xml'), source_type: 'rss' },
    ]);
    h.gateway!.responder = () => {
      throw Object.assign(new Error('upstream down'), { status: 503 });
    };
    const failed = await h.request('POST', '/api/pipeline/run');
    expect(failed.status).toBe(502);
    const batch = (await h.request('GET', '/api/pipeline/runs')).json[0].batch_id as string;
    expect(alerts.firing()).toEqual([{ alertname: 'PipelineRunFailed', labels: {}, annotations: { summary: `pipeline run ${batch} failed: ${failed.json.detail}`, batch_id: batch }, path: `/api/pipeline/runs/${batch}` }]);
    expect(posted.at(-1)![0]).toMatchObject({ labels: { alertname: 'PipelineRunFailed', component: 'pipeline' }, generatorURL: `http://127.0.0.1:8000/api/pipeline/runs/${batch}` });

    h.gateway!.responder = defaultResponder;
    expect((await h.request('POST', '/api/pipeline/run')).status).toBe(200);
    // The failed run's alert is resolved (end = now); the unhealthy source fires.
    const resolvedRun = posted.flat().find((a) => a.labels.alertname === 'PipelineRunFailed' && a.endsAt !== undefined && a.endsAt <= Date.now());
    expect(resolvedRun).toBeDefined();
    expect(alerts.firing()).toEqual([
      expect.objectContaining({ alertname: 'PipelineSourceUnhealthy', labels: { source_id: String(missing), source: 'Missing' }, path: `/api/sources/${missing}` }),
    ]);
    expect(alerts.firing()[0]!.annotations!.summary).toMatch(/^source Missing failed in run .*HTTP 404/);

    // GET /metrics, without a token: the same story in numbers.
    const m = await fetch(`${h.url}/metrics`);
    expect(m.status).toBe(200);
    const text = await m.text();
    expect(text).toMatch(/^ctl_pipeline_runs_total\{status="failed"\} 1$/m);
    expect(text).toMatch(/^ctl_pipeline_runs_total\{status="completed"\} 1$/m);
    expect(text).toMatch(/^ctl_pipeline_sources\{health="unhealthy"\} 1$/m);
    expect(text).toMatch(/^ctl_pipeline_posts\{status="pending"\} [1-9]/m);
  });

  it('answers 502 when the model call fails and records the failed run', async () => {
    h = await startPipeline({ config: config() });
    await h.login();
    await withSources(h, [{ name: 'Blog', url: feeds.url('/rss.xml'), source_type: 'rss' }]);
    h.gateway!.responder = () => {
      throw Object.assign(new Error('model "nope" is not known'), { status: 404 });
    };
    const r = await h.request('POST', '/api/pipeline/run');
    expect(r.status).toBe(502);
    expect(r.json.detail).toBe('drafting through model "fake/model-1" failed: model "nope" is not known (gateway status 404)');
    const runs = (await h.request('GET', '/api/pipeline/runs')).json;
    expect(runs[0]).toMatchObject({ status: 'failed', error: r.json.detail, post_count: 0 });
    expect((await h.request('GET', '/api/posts')).json.total).toBe(0);
    // Nothing was spent.
    h.gateway!.responder = defaultResponder;
    expect((await h.request('POST', '/api/pipeline/run')).json.post_count).toBe(3);
  });

  it('survives a Hacker News API that answers garbage, errors or hangs', async () => {
    h = await startPipeline({ config: config() });
    await h.login();
    await withSources(h, [
      { name: 'HN', url: '', source_type: 'hackernews' },
      { name: 'Atom', url: feeds.url('/atom.xml'), source_type: 'rss' },
    ]);
    for (const [mode, re] of [
      ['garbage', /invalid JSON/],
      ['error', /HTTP 500/],
      ['hang', /timed out/],
      ['bad-items', /all 4 Hacker News item requests failed/],
    ] as const) {
      hn.mode = mode;
      const r = await h.request('POST', '/api/pipeline/run');
      expect(r.status, mode).toBe(200);
      const src = r.json.sources.find((s: { name: string }) => s.name === 'HN');
      expect(src.healthy, mode).toBe(false);
      expect(src.error, mode).toMatch(re);
    }
    const hnRow = (await h.request('GET', '/api/sources')).json.find((s: { name: string }) => s.name === 'HN');
    expect(hnRow.consecutive_failures).toBe(4);
    hn.mode = 'ok';
    const ok = (await h.request('POST', '/api/pipeline/run')).json;
    expect(ok.sources.find((s: { name: string }) => s.name === 'HN')).toMatchObject({ healthy: true, items: 3 });
    expect((await h.request('GET', '/api/sources')).json.find((s: { name: string }) => s.name === 'HN').consecutive_failures).toBe(0);
  });

  it('skips inactive sources and sources of inactive categories; feeds reviewer feedback into the prompt', async () => {
    h = await startPipeline({ config: config(), gateway: new FakeGateway() });
    await h.login();
    await withSources(h, [
      { name: 'Blog', url: feeds.url('/rss.xml'), source_type: 'rss', category: 'on' },
      { name: 'Atom', url: feeds.url('/atom.xml'), source_type: 'rss', category: 'off' },
    ]);
    const cats = (await h.request('GET', '/api/categories')).json as { id: number; name: string }[];
    await h.request('PATCH', `/api/categories/${cats.find((c) => c.name === 'off')!.id}`, { body: { is_active: false } });
    const r = (await h.request('POST', '/api/pipeline/run')).json;
    expect(r.sources.map((s: { name: string }) => s.name)).toEqual(['Blog']);
    const [p1, p2] = r.post_ids;
    await h.request('PATCH', `/api/posts/${p1}`, { body: { status: 'rejected', feedback: 'too salesy' } });
    await h.request('PATCH', `/api/posts/${p2}`, { body: { status: 'approved', content: 'A calmer take' } });
    feeds.rss = feeds.rss.map((e) => ({ ...e, link: `${e.link}-next` }));
    await h.request('POST', '/api/pipeline/run');
    const prompt = h.gateway!.requests.at(-1)!.messages[0]!.content;
    expect(prompt).toMatch(/Rejected: .*reason: "too salesy"/);
    expect(prompt).toMatch(/Edited by the reviewer from .* to "A calmer take"/);
  });
});
