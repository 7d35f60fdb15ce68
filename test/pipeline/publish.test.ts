import pino from 'pino';
import { ComponentAlerts } from '../../src/daemon/internal-alerts.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/http/clock.js';
import { PostsRepo } from '../../src/pipeline/data/posts.js';
import { type FakeXApi, startFakeXApi } from '../fakes/x-api.js';
import { type Harness, startPipeline } from './harness.js';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 1)]);
let x: FakeXApi;

beforeAll(async () => {
  x = await startFakeXApi('secret-token');
});
afterAll(async () => {
  await x.close();
});

async function seed(h: Harness, clock: ManualClock | undefined, content: string, thread: string[] = []): Promise<number> {
  return (await new PostsRepo(h.sql, clock ?? { now: () => Date.now() }).insertMany([
    { batch_id: 'b1', content, thread, category: 'tech', source_id: null, source_name: null, source_title: null, source_url: null, model: null },
  ]))[0]!;
}

describe('publishing to X', () => {
  let h: Harness;
  let clock: ManualClock;
  beforeEach(async () => {
    clock = new ManualClock(Date.parse('2030-03-01T10:00:00Z'));
    x.failIf = null;
    h = await startPipeline({ clock, config: { 'x-api-base-url': x.baseUrl, 'x-api-token': 'secret-token', 'publish-interval': '1h' } });
    await h.login();
  });
  afterEach(async () => {
    await h.close();
  });

  it('publishes approved posts when their time comes', async () => {
    const due = await seed(h, clock, 'Scheduled post one');
    const pending = await seed(h, clock, 'Never approved');
    await h.request('PATCH', `/api/posts/${due}`, { body: { status: 'approved', scheduled_for: '2030-03-01T12:00:00Z' } });
    await h.request('PATCH', `/api/posts/${pending}`, { body: { scheduled_for: '2030-03-01T09:00:00Z' } });
    expect(await h.handle.publishDue()).toBe(0);
    clock.advance(2 * 3_600_000);
    expect(await h.handle.publishDue()).toBe(1);
    const p = (await h.request('GET', `/api/posts/${due}`)).json;
    expect(p).toMatchObject({ status: 'published', published_at: '2030-03-01T12:00:00.000Z', publish_error: null });
    const tweet = x.tweets.find((t) => t.id === p.external_id)!;
    expect(tweet.text).toBe('Scheduled post one');
    expect(x.requests.at(-1)!.auth).toBe('Bearer secret-token');
    expect((await h.request('GET', `/api/posts/${pending}`)).json.status).toBe('pending');
    expect(await h.handle.publishDue()).toBe(0); // not twice
    expect((await h.request('GET', '/api/dashboard/stats')).json.published_total).toBe(1);
  });

  it('posts threads as replies, with the image on the first part', async () => {
    const id = await seed(h, clock, 'Thread start', ['Part two', 'Part three']);
    const b = '----b';
    const body = Buffer.concat([Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`), PNG, Buffer.from(`\r\n--${b}--\r\n`)]);
    expect((await h.request('POST', `/api/posts/${id}/image`, { raw: body, headers: { 'content-type': `multipart/form-data; boundary=${b}` } })).status).toBe(200);
    await h.request('PATCH', `/api/posts/${id}`, { body: { status: 'approved' } });
    const r = await h.request('POST', `/api/posts/${id}/publish`);
    expect(r.status).toBe(200);
    expect(r.json.status).toBe('published');
    expect(r.json.external_ids).toHaveLength(3);
    const [t1, t2, t3] = r.json.external_ids.map((eid: string) => x.tweets.find((t) => t.id === eid)!);
    expect(t1).toMatchObject({ text: 'Thread start', reply_to: null });
    expect(t1.media_ids).toHaveLength(1);
    expect(x.media.find((m) => m.id === t1.media_ids[0])).toMatchObject({ category: 'tweet_image' });
    expect(t2).toMatchObject({ text: 'Part two', reply_to: t1.id, media_ids: [] });
    expect(t3).toMatchObject({ text: 'Part three', reply_to: t2.id });
    expect((await h.request('POST', `/api/posts/${id}/publish`)).status).toBe(409);
  });

  it('retries temporary failures, continues a half-posted thread, and gives up on permanent ones', async () => {
    const id = await seed(h, clock, 'Resilient start', ['Resilient two']);
    await h.request('PATCH', `/api/posts/${id}`, { body: { status: 'approved', scheduled_for: '2030-03-01T09:00:00Z' } });
    // The second part fails with 503 once: the first part must not be posted again.
    let failed = false;
    x.failIf = (_m, path, body) => (path === '/2/tweets' && body.includes('Resilient two') && !failed ? ((failed = true), 503) : undefined);
    expect(await h.handle.publishDue()).toBe(0);
    const mid = (await h.request('GET', `/api/posts/${id}`)).json;
    expect(mid).toMatchObject({ status: 'approved', publish_attempts: 1 });
    expect(mid.publish_error).toMatch(/HTTP 503/);
    expect(mid.external_ids).toHaveLength(1);
    expect(await h.handle.publishDue()).toBe(1);
    const done = (await h.request('GET', `/api/posts/${id}`)).json;
    expect(done.status).toBe('published');
    expect(x.tweets.filter((t) => t.text === 'Resilient start')).toHaveLength(1);
    expect(x.tweets.find((t) => t.text === 'Resilient two')!.reply_to).toBe(done.external_ids[0]);

    const bad = await seed(h, clock, 'Refused by X');
    await h.request('PATCH', `/api/posts/${bad}`, { body: { status: 'approved', scheduled_for: '2030-03-01T09:00:00Z' } });
    x.failNext(403);
    expect(await h.handle.publishDue()).toBe(0);
    expect((await h.request('GET', `/api/posts/${bad}`)).json).toMatchObject({ status: 'failed', publish_attempts: 1 });
    expect(await h.handle.publishDue()).toBe(0); // failed posts wait for a human
    const now = await h.request('POST', `/api/posts/${bad}/publish`);
    expect(now.status).toBe(200);
    expect(now.json.status).toBe('published');

    const limited = await seed(h, clock, 'Rate limited');
    await h.request('PATCH', `/api/posts/${limited}`, { body: { status: 'approved' } });
    x.failNext(429);
    const r = await h.request('POST', `/api/posts/${limited}/publish`);
    expect(r.status).toBe(502);
    expect(r.json.detail).toMatch(/HTTP 429.*rate limit resets/);
    expect((await h.request('GET', `/api/posts/${limited}`)).json.status).toBe('approved');
  });

  it('a post X refuses for good raises PipelinePublishFailed until it is published', async () => {
    await h.close();
    const alerts = new ComponentAlerts('pipeline', true, () => ({ post: () => [] }), () => '', clock, pino({ level: 'silent' }));
    h = await startPipeline({ clock, alerts, config: { 'x-api-base-url': x.baseUrl, 'x-api-token': 'secret-token', 'publish-interval': '1h' } });
    await h.login();
    const bad = await seed(h, clock, 'Refused for good');
    await h.request('PATCH', `/api/posts/${bad}`, { body: { status: 'approved', scheduled_for: '2030-03-01T09:00:00Z' } });
    x.failNext(403);
    expect(await h.handle.publishDue()).toBe(0);
    expect(alerts.firing()).toEqual([expect.objectContaining({ alertname: 'PipelinePublishFailed', labels: { post_id: String(bad) }, path: `/api/posts/${bad}` })]);
    expect(alerts.firing()[0]!.annotations!.summary).toMatch(new RegExp(`^publishing post ${bad} failed: .*403`));
    expect((await h.request('POST', `/api/posts/${bad}/publish`)).status).toBe(200);
    expect(alerts.firing()).toEqual([]);
  });

  it('fetches public metrics for recently published posts', async () => {
    const a = await seed(h, clock, 'Measured post A');
    const b = await seed(h, clock, 'Measured post B');
    for (const id of [a, b]) {
      await h.request('PATCH', `/api/posts/${id}`, { body: { status: 'approved' } });
      await h.request('POST', `/api/posts/${id}/publish`);
    }
    const pa = (await h.request('GET', `/api/posts/${a}`)).json;
    const pb = (await h.request('GET', `/api/posts/${b}`)).json;
    x.setMetrics(pa.external_id, { impression_count: 2000, like_count: 80, retweet_count: 10, reply_count: 10, quote_count: 3 });
    // B was deleted on X.
    x.tweets.splice(x.tweets.findIndex((t) => t.id === pb.external_id), 1);
    const r = await h.request('POST', '/api/metrics/fetch');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ requested: 2, updated: 1, post_ids: [a] });
    expect(r.json.errors).toEqual([{ post_id: b, external_id: pb.external_id, detail: `Could not find tweet with ids: [${pb.external_id}].` }]);
    const m = (await h.request('GET', `/api/posts/${a}/metrics`)).json;
    expect(m).toMatchObject({ impressions: 2000, likes: 80, retweets: 10, replies: 10, engagement_rate: 5, source: 'x' });
    expect((await h.request('GET', '/api/analytics?period=7d')).json).toMatchObject({ post_count: 2, total_impressions: 2000, engagement_rate: 5 });
    // Outside the 30-day window nothing is requested.
    clock.advance(31 * 86_400_000);
    await h.login();
    expect((await h.request('POST', '/api/metrics/fetch')).json).toMatchObject({ requested: 0, updated: 0 });
  });
});

describe('publishing with a wrong token or a real timer', () => {
  it('answers 502 when X refuses the token', async () => {
    const h = await startPipeline({ config: { 'x-api-base-url': x.baseUrl, 'x-api-token': 'wrong' } });
    try {
      await h.login();
      const id = await seed(h, undefined, 'Bad token');
      await h.request('PATCH', `/api/posts/${id}`, { body: { status: 'approved' } });
      const r = await h.request('POST', `/api/posts/${id}/publish`);
      expect(r.status).toBe(502);
      expect(r.json.detail).toMatch(/HTTP 401: Unauthorized/);
      expect((await h.request('POST', '/api/metrics/fetch')).status).toBe(200); // nothing published, nothing asked
    } finally {
      await h.close();
    }
  });
  it('publishes from the timer started in start()', async () => {
    const h = await startPipeline({ config: { 'x-api-base-url': x.baseUrl, 'x-api-token': 'secret-token', 'publish-interval': '50ms' } });
    try {
      await h.login();
      const id = await seed(h, undefined, 'Timer post');
      await h.request('PATCH', `/api/posts/${id}`, { body: { status: 'approved', scheduled_for: new Date(Date.now() - 1000).toISOString() } });
      let status = '';
      for (let i = 0; i < 250 && status !== 'published'; i++) {
        await new Promise((r) => setTimeout(r, 20));
        status = (await h.request('GET', `/api/posts/${id}`)).json.status;
      }
      expect(status).toBe('published');
    } finally {
      await h.close();
    }
  });
});
