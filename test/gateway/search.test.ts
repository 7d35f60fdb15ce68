/**
 * /v1/search against loopback fakes of SearXNG, Brave, Tavily, Exa and Serper: each answer
 * normalised; identical concurrent queries coalesced into one call; the TTL cache; analytics; per-key
 * policies; bad bodies and provider failures in OpenAI's error shape.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ManualClock } from '../../src/http/clock.js';
import { startGateway, type GatewayHarness } from './harness.js';

let fakes: http.Server;
let port = 0;
const calls: { kind: string; method: string; url: string; headers: http.IncomingHttpHeaders; body: any }[] = [];
let delayMs = 0;
let failWith: { status: number; retryAfter?: string } | undefined;

beforeAll(async () => {
  fakes = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const kind = req.url!.split('/')[1]!;
      const body = raw ? JSON.parse(raw) : undefined;
      calls.push({ kind, method: req.method!, url: req.url!, headers: req.headers, body });
      const send = (v: unknown) => setTimeout(() => {
        if (failWith) return void res.writeHead(failWith.status, { 'content-type': 'application/json', ...(failWith.retryAfter ? { 'retry-after': failWith.retryAfter } : {}) }).end('{"error":"quota gone"}');
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(v));
      }, delayMs);
      const u = new URL(req.url!, 'http://x');
      if (kind === 'searxng') return send({ results: [{ title: 'S1', url: 'https://a.example/1', content: `sx ${u.searchParams.get('q')}`, publishedDate: '2030-01-01', score: 2.5 }, { title: 'S2', url: 'https://a.example/2', content: 'two' }] });
      if (kind === 'brave') return send(u.pathname.includes('/news/') ? { results: [{ title: 'BN', url: 'https://b.example/n', description: 'news', age: '1 day ago' }] } : { web: { results: [{ title: 'B1', url: 'https://b.example/1', description: 'brave one' }] } });
      if (kind === 'tavily') return send({ results: [{ title: 'T1', url: 'https://t.example/1', content: 'tavily one', score: 0.9 }] });
      if (kind === 'exa') return send({ results: [{ title: 'E1', url: 'https://e.example/1', text: 'exa text', publishedDate: '2030-01-02T00:00:00Z', score: 0.7 }] });
      if (kind === 'serper') return send(u.pathname === '/serper/news' ? { news: [{ title: 'SN', link: 'https://s.example/n', snippet: 'serper news', date: '2 hours ago' }] } : { organic: [{ title: 'SP1', link: 'https://s.example/1', snippet: 'serper one' }, { title: 'no link' }] });
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((r) => fakes.listen(0, '127.0.0.1', () => r()));
  port = (fakes.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((r) => fakes.close(r));
});

const clock = new ManualClock(Date.parse('2030-01-02T12:00:00Z'));
let gw: GatewayHarness;
const KEY = 'sk-gw-search-aaaaaaaa';
const LIMITED = 'sk-gw-search-bbbbbbbb';
const OFF = 'sk-gw-search-cccccccc';

beforeAll(async () => {
  const base = (k: string) => `http://127.0.0.1:${port}/${k}`;
  gw = await startGateway({
    clock,
    yaml: `providers: []
keys:
  - {name: app, key: "${KEY}", models: ["*"]}
  - {name: limited, key: "${LIMITED}", models: ["*"]}
  - {name: off, key: "${OFF}", models: ["*"]}
search:
  providers:
    - {id: sx, kind: searxng, base_url: "${base('searxng')}"}
    - {id: br, kind: brave, base_url: "${base('brave')}", api_key: kb, default: true}
    - {id: tv, kind: tavily, base_url: "${base('tavily')}", api_key: kt}
    - {id: ex, kind: exa, base_url: "${base('exa')}", api_key: ke}
    - {id: sp, kind: serper, base_url: "${base('serper')}", api_key: ks}
  cache_ttl_seconds: 60
  policies:
    limited: {providers: [sx], max_results: 1}
    off: {enabled: false}
`,
  });
});
afterAll(async () => {
  await gw.close();
});
beforeEach(() => {
  calls.length = 0;
  delayMs = 0;
  failWith = undefined;
  clock.advance(3_600_000); // past every cached answer
});

const search = (body: Record<string, unknown>, key = KEY) => gw.req('POST', '/v1/search', body, { authorization: `Bearer ${key}` }, { tcp: true });

describe('web search', () => {
  it('lists the providers and what they support', async () => {
    const r = await gw.req('GET', '/v1/search', undefined, { authorization: `Bearer ${KEY}` }, { tcp: true });
    expect(r.json.data.map((p: { id: string; kind: string; default: boolean }) => [p.id, p.kind, p.default])).toEqual([
      ['sx', 'searxng', false],
      ['br', 'brave', true],
      ['tv', 'tavily', false],
      ['ex', 'exa', false],
      ['sp', 'serper', false],
    ]);
    expect(r.json.data[0].capabilities).toMatchObject({ search_types: ['web', 'news'], time_range: true });
  });

  it('normalises every kind, with its credentials and parameters', async () => {
    const one = async (provider: string, extra: Record<string, unknown> = {}) => (await search({ query: 'harbour ferries', provider, ...extra })).json;
    expect((await one('sx', { time_range: 'week' })).results).toEqual([
      { title: 'S1', url: 'https://a.example/1', snippet: 'sx harbour ferries', published_at: '2030-01-01', score: 2.5 },
      { title: 'S2', url: 'https://a.example/2', snippet: 'two' },
    ]);
    expect(calls.at(-1)!.url).toMatch(/format=json/);
    expect(calls.at(-1)!.url).toMatch(/time_range=week/);
    expect((await one('br')).results).toEqual([{ title: 'B1', url: 'https://b.example/1', snippet: 'brave one' }]);
    expect(calls.at(-1)!.headers['x-subscription-token']).toBe('kb');
    expect((await one('br', { search_type: 'news' })).results[0]).toMatchObject({ title: 'BN', published_at: '1 day ago' });
    expect((await one('tv', { max_results: 3 })).results).toEqual([{ title: 'T1', url: 'https://t.example/1', snippet: 'tavily one', score: 0.9 }]);
    expect(calls.at(-1)!.body).toMatchObject({ query: 'harbour ferries', max_results: 3, topic: 'general' });
    expect(calls.at(-1)!.headers.authorization).toBe('Bearer kt');
    expect((await one('ex', { time_range: 'day' })).results[0]).toMatchObject({ title: 'E1', snippet: 'exa text', published_at: '2030-01-02T00:00:00Z' });
    expect(calls.at(-1)!.headers['x-api-key']).toBe('ke');
    expect(calls.at(-1)!.body.startPublishedDate).toBe(new Date(clock.now() - 86_400_000).toISOString());
    expect((await one('sp')).results).toEqual([{ title: 'SP1', url: 'https://s.example/1', snippet: 'serper one' }]);
    expect((await one('sp', { search_type: 'news', time_range: 'month' })).results[0]).toMatchObject({ title: 'SN', url: 'https://s.example/n' });
    expect(calls.at(-1)!.body).toMatchObject({ q: 'harbour ferries', tbs: 'qdr:m' });
    // No provider named: the default one.
    expect((await search({ query: 'x' })).json.provider).toBe('br');
  });

  it('coalesces identical concurrent queries into one call and caches the answer for the TTL', async () => {
    const analytics = async () => (await gw.req('GET', '/v1/search/analytics', undefined, { authorization: `Bearer ${KEY}` }, { tcp: true })).json;
    const before = (await analytics()).providers.tv;
    delayMs = 80;
    const all = await Promise.all(Array.from({ length: 10 }, () => search({ query: 'same  question', provider: 'tv' })));
    expect(all.every((r) => r.status === 200)).toBe(true);
    expect(calls).toHaveLength(1);
    const cached = await search({ query: 'same question', provider: 'tv' });
    expect(cached.json.cached).toBe(true);
    expect(calls).toHaveLength(1);
    clock.advance(61_000);
    expect((await search({ query: 'same question', provider: 'tv' })).json.cached).toBe(false);
    expect(calls).toHaveLength(2);
    const a = await analytics();
    const d = (f: string) => a.providers.tv[f] - before[f];
    expect([d('requests'), d('upstream_calls'), d('coalesced'), d('cache_hits'), d('errors')]).toEqual([12, 2, 9, 1, 0]);
    expect(a.providers.tv.kind).toBe('tavily');
    expect(a.providers.tv.avg_latency_ms).toBeGreaterThan(0);
    expect(a.providers.tv.p95_latency_ms).toBeGreaterThan(0);
    expect(a.cache).toMatchObject({ ttl_seconds: 60 });
    expect(a.cache.hits).toBeGreaterThanOrEqual(1);
  });

  it('per-key policy: search off, providers limited, max_results capped', async () => {
    const off = await search({ query: 'x' }, OFF);
    expect(off.status).toBe(403);
    expect(off.json.error.message).toBe('API key "off" may not use web search');
    const limited = await search({ query: 'x', max_results: 10 }, LIMITED);
    expect(limited.json.provider).toBe('sx');
    expect(limited.json.results).toHaveLength(1);
    expect((await search({ query: 'x', provider: 'br' }, LIMITED)).status).toBe(403);
  });

  it('bad bodies are 400s; provider failures are 502, and 429 keeps its Retry-After', async () => {
    for (const [body, msg] of [
      [{}, /query is required/],
      [{ query: 'x', max_results: 0 }, /max_results must be an integer from 1 to 50/],
      [{ query: 'x', search_type: 'images' }, /search_type must be web or news/],
      [{ query: 'x', time_range: 'hour' }, /time_range must be one of/],
      [{ query: 'x', provider: 'nope' }, /search provider nope is not configured/],
    ] as const) {
      const r = await search(body);
      expect(r.status).toBe(400);
      expect(r.json.error.message).toMatch(msg);
    }
    failWith = { status: 401 };
    const bad = await search({ query: 'fail', provider: 'ex' });
    expect(bad.status).toBe(502);
    expect(bad.json.error.message).toBe('search provider ex answered HTTP 401: quota gone');
    failWith = { status: 429, retryAfter: '17' };
    const limited = await search({ query: 'fail2', provider: 'ex' });
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('17');
  });
});
