import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/http/clock.js';
import { PostsRepo } from '../../src/pipeline/data/posts.js';
import { SignJWT } from 'jose';
import { type Harness, PASSWORD, startPipeline } from './harness.js';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(200, 7)]);

function seedPosts(h: Harness, n: number, batch = 'batch-a', category = 'tech'): Promise<number[]> {
  const repo = new PostsRepo(h.sql, systemClock);
  return repo.insertMany(
    Array.from({ length: n }, (_, i) => ({
      batch_id: batch,
      content: `Draft number ${i} about SQLite`,
      thread: [],
      category,
      source_id: null,
      source_name: 'seed',
      source_title: `Title ${i}`,
      source_url: `https://example.com/${i}`,
      model: 'fake/model-1',
    })),
  );
}

function multipart(field: string, filename: string, type: string, data: Buffer): { body: Buffer; type: string } {
  const b = '----testboundary42';
  const body = Buffer.concat([
    Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`),
    data,
    Buffer.from(`\r\n--${b}--\r\n`),
  ]);
  return { body, type: `multipart/form-data; boundary=${b}` };
}

describe('pipeline API over TCP', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startPipeline({ config: { 'max-image-bytes': 4096 } });
  });
  afterAll(async () => {
    await h.close();
  });

  describe('auth', () => {
    it('serves health without a token', async () => {
      const r = await h.request('GET', '/api/system/health', { token: false });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ status: 'healthy', version: '0.0.0-test' });
      expect(Date.parse(r.json.timestamp)).not.toBeNaN();
    });
    it('refuses every other route without a bearer token', async () => {
      for (const [m, p] of [
        ['GET', '/api/posts'],
        ['POST', '/api/pipeline/run'],
        ['GET', '/api/openapi.json'],
        ['GET', '/api/settings/model'],
        ['PATCH', '/api/posts/1'],
      ] as const) {
        const r = await h.request(m, p, { token: false });
        expect(r.status, `${m} ${p}`).toBe(401);
        expect(r.json).toEqual({ detail: 'Not authenticated' });
        expect(r.headers.get('www-authenticate')).toBe('Bearer');
      }
      const bad = await h.request('GET', '/api/posts', { token: 'not.a.jwt' });
      expect(bad.status).toBe(401);
      expect(bad.json.detail).toMatch(/Could not validate credentials/);
      const foreign = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('owner').setExpirationTime('1h').sign(new Uint8Array(32));
      expect((await h.request('GET', '/api/posts', { token: foreign })).status).toBe(401);
      expect((await h.request('GET', '/api/posts', { headers: { authorization: 'Basic abc' }, token: false })).status).toBe(401);
    });
    it('logs in with the owner password', async () => {
      const wrong = await h.request('POST', '/api/auth/login', { body: { password: 'nope' }, token: false });
      expect(wrong.status).toBe(401);
      expect(wrong.json).toEqual({ detail: 'Incorrect password' });
      expect((await h.request('POST', '/api/auth/login', { body: {}, token: false })).status).toBe(422);
      expect((await h.request('POST', '/api/auth/login', { body: { password: 5 }, token: false })).json).toEqual({ detail: 'body/password must be string' });
      expect((await h.request('POST', '/api/auth/login', { raw: '{"password":', headers: { 'content-type': 'application/json' }, token: false })).status).toBe(400);
      const wrongType = await h.request('POST', '/api/auth/login', { raw: 'password=x', headers: { 'content-type': 'text/plain' }, token: false });
      expect(wrongType.status).toBe(415);
      expect(wrongType.json.detail).toMatch(/unsupported media type/);
      const ok = await h.request('POST', '/api/auth/login', { body: { password: PASSWORD }, token: false });
      expect(ok.status).toBe(200);
      expect(ok.json).toMatchObject({ token_type: 'bearer', expires_in: 86400 });
      expect(ok.json.access_token.split('.')).toHaveLength(3);
      await h.login();
      expect((await h.request('GET', '/api/posts')).status).toBe(200);
    });
    it('answers unknown paths and methods in the {detail} format', async () => {
      expect(await h.request('GET', '/api/nothing')).toMatchObject({ status: 404, json: { detail: 'Not Found' } });
      const r = await h.request('DELETE', '/api/posts');
      expect(r.status).toBe(405);
      expect(r.json).toEqual({ detail: 'Method Not Allowed' });
      expect(r.headers.get('allow')).toContain('GET');
    });
  });

  describe('sources and categories', () => {
    it('creates, reads, updates and deletes sources', async () => {
      const c = await h.request('POST', '/api/sources', { body: { name: 'HN', url: 'https://news.ycombinator.com/', source_type: 'hackernews', category: 'Tech', is_active: true } });
      expect(c.status).toBe(201);
      expect(c.json).toMatchObject({ name: 'HN', source_type: 'hackernews', category: 'Tech', is_active: true, healthy: null });
      const id = c.json.id;
      expect((await h.request('GET', `/api/sources/${id}`)).json.name).toBe('HN');
      const u = await h.request('PUT', `/api/sources/${id}`, { body: { is_active: false } });
      expect(u.status).toBe(200);
      expect(u.json).toMatchObject({ name: 'HN', is_active: false });
      expect((await h.request('PATCH', `/api/sources/${id}`, { body: { name: 'Hacker News' } })).json.name).toBe('Hacker News');
      expect((await h.request('GET', '/api/sources')).json.map((s: { id: number }) => s.id)).toContain(id);
      // The category was created on the fly.
      expect((await h.request('GET', '/api/categories')).json.map((x: { name: string }) => x.name)).toContain('Tech');
      const d = await h.request('DELETE', `/api/sources/${id}`);
      expect(d.status).toBe(204);
      expect(d.text).toBe('');
      expect(await h.request('GET', `/api/sources/${id}`)).toMatchObject({ status: 404, json: { detail: `Source ${id} not found` } });
      expect((await h.request('DELETE', `/api/sources/${id}`)).status).toBe(404);
      expect((await h.request('PUT', `/api/sources/${id}`, { body: { name: 'x' } })).status).toBe(404);
    });
    it('refuses bad source bodies', async () => {
      const cases: [unknown, RegExp][] = [
        [{ name: 'x', url: 'https://a/', source_type: 'twitter' }, /source_type must be one of: "hackernews", "rss"/],
        [{ url: 'https://a/', source_type: 'rss' }, /name is required/],
        [{ name: 'x', url: 'not a url', source_type: 'rss' }, /url must be an absolute http/],
        [{ name: 'x', url: 'file:///etc/passwd', source_type: 'rss' }, /http or https/],
        [{ name: 'x', url: 'https://a/', source_type: 'rss', is_active: 'yes' }, /is_active must be boolean/],
        [{ name: 'x', url: 'https://a/', source_type: 'rss', extra: 1 }, /unknown field "extra"/],
        [{ name: '   ', url: 'https://a/', source_type: 'rss' }, /name must not be blank/],
        [[1, 2], /must be object/],
      ];
      for (const [body, re] of cases) {
        const r = await h.request('POST', '/api/sources', { body });
        expect(r.status, JSON.stringify(body)).toBe(422);
        expect(r.json.detail).toMatch(re);
      }
      expect((await h.request('POST', '/api/sources', { raw: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status).toBe(415);
      expect((await h.request('GET', '/api/sources/abc')).status).toBe(422);
      expect((await h.request('GET', '/api/sources/0')).status).toBe(404);
      expect((await h.request('GET', '/api/sources/99999999999999999999')).status).toBe(404);
      expect((await h.request('PATCH', '/api/sources/1', { body: {} })).status).toBe(422);
    });
    it('manages categories; a rename follows on sources', async () => {
      const c = await h.request('POST', '/api/categories', { body: { name: 'AI' } });
      expect(c.status).toBe(201);
      expect(c.json).toMatchObject({ name: 'AI', is_active: true });
      expect((await h.request('POST', '/api/categories', { body: { name: 'ai' } })).status).toBe(409);
      const s = await h.request('POST', '/api/sources', { body: { name: 'feed', url: 'https://blog.example.com/rss', source_type: 'rss', category: 'ai' } });
      expect(s.json.category).toBe('AI');
      const u = await h.request('PUT', `/api/categories/${c.json.id}`, { body: { name: 'Machine learning', is_active: false } });
      expect(u.json).toMatchObject({ name: 'Machine learning', is_active: false });
      expect((await h.request('GET', `/api/sources/${s.json.id}`)).json.category).toBe('Machine learning');
      expect((await h.request('PUT', '/api/categories/424242', { body: { name: 'x' } })).status).toBe(404);
      expect((await h.request('POST', '/api/categories', { body: { name: 3 } })).status).toBe(422);
      expect((await h.request('POST', '/api/categories', { body: { name: 'Tech' } })).status).toBe(409);
      const other = await h.request('POST', '/api/categories', { body: { name: 'Other' } });
      expect((await h.request('PATCH', `/api/categories/${other.json.id}`, { body: { name: 'tech' } })).status).toBe(409);
      await h.request('DELETE', `/api/sources/${s.json.id}`);
    });
  });

  describe('style and model', () => {
    it('versions every style update and maps stored names', async () => {
      const g = await h.request('GET', '/api/style');
      expect(g.json).toMatchObject({ version: 1, hashtag_policy: 'never', thread_preference: false, topics: [], origin: 'default' });
      const u = await h.request('PUT', '/api/style', { body: { tone: 'witty', topics: ['Rust', 'SQLite', 'Rust'], hashtag_policy: 'always' } });
      expect(u.status).toBe(200);
      expect(u.json).toMatchObject({ version: 2, tone: 'witty', topics: ['Rust', 'SQLite'], hashtag_policy: 'always', thread_preference: false, origin: 'api' });
      // PUT back what GET returned (read-only fields are ignored).
      const back = await h.request('PUT', '/api/style', { body: { ...u.json, thread_preference: true } });
      expect(back.json).toMatchObject({ version: 3, tone: 'witty', thread_preference: true });
      const hist = await h.request('GET', '/api/style/history');
      expect(hist.json.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);
      expect((await h.request('GET', '/api/style/history?limit=1')).json).toHaveLength(1);
      for (const body of [{ hashtag_policy: 'sometimes' }, { thread_preference: 'yes' }, { topics: 'Rust' }, { tone: '' }, { use_hashtags: true }]) {
        expect((await h.request('PUT', '/api/style', { body })).status, JSON.stringify(body)).toBe(422);
      }
      expect((await h.request('GET', '/api/style/history?limit=0')).status).toBe(422);
      // The stored document uses use_hashtags / thread_style.
      const row = (await h.sql.get<{ config: string }>('SELECT config FROM style_versions ORDER BY id DESC LIMIT 1'))!;
      expect(JSON.parse(row.config)).toEqual({ tone: 'witty', topics: ['Rust', 'SQLite'], use_hashtags: true, thread_style: true });
    });
    it('reads the model from env, then from the database', async () => {
      expect((await h.request('GET', '/api/settings/model')).json).toEqual({ model_id: 'fake/model-1', source: 'env' });
      const s = await h.request('PUT', '/api/settings/model', { body: { model_id: 'openai/gpt-4o-mini' } });
      expect(s.json).toEqual({ model_id: 'openai/gpt-4o-mini', message: 'Model updated to openai/gpt-4o-mini' });
      expect((await h.request('GET', '/api/settings/model')).json).toEqual({ model_id: 'openai/gpt-4o-mini', source: 'database' });
      for (const body of [{ model_id: '' }, { model_id: '   ' }, { model_id: 3 }, {}]) {
        expect((await h.request('PUT', '/api/settings/model', { body })).status, JSON.stringify(body)).toBe(422);
      }
      expect((await h.request('DELETE', '/api/settings/model')).json).toEqual({ model_id: 'fake/model-1', source: 'env' });
    });
  });

  describe('posts', () => {
    let ids: number[];
    beforeAll(async () => {
      ids = [...(await seedPosts(h, 25, 'batch-a')), ...(await seedPosts(h, 3, 'batch-b', 'science'))];
    });
    it('lists with pagination and filters', async () => {
      const r = await h.request('GET', '/api/posts');
      expect(r.json).toMatchObject({ total: 28, page: 1, per_page: 20 });
      expect(r.json.items).toHaveLength(20);
      const p2 = await h.request('GET', '/api/posts?page=2&page_size=20');
      expect(p2.json.items).toHaveLength(8);
      expect((await h.request('GET', '/api/posts?batch_id=batch-b')).json.total).toBe(3);
      expect((await h.request('GET', '/api/posts?search=number%2012')).json.total).toBe(1);
      expect((await h.request('GET', '/api/posts?search=100%25')).json.total).toBe(0);
      expect((await h.request('GET', '/api/posts?status=pending&page_size=100')).json.items).toHaveLength(28);
      for (const q of ['page=0', 'page=x', 'page_size=101', 'page_size=0', 'status=bogus', 'page_size=1.5']) {
        const bad = await h.request('GET', `/api/posts?${q}`);
        expect(bad.status, q).toBe(422);
        expect(typeof bad.json.detail).toBe('string');
      }
    });
    it('gets, approves, rejects and edits', async () => {
      const id = ids[0]!;
      const g = await h.request('GET', `/api/posts/${id}`);
      expect(g.json).toMatchObject({ id, status: 'pending', batch_id: 'batch-a', feedback: null, scheduled_for: null, image_url: null });
      const a = await h.request('PATCH', `/api/posts/${id}`, { body: { status: 'approved', content: 'Edited text', feedback: 'shorter please', scheduled_for: '2030-05-01T10:00:00+02:00' } });
      expect(a.status).toBe(200);
      expect(a.json).toMatchObject({ status: 'approved', content: 'Edited text', original_content: 'Draft number 0 about SQLite', feedback: 'shorter please', scheduled_for: '2030-05-01T08:00:00.000Z' });
      const rj = await h.request('PATCH', `/api/posts/${ids[1]}`, { body: { status: 'rejected', feedback: 'off topic' } });
      expect(rj.json.status).toBe('rejected');
      const cleared = await h.request('PATCH', `/api/posts/${id}`, { body: { scheduled_for: null, feedback: '' } });
      expect(cleared.json).toMatchObject({ scheduled_for: null, feedback: null, status: 'approved' });
      expect((await h.request('GET', '/api/posts?status=approved')).json.total).toBe(1);
    });
    it('refuses bad updates', async () => {
      const id = ids[2]!;
      const cases: [unknown, number, RegExp][] = [
        [{ status: 'published' }, 422, /status must be one of: "approved", "rejected"/],
        [{ status: 'APPROVED' }, 422, /./],
        [{ content: 12 }, 422, /content must be string/],
        [{ content: '' }, 422, /content/],
        [{ content: '   ' }, 422, /blank/],
        [{ content: 'x'.repeat(281) }, 422, /too long \(281 > 280/],
        [{ scheduled_for: 'next tuesday' }, 422, /ISO 8601/],
        [{ scheduled_for: '2030-02-30T10:00:00Z' }, 422, /ISO 8601/],
        [{ scheduled_for: 1700000000 }, 422, /scheduled_for/],
        [{ feedback: ['a'] }, 422, /feedback/],
        [{ thread: 'x' }, 422, /thread must be array/],
        [{ bogus: true }, 422, /unknown field "bogus"/],
      ];
      for (const [body, status, re] of cases) {
        const r = await h.request('PATCH', `/api/posts/${id}`, { body });
        expect(r.status, JSON.stringify(body)).toBe(status);
        expect(r.json.detail).toMatch(re);
      }
      expect((await h.request('PATCH', `/api/posts/${id}`)).status).toBe(422);
      expect((await h.request('PATCH', '/api/posts/999999', { body: { status: 'approved' } })).status).toBe(404);
      expect((await h.request('GET', '/api/posts/999999')).json).toEqual({ detail: 'Post 999999 not found' });
      expect((await h.request('GET', '/api/posts/nope')).status).toBe(422);
      expect((await h.request('PATCH', `/api/posts/${id}`, { raw: 'status=approved', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status).toBe(415);
      expect((await h.request('GET', `/api/posts/${id}`)).json.status).toBe('pending');
    });
    it('refuses to change a published post except its feedback', async () => {
      const id = ids[3]!;
      await h.sql.run("UPDATE posts SET status = 'published', published_at = ? WHERE id = ?", new Date().toISOString(), id);
      expect((await h.request('PATCH', `/api/posts/${id}`, { body: { status: 'approved' } })).status).toBe(409);
      expect((await h.request('PATCH', `/api/posts/${id}`, { body: { feedback: 'did well' } })).json.feedback).toBe('did well');
    });
    it('uploads, serves, replaces and removes an image', async () => {
      const id = ids[4]!;
      const mp = multipart('file', 'pic.png', 'image/png', PNG);
      const r = await h.request('POST', `/api/posts/${id}/image`, { raw: mp.body, headers: { 'content-type': mp.type } });
      expect(r.status).toBe(200);
      expect(r.json.message).toBe('Image uploaded');
      expect(r.json.image_url).toMatch(/^\/api\/uploads\/\d+-[0-9a-f]{32}\.png$/);
      expect((await h.request('GET', `/api/posts/${id}`)).json.image_url).toBe(r.json.image_url);
      const img = await fetch(h.url + r.json.image_url, { headers: { authorization: `Bearer ${await h.login()}` } });
      expect(img.status).toBe(200);
      expect(img.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await img.arrayBuffer()).equals(PNG)).toBe(true);
      expect((await fetch(h.url + r.json.image_url)).status).toBe(401);
      const r2 = await h.request('POST', `/api/posts/${id}/image`, { raw: multipart('image', 'x.bin', 'application/octet-stream', PNG).body, headers: { 'content-type': mp.type } });
      expect(r2.status).toBe(200);
      expect((await h.request('GET', r.json.image_url)).status).toBe(404); // the replaced file is gone
      expect((await h.request('DELETE', `/api/posts/${id}/image`)).status).toBe(204);
      expect((await h.request('GET', `/api/posts/${id}`)).json.image_url).toBeNull();
      expect((await h.request('DELETE', `/api/posts/${id}/image`)).status).toBe(404);
      expect((await h.request('GET', '/api/uploads/..%2F..%2Fdatabase%2Fpipeline.db')).status).toBe(404);
    });
    it('refuses bad uploads', async () => {
      const id = ids[5]!;
      const json = await h.request('POST', `/api/posts/${id}/image`, { body: { image: 'x' } });
      expect(json.status).toBe(415);
      const text = multipart('file', 'a.txt', 'text/plain', Buffer.from('hello, not an image'));
      expect((await h.request('POST', `/api/posts/${id}/image`, { raw: text.body, headers: { 'content-type': text.type } })).status).toBe(415);
      const svg = multipart('file', 'a.svg', 'image/svg+xml', PNG);
      expect((await h.request('POST', `/api/posts/${id}/image`, { raw: svg.body, headers: { 'content-type': svg.type } })).status).toBe(415);
      const big = multipart('file', 'big.png', 'image/png', Buffer.concat([PNG, Buffer.alloc(5000)]));
      const tooBig = await h.request('POST', `/api/posts/${id}/image`, { raw: big.body, headers: { 'content-type': big.type } });
      expect(tooBig.status).toBe(413);
      expect(tooBig.json.detail).toMatch(/larger than 4096/);
      const huge = multipart('file', 'huge.png', 'image/png', Buffer.concat([PNG, Buffer.alloc(200_000)]));
      expect((await h.request('POST', `/api/posts/${id}/image`, { raw: huge.body, headers: { 'content-type': huge.type } })).status).toBe(413);
      const other = multipart('document', 'a.png', 'image/png', PNG);
      expect((await h.request('POST', `/api/posts/${id}/image`, { raw: other.body, headers: { 'content-type': other.type } })).status).toBe(422);
      expect((await h.request('POST', `/api/posts/${id}/image`, { raw: 'garbage', headers: { 'content-type': 'multipart/form-data' } })).status).toBe(400);
      const ok = multipart('file', 'a.png', 'image/png', PNG);
      expect((await h.request('POST', '/api/posts/999999/image', { raw: ok.body, headers: { 'content-type': ok.type } })).status).toBe(404);
      expect((await h.request('GET', `/api/posts/${id}`)).json.image_url).toBeNull();
    });
    it('records manual metrics with history', async () => {
      const id = ids[6]!;
      const m = await h.request('POST', `/api/posts/${id}/metrics`, { body: { impressions: 1000, likes: 30, retweets: 5, replies: 5 } });
      expect(m.status).toBe(200);
      expect(m.json).toMatchObject({ post_id: id, impressions: 1000, likes: 30, retweets: 5, replies: 5, engagement_rate: 4, source: 'manual' });
      await h.request('POST', `/api/posts/${id}/metrics`, { body: { likes: 40 } });
      const g = await h.request('GET', `/api/posts/${id}/metrics`);
      expect(g.json).toMatchObject({ impressions: 1000, likes: 40, engagement_rate: 5 });
      expect(g.json.history.map((x: { likes: number }) => x.likes)).toEqual([40, 30]);
      for (const body of [{}, { likes: -1 }, { likes: 1.5 }, { likes: '3' }, { views: 3 }]) {
        expect((await h.request('POST', `/api/posts/${id}/metrics`, { body })).status, JSON.stringify(body)).toBe(422);
      }
      expect((await h.request('GET', '/api/posts/999999/metrics')).status).toBe(404);
      expect((await h.request('POST', '/api/posts/999999/metrics', { body: { likes: 1 } })).status).toBe(404);
    });
    it('needs a platform token to fetch metrics or publish', async () => {
      const f = await h.request('POST', '/api/metrics/fetch');
      expect(f.status).toBe(400);
      expect(f.json.detail).toMatch(/X API token is not configured/);
      const id = ids[7]!;
      expect((await h.request('POST', `/api/posts/${id}/publish`)).status).toBe(409); // pending
      await h.request('PATCH', `/api/posts/${id}`, { body: { status: 'approved' } });
      expect((await h.request('POST', `/api/posts/${id}/publish`)).status).toBe(400);
    });
  });

  describe('analytics, dashboard, activity', () => {
    it('aggregates published posts by period and category', async () => {
      const now = Date.now();
      const [a, b, c] = await seedPosts(h, 3, 'batch-analytics', 'analytics-cat');
      const pub = (...v: unknown[]) => h.sql.run("UPDATE posts SET status = 'published', published_at = ?, impressions = ?, likes = ?, retweets = ?, replies = ? WHERE id = ?", ...v);
      await pub(new Date(now - 2 * 86_400_000).toISOString(), 1000, 50, 10, 5, a);
      await pub(new Date(now - 20 * 86_400_000).toISOString(), 500, 10, 0, 0, b);
      await pub(new Date(now - 90 * 86_400_000).toISOString(), 500, 0, 0, 0, c);
      const base = await h.request('GET', '/api/analytics?period=all');
      const before = base.json; // includes the post published in the posts tests (no metrics)
      expect(before.period).toBe('all');
      expect(before.total_impressions).toBe(2000);
      const d7 = (await h.request('GET', '/api/analytics?period=7d')).json;
      expect(d7).toMatchObject({ total_impressions: 1000, total_likes: 50, total_reposts: 10, total_replies: 5, engagement_rate: 6.5, period: '7d' });
      const d30 = (await h.request('GET', '/api/analytics')).json;
      expect(d30.period).toBe('30d');
      expect(d30.total_impressions).toBe(1500);
      expect(d30.engagement_rate).toBe(5);
      expect((await h.request('GET', '/api/analytics?period=1y')).status).toBe(422);
      const cats = (await h.request('GET', '/api/analytics/categories?period=all')).json as { category: string; post_count: number; period: string }[];
      expect(cats.find((x) => x.category === 'analytics-cat')).toMatchObject({ post_count: 3, total_impressions: 2000, period: 'all' });
      expect(cats.find((x) => x.category === 'Other')).toMatchObject({ post_count: 0, engagement_rate: 0 });
      expect((await h.request('GET', '/api/analytics/categories?period=week')).status).toBe(422);
    });
    it('reports dashboard stats and recent activity', async () => {
      const s = (await h.request('GET', '/api/dashboard/stats')).json;
      expect(Object.keys(s).sort()).toEqual(['pending_review', 'posts_this_month', 'posts_today', 'published_total', 'sources_healthy', 'sources_total']);
      expect(s.posts_today).toBe(31);
      expect(s.published_total).toBe(4);
      const a = await h.request('GET', '/api/activity');
      expect(a.json).toHaveLength(10);
      expect(a.json[0].id).toBeGreaterThan(a.json[1].id);
      expect((await h.request('GET', '/api/activity?limit=2')).json).toHaveLength(2);
      for (const q of ['limit=0', 'limit=101', 'limit=abc']) expect((await h.request('GET', `/api/activity?${q}`)).status).toBe(422);
    });
  });

  describe('proposals', () => {
    it('generates from evidence, approves into a style version, and refuses double decisions', async () => {
      h.gateway!.responder = () =>
        'Here you go:\n```json\n' +
        JSON.stringify({
          proposals: [
            { title: 'Use threads', rationale: 'long posts do better', evidence: ['post 1: 6.5%'], changes: { thread_preference: false, tone: 'curious' } },
            { title: 'Nothing', changes: { tone: 'curious' } },
            { title: 'Bad', changes: { hashtag_policy: 'sometimes' } },
            { title: 'Topics', changes: { topics: ['Rust', 'Databases'] } },
          ],
        }) +
        '\n```';
      const g = await h.request('POST', '/api/proposals/generate');
      expect(g.status).toBe(201);
      expect(g.json.proposals).toHaveLength(3);
      expect(g.json.dropped.map((d: { reason: string }) => d.reason)).toEqual(['"hashtag_policy" must be "always" or "never"']);
      const prompt = h.gateway!.requests.at(-1)!.messages[0]!.content;
      expect(prompt).toMatch(/Best performing posts/);
      expect(prompt).toMatch(/6.5% engagement/);
      const list = (await h.request('GET', '/api/proposals')).json as { id: number; title: string; status: string }[];
      expect(list[0]!.id).toBeGreaterThan(list[1]!.id);
      const first = list.find((p) => p.title === 'Use threads')!;
      const one = await h.request('GET', `/api/proposals/${first.id}`);
      expect(one.json).toMatchObject({ type: 'style', status: 'pending', proposed_value: { thread_preference: false, tone: 'curious' }, current_value: { thread_preference: true, tone: 'witty' } });
      const ok = await h.request('PATCH', `/api/proposals/${first.id}`, { body: { status: 'approved' } });
      expect(ok.json.status).toBe('approved');
      expect(ok.json.style_version_id).toBeGreaterThan(3);
      const style = (await h.request('GET', '/api/style')).json;
      expect(style).toMatchObject({ tone: 'curious', thread_preference: false, origin: `proposal:${first.id}` });
      expect((await h.request('PATCH', `/api/proposals/${first.id}`, { body: { status: 'rejected' } })).status).toBe(409);
      const second = list.find((p) => p.title === 'Topics')!;
      expect((await h.request('PATCH', `/api/proposals/${second.id}`, { body: { status: 'rejected' } })).json.status).toBe('rejected');
      expect((await h.request('GET', '/api/style')).json.topics).toEqual(['Rust', 'SQLite']);
      expect((await h.request('GET', '/api/proposals?status=pending')).json).toHaveLength(1);
      expect((await h.request('PATCH', `/api/proposals/${second.id}`, { body: { status: 'pending' } })).status).toBe(422);
      expect((await h.request('PATCH', '/api/proposals/9999', { body: { status: 'approved' } })).status).toBe(404);
      expect((await h.request('GET', '/api/proposals/9999')).status).toBe(404);
      expect((await h.request('GET', '/api/proposals?status=nope')).status).toBe(422);
    });
    it('answers 502 when the model fails and keeps no partial data', async () => {
      const before = (await h.request('GET', '/api/proposals')).json.length;
      h.gateway!.responder = () => {
        throw Object.assign(new Error('upstream exploded'), { status: 500 });
      };
      const r = await h.request('POST', '/api/proposals/generate');
      expect(r.status).toBe(502);
      expect(r.json.detail).toMatch(/generating proposals through model "fake\/model-1" failed: upstream exploded/);
      h.gateway!.responder = () => 'I cannot answer in JSON, sorry.';
      const r2 = await h.request('POST', '/api/proposals/generate');
      expect(r2.status).toBe(201);
      expect(r2.json).toMatchObject({ proposals: [], dropped: [{ index: -1, reason: 'model answer is not valid JSON' }] });
      expect((await h.request('GET', '/api/proposals')).json.length).toBe(before);
    });
  });

  describe('bad input on every route', () => {
    const validBodies: Record<string, unknown> = {
      'PATCH /api/posts/:id': { status: 'approved' },
      'POST /api/posts/:id/metrics': { likes: 1 },
      'PUT /api/sources/:id': { name: 'x' },
      'PATCH /api/sources/:id': { name: 'x' },
      'PUT /api/categories/:id': { name: 'zz-unique' },
      'PATCH /api/categories/:id': { name: 'zz-unique' },
      'PATCH /api/proposals/:id': { status: 'approved' },
    };
    it('answers 404 for unknown ids and 422 for ids that are not integers', async () => {
      for (const route of h.instance.router.routes()) {
        // The web console's assets are not part of the API.
        if (!/:/.test(route.pattern) || route.meta.console) continue;
        const key = `${route.method} ${route.pattern}`;
        const unknown = route.pattern.replace(/:id\b/, '987654').replace(/:batch_id\b/, 'no-such-batch').replace(/:name\b/, 'no-such-file.png');
        const body = validBodies[key];
        const opts = body === undefined ? {} : { body };
        const r = route.pattern.endsWith('/image') && route.method === 'POST'
          ? await h.request('POST', unknown, { raw: multipart('file', 'a.png', 'image/png', PNG).body, headers: { 'content-type': multipart('file', 'a.png', 'image/png', PNG).type } })
          : await h.request(route.method, unknown, opts);
        expect(r.status, key).toBe(404);
        expect(typeof r.json?.detail, key).toBe('string');
        if (/:id\b/.test(route.pattern)) {
          const bad = await h.request(route.method, route.pattern.replace(/:id\b/, 'abc'), opts);
          expect(bad.status, `${key} with abc`).toBe(422);
        }
      }
    });
    it('answers 415 for a wrong content type and 422 for a body that is not an object on every JSON route', async () => {
      const jsonRoutes = [
        ['POST', '/api/auth/login'],
        ['PATCH', `/api/posts/1`],
        ['POST', `/api/posts/1/metrics`],
        ['POST', '/api/sources'],
        ['PUT', '/api/sources/1'],
        ['PATCH', '/api/sources/1'],
        ['POST', '/api/categories'],
        ['PUT', '/api/categories/1'],
        ['PATCH', '/api/categories/1'],
        ['PUT', '/api/style'],
        ['PATCH', '/api/style'],
        ['PATCH', '/api/proposals/1'],
        ['PUT', '/api/settings/model'],
      ] as const;
      for (const [m, p] of jsonRoutes) {
        const ct = await h.request(m, p, { raw: '<xml/>', headers: { 'content-type': 'application/xml' } });
        expect(ct.status, `${m} ${p} xml`).toBe(415);
        for (const raw of ['[]', '"text"', '42', 'null']) {
          const r = await h.request(m, p, { raw, headers: { 'content-type': 'application/json' } });
          expect(r.status, `${m} ${p} ${raw}`).toBe(422);
          expect(r.json.detail, `${m} ${p} ${raw}`).toMatch(/body/);
        }
        const broken = await h.request(m, p, { raw: '{"a":', headers: { 'content-type': 'application/json' } });
        expect(broken.status, `${m} ${p} broken`).toBe(400);
        expect(broken.json.detail).toMatch(/invalid JSON/);
      }
    });
  });

  describe('OpenAPI', () => {
    it('describes every route', async () => {
      const r = await h.request('GET', '/api/openapi.json');
      expect(r.status).toBe(200);
      expect(r.json.openapi).toBe('3.1.0');
      const paths = r.json.paths as Record<string, Record<string, { security: unknown[]; responses: Record<string, unknown> }>>;
      for (const route of h.instance.router.routes()) {
        if (route.meta.console) continue;
        const p = route.pattern.replace(/:([A-Za-z_]\w*)/g, '{$1}');
        expect(paths[p]?.[route.method.toLowerCase()], `${route.method} ${route.pattern}`).toBeDefined();
      }
      expect(paths['/api/auth/login']!.post!.security).toEqual([]);
      expect(paths['/api/posts/{id}']!.patch!.responses['404']).toBeDefined();
      expect(paths['/api/posts']!.get!.security).toEqual([{ bearer: [] }]);
    });
  });
});

describe('pipeline API on the control socket', () => {
  it('trusts the socket: no token needed', async () => {
    const h = await startPipeline({ viaSocket: true });
    try {
      expect((await h.request('GET', '/api/posts', { token: false })).status).toBe(200);
      expect((await h.request('GET', '/api/openapi.json', { token: false })).status).toBe(200);
    } finally {
      await h.close();
    }
  });
  it('answers 503 on login when no password is configured', async () => {
    const h = await startPipeline({ config: { 'owner-password': undefined } });
    try {
      const r = await h.request('POST', '/api/auth/login', { body: { password: 'x' }, token: false });
      expect(r.status).toBe(503);
      expect(r.json.detail).toMatch(/no owner password is configured/);
    } finally {
      await h.close();
    }
  });
});
