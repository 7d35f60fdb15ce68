import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeFeeds, startFakeFeeds } from '../fakes/rss.js';
import { type Harness, startPipeline } from './harness.js';

/** Feed URLs a user adds are fetched only under the SSRF policy (no egress.allow here). */
describe('pipeline sources under the SSRF policy', () => {
  let feeds: FakeFeeds;
  let h: Harness;
  beforeAll(async () => {
    feeds = await startFakeFeeds();
  });
  afterAll(async () => {
    await feeds.close();
  });
  afterEach(async () => {
    await h?.close();
  });

  it('refuses a feed URL naming a private address when it is added (422, naming the address and egress.allow)', async () => {
    h = await startPipeline({ allow: [] });
    await h.login();
    for (const url of ['http://127.0.0.1:8080/feed', 'http://10.0.0.1/rss', 'http://169.254.169.254/latest/meta-data/', 'http://[::ffff:127.0.0.1]/feed', 'http://2130706433/feed', feeds.url('/rss.xml')]) {
      const r = await h.request('POST', '/api/sources', { body: { name: 'x', url, source_type: 'rss' } });
      expect(r.status, url).toBe(422);
      expect(r.json.detail, url).toMatch(/^body\/url: URL is not allowed or not reachable: private address \S+ is not in egress\.allow \(to allow it, add \S+ to egress\.allow in ctl\.yaml and reload with SIGHUP\)$/);
    }
  });

  it('refuses at the run a name that resolves to a private address, naming it', async () => {
    h = await startPipeline({ allow: [] });
    await h.login();
    const port = new URL(feeds.url('/rss.xml')).port;
    const r = await h.request('POST', '/api/sources', { body: { name: 'Local', url: `http://localhost:${port}/rss.xml`, source_type: 'rss' } });
    expect(r.status).toBe(201);
    const run = await h.request('POST', '/api/pipeline/run');
    const local = run.json.sources.find((s: { name: string }) => s.name === 'Local');
    expect(local).toMatchObject({ healthy: false });
    expect(local.error).toMatch(/^URL is not allowed or not reachable: localhost resolves to private address (127\.0\.0\.1|::1) is not in egress\.allow/);
    expect(feeds.requests ?? []).toEqual([]);
  });

  it('fetches an intranet feed the operator allows', async () => {
    h = await startPipeline({ allow: ['127.0.0.1'] });
    await h.login();
    const r = await h.request('POST', '/api/sources', { body: { name: 'Blog', url: feeds.url('/rss.xml'), source_type: 'rss' } });
    expect(r.status).toBe(201);
  });
});
