/**
 * End to end through the real daemon: the pipeline drafts through the gateway's in-process chat,
 * whose provider is the mock LLM upstream (DIR/gateway.yaml); sources are the HN and feed fakes;
 * publishing and metrics go to the X API fake. Driven by the real CLI over the control socket,
 * and over TCP with a bearer token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { type FakeHackerNews, startFakeHackerNews } from '../fakes/hackernews.js';
import { type FakeFeeds, startFakeFeeds } from '../fakes/rss.js';
import { type FakeXApi, startFakeXApi } from '../fakes/x-api.js';
import { verifyPassword } from '../../src/pipeline/auth/password.js';

const PASSWORD = 'e2e-owner-password';
const drafts = (n: number) => JSON.stringify({ posts: Array.from({ length: n }, (_, i) => ({ item: i + 1, content: `Drafted by the mock model, post ${i + 1}`, thread: [] })) });

describe('pipeline in the daemon', () => {
  let d: TestDaemon;
  let llm: MockUpstream;
  let hn: FakeHackerNews;
  let feeds: FakeFeeds;
  let x: FakeXApi;

  beforeAll(async () => {
    [llm, hn, feeds, x] = await Promise.all([startLlmUpstream(), startFakeHackerNews(), startFakeFeeds(), startFakeXApi('e2e-x-token')]);
    llm.defaults = { text: drafts(3) };
    d = await startDaemon({
      files: {
        'gateway.yaml': `
providers:
  - {id: local, kind: openai, base_url: "${llm.baseUrl('openai')}", api_key: "sk-x-0123456789", models: [m1]}
aliases: {writer: local/m1}
`,
      },
      ctlYaml: {
        // The fake feeds listen on loopback: an intranet feed the operator allows.
        egress: { allow: ['127.0.0.1'] },
        pipeline: {
          'owner-password': PASSWORD,
          'hn-api-base-url': hn.baseUrl,
          'x-api-base-url': x.baseUrl,
          'x-api-token': 'e2e-x-token',
          'fetch-timeout': '3s',
          'batch-size': 3,
          'publish-interval': '100ms',
        },
      },
      env: { PIPELINE_MODEL: 'local/m1' },
    });
  });
  afterAll(async () => {
    await d?.cleanup();
    await Promise.all([llm?.close(), hn?.close(), feeds?.close(), x?.close()]);
  });

  it('runs the whole loop from the CLI: sources, run with progress, review, scheduled publishing, metrics', async () => {
    for (const args of [
      ['source', 'add', 'HN', '--type', 'hackernews', '--source-url', 'https://news.ycombinator.com/', '--category', 'tech'],
      ['source', 'add', 'Blog', '--type', 'rss', '--source-url', feeds.url('/rss.xml'), '--category', 'tech'],
      ['source', 'add', 'Atom', '--type', 'rss', '--source-url', feeds.url('/atom.xml')],
      ['source', 'add', 'Broken', '--type', 'rss', '--source-url', feeds.url('/garbage.xml')],
    ]) {
      const r = await d.cli(args);
      expect(r.code, r.stderr).toBe(0);
    }
    expect((await d.cli(['pipeline', 'model', 'get'])).stdout).toBe('local/m1 (env)\n');
    expect((await d.cli(['pipeline', 'model', 'set', 'writer'])).stdout).toBe('Model updated to writer\n');
    const style = await d.cli(['style', 'set', '--tone', 'plain', '--topics', 'Rust, SQLite', '--hashtags', 'never']);
    expect(style.code, style.stderr).toBe(0);
    expect(style.stdout).toMatch(/topics:\s+Rust, SQLite/);

    const run = await d.cli(['pipeline', 'run']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/run \S+ started/);
    expect(run.stderr).toMatch(/source Blog: ok, 3 items/);
    expect(run.stderr).toMatch(/source Broken: FAILED: not an RSS or Atom feed/);
    expect(run.stdout).toMatch(/posts:\s+3/);
    expect(run.stdout).toMatch(/sources healthy:\s+3\/4/);

    // The draft went through the gateway (alias resolved) to the mock upstream, JSON mode on.
    const upstream = llm.requests.filter((r) => r.path.includes('/chat/completions'));
    expect(upstream).toHaveLength(1);
    const body = upstream[0]!.body as { model: string; messages: { role: string; content: string }[]; response_format?: unknown };
    expect(body.model).toBe('m1');
    expect(JSON.stringify(body.messages)).toMatch(/Tone: plain/);
    expect(body.response_format).toEqual({ type: 'json_object' });

    const list = await d.cli(['-o', 'json', 'post', 'list', '--status', 'pending']);
    const posts = JSON.parse(list.stdout);
    expect(posts.total).toBe(3);
    const [first, second] = posts.items;
    expect(first.content).toMatch(/Drafted by the mock model/);

    const past = new Date(Date.now() - 60_000).toISOString();
    expect((await d.cli(['post', 'approve', String(first.id), '--schedule', past])).code).toBe(0);
    expect((await d.cli(['post', 'reject', String(second.id), '--feedback', 'too vague'])).stdout).toBe(`post ${second.id} rejected\n`);
    const bad = await d.cli(['post', 'approve', String(posts.items[2].id), '--schedule', 'soon']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/ISO 8601/);
    expect((await d.cli(['post', 'show', '999999'])).code).toBe(1);
    expect((await d.cli(['post', 'show', 'abc'])).code).toBe(2);

    let published: any;
    for (let i = 0; i < 100; i++) {
      published = (await d.request('pipeline', 'GET', `/api/posts/${first.id}`)).json;
      if (published.status === 'published') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(published.status).toBe('published');
    expect(x.tweets.find((t) => t.id === published.external_id)?.text).toBe(first.content);

    x.setMetrics(published.external_id, { impression_count: 500, like_count: 20, retweet_count: 3, reply_count: 2 });
    const fm = await d.cli(['post', 'fetch-metrics']);
    expect(fm.stdout).toBe('updated 1 of 1 published post(s)\n');
    const an = JSON.parse((await d.cli(['-o', 'json', 'pipeline', 'analytics', '--period', '7d'])).stdout);
    expect(an).toEqual({ post_count: 1, total_impressions: 500, total_likes: 20, total_reposts: 3, total_replies: 2, engagement_rate: 5, period: '7d' });
    const stats = JSON.parse((await d.cli(['-o', 'json', 'pipeline', 'stats'])).stdout);
    expect(stats).toMatchObject({ published_total: 1, pending_review: 1, sources_healthy: 3, sources_total: 4 });
  });

  it('drafts proposals through the gateway and applies an approved one', async () => {
    llm.enqueue({ text: JSON.stringify({ proposals: [{ title: 'Allow threads', rationale: 'r', evidence: ['post 1'], changes: { thread_preference: true } }] }) });
    const g = await d.cli(['-o', 'json', 'proposal', 'generate']);
    expect(g.code, g.stderr).toBe(0);
    const id = JSON.parse(g.stdout).proposals[0].id;
    expect((await d.cli(['proposal', 'list'])).stdout).toMatch(/Allow threads/);
    expect((await d.cli(['proposal', 'approve', String(id)])).stdout).toMatch(new RegExp(`proposal ${id} approved \\(style version \\d+\\)`));
    expect((await d.cli(['style', 'get'])).stdout).toMatch(/threads:\s+yes/);
    expect((await d.cli(['style', 'history'])).stdout).toMatch(new RegExp(`proposal:${id}`));
    expect((await d.cli(['proposal', 'approve', String(id)])).code).toBe(1);
  });

  it('needs a bearer token on TCP and rate-limits login', async () => {
    const base = await d.baseUrl('pipeline');
    expect((await fetch(`${base}/api/system/health`)).status).toBe(200);
    const anon = await fetch(`${base}/api/posts`);
    expect(anon.status).toBe(401);
    expect(await anon.json()).toEqual({ detail: 'Not authenticated' });
    const login = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: PASSWORD }) });
    expect(login.status).toBe(200);
    const { access_token } = (await login.json()) as { access_token: string };
    const authed = await fetch(`${base}/api/posts?page_size=1`, { headers: { authorization: `Bearer ${access_token}` } });
    expect(authed.status).toBe(200);
    // The CLI over TCP with the token.
    const viaUrl = await d.cli(['--url', base, 'post', 'list', '--page-size', '1'], { CTL_PIPELINE_TOKEN: access_token });
    expect(viaUrl.code, viaUrl.stderr).toBe(0);
    expect((await d.cli(['--url', base, 'post', 'list'])).code).toBe(1);
    const cliLogin = await d.cli(['--url', base, 'pipeline', 'login', '--password-stdin'], undefined, `${PASSWORD}\n`);
    expect(cliLogin.stdout.trim().split('.')).toHaveLength(3);
    // Default limit: 10 logins per 60 s per client; two were used above (fetch and the CLI).
    expect(login.headers.get('x-ratelimit-limit')).toBe('10');
    let limited = 0;
    for (let i = 0; i < 12; i++) {
      const r = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: 'wrong' }) });
      if (r.status === 429) limited++;
      else expect(r.status).toBe(401);
    }
    expect(limited).toBe(4);
  });

  it('keeps acknowledged writes across kill -9 and marks the interrupted run', async () => {
    const c = await d.request('pipeline', 'POST', '/api/categories', { name: 'durable' });
    expect(c.status).toBe(201);
    // A token issued before the crash: owner-password is given in clear, and start-up must not re-hash
    // it with a new salt (which revoked every token at each restart).
    const login = await d.request('pipeline', 'POST', '/api/auth/login', { password: PASSWORD });
    expect(login.status).toBe(200);
    llm.enqueue({ hang: true });
    const started = await d.request('pipeline', 'POST', '/api/pipeline/run?wait=false');
    expect(started.status).toBe(202);
    for (let i = 0; i < 100; i++) {
      if ((await d.request('pipeline', 'GET', '/api/pipeline/status')).json.run?.stage === 'drafting') break;
      await new Promise((r) => setTimeout(r, 30));
    }
    await d.kill9();
    await d.start();
    expect((await d.request('pipeline', 'GET', '/api/categories')).json.map((x: { name: string }) => x.name)).toContain('durable');
    const run = (await d.request('pipeline', 'GET', `/api/pipeline/runs/${started.json.batch_id}`)).json;
    expect(run).toMatchObject({ status: 'interrupted' });
    expect((await d.cli(['pipeline', 'model', 'get'])).stdout).toBe('writer (database)\n');
    const base = await d.baseUrl('pipeline');
    const authed = await fetch(`${base}/api/posts?page_size=1`, { headers: { authorization: `Bearer ${login.json.access_token}` } });
    expect(authed.status).toBe(200);
  });

  it('hashes a password for owner-password-hash', async () => {
    const r = await d.cli(['pipeline', 'hash-password', '--password-stdin'], undefined, 'hunter2\n');
    expect(r.code).toBe(0);
    expect(await verifyPassword('hunter2', r.stdout.trim())).toBe(true);
  });
});
