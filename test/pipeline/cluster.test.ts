/**
 * Two pipelines on one PostgreSQL database, as two daemons with the same `storage.postgres`: what one
 * writes the other reads; one pipeline run at a time across both; a due post is published once,
 * by the daemon holding the publishing lease.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/http/clock.js';
import { PostsRepo } from '../../src/pipeline/data/posts.js';
import { startFakeXApi, type FakeXApi } from '../fakes/x-api.js';
import { PG_BIN, PostgresServer } from '../helpers/postgres-server.js';
import { until } from '../helpers/until.js';
import { startPipeline, type Harness } from './harness.js';

describe.skipIf(!PG_BIN)('pipeline: two daemons on one PostgreSQL', () => {
  let pg: PostgresServer;
  let x: FakeXApi;
  let feed: http.Server;
  let a: Harness;
  let b: Harness;
  const clock = new ManualClock(Date.parse('2030-05-01T08:00:00Z'));
  let url = '';

  beforeAll(async () => {
    [pg, x] = await Promise.all([PostgresServer.start(), startFakeXApi('secret-token')]);
    // A feed that takes a second to answer: a run stays in progress that long.
    feed = http.createServer((_req, res) => setTimeout(() => res.writeHead(200, { 'content-type': 'application/rss+xml' }).end('<rss><channel></channel></rss>'), 1000));
    await new Promise<void>((r) => feed.listen(0, '127.0.0.1', r));
    const postgresUrl = (url = await pg.createDatabase('pipeline_cluster'));
    const config = { 'x-api-base-url': x.baseUrl, 'x-api-token': 'secret-token', 'publish-interval': '1h' };
    a = await startPipeline({ postgresUrl, clock, config });
    b = await startPipeline({ postgresUrl, clock, config });
    await Promise.all([a.login(), b.login()]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await new Promise((r) => feed?.close(r));
    await x?.close();
    await pg?.destroy();
  });

  it('reads on one daemon what the other wrote', async () => {
    expect(a.sql.dialect).toBe('postgres');
    const src = await a.request('POST', '/api/sources', { body: { name: 'Slow feed', url: `http://127.0.0.1:${(feed.address() as AddressInfo).port}/feed`, source_type: 'rss', category: 'Tech' } });
    expect(src.status, src.text).toBe(201);
    expect((await b.request('GET', '/api/sources')).json.map((s: { name: string }) => s.name)).toEqual(['Slow feed']);
    expect((await b.request('GET', '/api/categories')).json.map((c: { name: string }) => c.name)).toEqual(['Tech']);
    expect((await b.request('PUT', '/api/settings/model', { body: { model_id: 'fake/model-2' } })).status).toBe(200);
    expect((await a.request('GET', '/api/settings/model')).json).toMatchObject({ model_id: 'fake/model-2', source: 'database' });
  });

  it('runs one pipeline at a time across both daemons', async () => {
    const first = await a.request('POST', '/api/pipeline/run?wait=false');
    expect(first.status, first.text).toBe(202);
    const second = await b.request('POST', '/api/pipeline/run?wait=false');
    expect(second.status).toBe(409);
    expect(second.text).toMatch(/another daemon/);
    await until('the run on the first daemon ends', async () => (await a.request('GET', '/api/pipeline/status')).json.running === false, 10_000);
    const third = await b.request('POST', '/api/pipeline/run?wait=false');
    expect(third.status, third.text).toBe(202);
    await until('the run on the second daemon ends', async () => (await b.request('GET', '/api/pipeline/status')).json.running === false, 10_000);
    const runs = (await a.request('GET', '/api/pipeline/runs')).json as { batch_id: string; status: string }[];
    expect(runs.map((r) => r.status)).toEqual(['completed', 'completed']);
  });

  it('a run left by a daemon that lost the database is marked interrupted when another daemon runs', async () => {
    const c = await startPipeline({ postgresUrl: url, clock, config: { 'x-api-base-url': x.baseUrl, 'x-api-token': 'secret-token', 'publish-interval': '1h' } });
    try {
      await c.login();
      expect((await c.request('POST', '/api/pipeline/run?wait=false')).status).toBe(202);
      // As if its process died: the connection (and with it the run lease) is gone mid-run.
      await c.postgres!.close();
      const next = await b.request('POST', '/api/pipeline/run?wait=false');
      expect(next.status, next.text).toBe(202);
      await until('the new run ends', async () => (await b.request('GET', '/api/pipeline/status')).json.running === false, 10_000);
      const runs = (await b.request('GET', '/api/pipeline/runs')).json as { status: string }[];
      expect(runs[0]!.status).toBe('completed');
      expect(runs[1]!.status).toBe('interrupted');
    } finally {
      await c.close().catch(() => undefined);
    }
  });

  it('serves an image uploaded through one daemon from the other, and forgets it everywhere when removed', async () => {
    const [id] = await new PostsRepo(a.sql, clock).insertMany([
      { batch_id: 'b', content: 'With a picture', thread: [], category: 'Tech', source_id: null, source_name: null, source_title: null, source_url: null, model: null },
    ]);
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(300, 9)]);
    const bnd = '----clusterboundary';
    const body = Buffer.concat([Buffer.from(`--${bnd}\r\nContent-Disposition: form-data; name="file"; filename="p.png"\r\nContent-Type: image/png\r\n\r\n`), png, Buffer.from(`\r\n--${bnd}--\r\n`)]);
    const up = await a.request('POST', `/api/posts/${id}/image`, { raw: body, headers: { 'content-type': `multipart/form-data; boundary=${bnd}` } });
    expect(up.status, up.text).toBe(200);
    const fromB = await fetch(b.url + up.json.image_url, { headers: { authorization: `Bearer ${await b.login()}` } });
    expect(fromB.status).toBe(200);
    expect(Buffer.from(await fromB.arrayBuffer()).equals(png)).toBe(true);
    expect((await b.request('DELETE', `/api/posts/${id}/image`)).status).toBe(204);
    expect((await fetch(a.url + up.json.image_url, { headers: { authorization: `Bearer ${await a.login()}` } })).status).toBe(404);
  });

  it('publishes a due post once, from the daemon holding the publishing lease', async () => {
    const [id] = await new PostsRepo(a.sql, clock).insertMany([
      { batch_id: 'b', content: 'Published once', thread: [], category: 'Tech', source_id: null, source_name: null, source_title: null, source_url: null, model: null },
    ]);
    expect((await a.request('PATCH', `/api/posts/${id}`, { body: { status: 'approved', scheduled_for: '2030-05-01T07:00:00Z' } })).status).toBe(200);
    const published = await Promise.all([a.handle.publishDue(), b.handle.publishDue(), a.handle.publishDue(), b.handle.publishDue()]);
    expect(published.reduce((n, k) => n + k, 0)).toBe(1);
    expect(x.tweets.filter((t) => t.text === 'Published once')).toHaveLength(1);
    expect((await b.request('GET', `/api/posts/${id}`)).json.status).toBe('published');
  });

  it('answers 503 at once while the database is away, and serves again when it is back', async () => {
    await pg.stop();
    try {
      const t0 = Date.now();
      const r = await a.request('GET', '/api/sources');
      expect(r.status).toBe(503);
      expect(Date.now() - t0).toBeLessThan(3000);
      // What needs no database still answers.
      expect((await a.request('GET', '/api/openapi.json')).status).toBe(200);
    } finally {
      await pg.start();
    }
    await until('sources again', async () => (await a.request('GET', '/api/sources')).status === 200, 15_000);
  });
});
