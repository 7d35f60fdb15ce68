/**
 * POST /v1/web/fetch: the built-in fetcher (readable markdown, text or HTML, under the SSRF policy)
 * and the pool's rules against loopback fakes of Firecrawl, Jina Reader and Tavily with scripted
 * 429/402/403/400/503 answers.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ManualClock } from '../../src/http/clock.js';
import { startGateway, type GatewayHarness } from './harness.js';

const ARTICLE = `<!doctype html><html><head><title>Harbour news</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<article><h1>The harbour reopens</h1><p>After three years of works, the old harbour of the town opened again on Monday, with room for two hundred boats and a new quay for the ferries.</p>
<p>The mayor thanked the workers, the divers and the neighbours for their patience during the long works, and promised a festival in the summer.</p></article>
<footer>© the town</footer></body></html>`;

type Script = { status: number; retryAfter?: string };
let site: http.Server;
let sitePort = 0;
let siteHits = 0;
let siteStatus = 200;
let fakes: http.Server;
let fakesPort = 0;
const queues: Record<string, Script[]> = { firecrawl: [], jina: [], tavily: [] };
const hits: Record<string, number> = { firecrawl: 0, jina: 0, tavily: 0 };

function listen(s: http.Server): Promise<number> {
  return new Promise((r) => s.listen(0, '127.0.0.1', () => r((s.address() as AddressInfo).port)));
}

beforeAll(async () => {
  site = http.createServer((req, res) => {
    siteHits++;
    if (siteStatus !== 200) return void res.writeHead(siteStatus, { 'content-type': 'text/plain' }).end('no');
    if (req.url === '/plain') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('just text');
    if (req.url === '/binary') return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.alloc(10));
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(ARTICLE);
  });
  sitePort = await listen(site);
  fakes = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const id = req.url!.split('/')[1]!;
      hits[id] = (hits[id] ?? 0) + 1;
      const s = queues[id]?.shift() ?? { status: 200 };
      if (req.headers.authorization !== `Bearer key-${id}`) return void res.writeHead(401).end('{"error":"bad key"}');
      if (s.status !== 200) return void res.writeHead(s.status, { 'content-type': 'application/json', ...(s.retryAfter ? { 'retry-after': s.retryAfter } : {}) }).end(JSON.stringify({ error: `${id} says ${s.status}` }));
      const json = (v: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(v));
      if (id === 'firecrawl') return json({ success: true, data: { markdown: `# from firecrawl: ${JSON.parse(body).url}`, metadata: { title: 'FC', sourceURL: JSON.parse(body).url } } });
      if (id === 'jina') return json({ code: 200, data: { title: 'JN', url: req.url!.slice('/jina/'.length), content: 'from jina' } });
      return json({ results: [{ url: JSON.parse(body).urls[0], raw_content: 'from tavily' }], failed_results: [] });
    });
  });
  fakesPort = await listen(fakes);
});
afterAll(async () => {
  await new Promise((r) => site.close(r));
  await new Promise((r) => fakes.close(r));
});

describe('built-in fetcher', () => {
  let gw: GatewayHarness;
  beforeAll(async () => {
    gw = await startGateway({ yaml: 'providers: []\n' });
    gw.egress.addMapping('203.0.113.20:80', `127.0.0.1:${sitePort}`);
  });
  afterAll(async () => {
    await gw.close();
  });
  const fetchPage = (body: unknown) => gw.req('POST', '/v1/web/fetch', body);

  it('turns the article of a page into markdown, text or HTML (navigation and footer left out)', async () => {
    const md = await fetchPage({ url: 'http://203.0.113.20/news' });
    expect(md.status, md.text).toBe(200);
    expect(md.json).toMatchObject({ url: 'http://203.0.113.20/news', title: 'Harbour news', format: 'markdown', provider: 'builtin' });
    expect(md.json.content).toMatch(/After three years of works/);
    expect(md.json.content).not.toMatch(/About|© the town/);
    const text = await fetchPage({ url: 'http://203.0.113.20/news', format: 'text' });
    expect(text.json.content).toMatch(/^.*The mayor thanked/m);
    expect(text.json.content).not.toMatch(/</);
    expect((await fetchPage({ url: 'http://203.0.113.20/news', format: 'html' })).json.content).toMatch(/<p>After three years/);
    expect((await fetchPage({ url: 'http://203.0.113.20/plain' })).json).toMatchObject({ content: 'just text', format: 'text' });
    const bin = await fetchPage({ url: 'http://203.0.113.20/binary' });
    expect(bin.status).toBe(415);
  });

  it('refuses private, loopback and link-local targets before connecting; bad bodies are 400', async () => {
    const before = siteHits;
    for (const url of [`http://127.0.0.1:${sitePort}/`, 'http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data/', 'http://[::1]/', 'http://[::ffff:127.0.0.1]/']) {
      const r = await fetchPage({ url });
      expect(r.status, url).toBe(400);
      expect(r.json.error.message, url).toMatch(/^URL is not allowed or not reachable: private address \S+ is not in egress\.allow \(to allow it, add \S+ to egress\.allow in ctl\.yaml/);
    }
    expect(siteHits).toBe(before);
    expect((await fetchPage({ url: 'ftp://203.0.113.20/' })).json.error.message).toBe('url must be http or https');
    expect((await fetchPage({})).json.error.message).toMatch(/url is required/);
    expect((await fetchPage({ url: 'http://203.0.113.20/', format: 'pdf' })).json.error.message).toMatch(/format must be one of/);
    expect((await fetchPage({ url: 'http://203.0.113.20/', provider: 'jina' })).json.error.message).toBe('web fetch provider jina is not configured');
  });
});

const READER = 'sk-gw-fetch-reader-aaaa';
const NOFETCH = 'sk-gw-fetch-nofetch-aaa';

describe('the pool', () => {
  let gw: GatewayHarness;
  const clock = new ManualClock(Date.parse('2030-01-02T12:00:00Z'));
  beforeAll(async () => {
    const hosted = (id: string) => `  ${id}: {api_key: key-${id}, base_url: "http://127.0.0.1:${fakesPort}/${id}"}\n`;
    gw = await startGateway({
      clock,
      yaml: `providers: []\nkeys:\n  - {name: reader, key: "${READER}", models: ["*"]}\n  - {name: nofetch, key: "${NOFETCH}", models: ["*"]}\nweb_fetch:\n${hosted('firecrawl')}${hosted('jina')}${hosted('tavily')}  policies:\n    reader: {providers: [builtin]}\n    nofetch: {enabled: false}\n`,
    });
    gw.egress.addMapping('203.0.113.20:80', `127.0.0.1:${sitePort}`);
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(() => {
    clock.advance(3_600_000); // every cool-down of the previous case is over
    for (const k of Object.keys(queues)) queues[k] = [];
    for (const k of Object.keys(hits)) hits[k] = 0;
    siteStatus = 200;
  });
  /** Over the trusted listener without a key (no policy), or over TCP with `key`. */
  const fetchPage = (body: Record<string, unknown> = {}, key?: string) =>
    gw.req('POST', '/v1/web/fetch', { url: 'http://203.0.113.20/news', ...body }, key ? { authorization: `Bearer ${key}` } : {}, { tcp: key !== undefined });

  it('per-key policy: only some providers, or no web fetch at all', async () => {
    const r = await fetchPage({}, READER);
    expect(r.json.provider).toBe('builtin');
    expect(hits.firecrawl).toBe(0);
    const named = await fetchPage({ provider: 'jina' }, READER);
    expect(named.status).toBe(403);
    const off = await fetchPage({}, NOFETCH);
    expect(off.status).toBe(403);
    expect(off.json.error.message).toBe('API key "nofetch" may not use web fetch');
  });

  it('fill-first: the first provider serves while it can', async () => {
    const r = await fetchPage();
    expect(r.json).toMatchObject({ provider: 'firecrawl', title: 'FC', content: '# from firecrawl: http://203.0.113.20/news' });
    expect(hits).toEqual({ firecrawl: 1, jina: 0, tavily: 0 });
  });

  it('429 falls through and the provider is skipped until its Retry-After has passed', async () => {
    queues.firecrawl = [{ status: 429, retryAfter: '30' }];
    expect((await fetchPage()).json.provider).toBe('jina');
    expect((await fetchPage()).json.provider).toBe('jina');
    expect(hits.firecrawl).toBe(1);
    clock.advance(31_000);
    expect((await fetchPage()).json.provider).toBe('firecrawl');
  });

  it('402 and 403 fall through for the hosted providers; a 403 of the built-in fetcher does not', async () => {
    queues.firecrawl = [{ status: 402 }];
    queues.jina = [{ status: 403 }];
    expect((await fetchPage()).json.provider).toBe('tavily');
    queues.firecrawl = [{ status: 402 }];
    queues.jina = [{ status: 402 }];
    queues.tavily = [{ status: 403 }];
    expect((await fetchPage()).json.provider).toBe('builtin');
    queues.firecrawl = [{ status: 402 }];
    queues.jina = [{ status: 402 }];
    queues.tavily = [{ status: 402 }];
    siteStatus = 403;
    const r = await fetchPage();
    expect(r.status).toBe(403);
    expect(r.json.error.message).toBe('the page answered HTTP 403');
  });

  it('a plain 400 never falls through; a 503 does', async () => {
    queues.firecrawl = [{ status: 400 }];
    const r = await fetchPage();
    expect(r.status).toBe(400);
    expect(r.json.error.message).toBe('firecrawl says 400');
    expect(hits.jina).toBe(0);
    queues.firecrawl = [{ status: 503 }];
    expect((await fetchPage()).json.provider).toBe('jina');
  });

  it('an exhausted pool answers one 429 with Retry-After', async () => {
    queues.firecrawl = [{ status: 429, retryAfter: '20' }];
    queues.jina = [{ status: 429, retryAfter: '50' }];
    queues.tavily = [{ status: 429 }];
    siteStatus = 429;
    const r = await fetchPage();
    expect(r.status).toBe(429);
    expect(r.headers['retry-after']).toBe('20');
    expect(r.json.error.message).toMatch(/every web fetch provider is rate-limited or failed/);
    const again = await fetchPage();
    expect(again.status).toBe(429);
    expect(hits).toEqual({ firecrawl: 1, jina: 1, tavily: 1 });
  });

  it('the built-in fetcher refusing the address after the others were rate-limited is an exhausted pool too: one 429', async () => {
    queues.firecrawl = [{ status: 429, retryAfter: '20' }];
    queues.jina = [{ status: 429, retryAfter: '50' }];
    queues.tavily = [{ status: 402 }];
    const r = await fetchPage({ url: 'http://10.1.2.3/private' });
    expect(r.status, r.text).toBe(429);
    expect(r.headers['retry-after']).toBe('20');
    expect(r.json.error.message).toMatch(/every web fetch provider is rate-limited or failed \(firecrawl 429, jina 429, tavily 402, builtin 400\)/);
    // Nothing rate-limited (the key may use only the built-in fetcher): the refusal itself is the answer.
    const alone = await fetchPage({ url: 'http://10.1.2.3/private' }, READER);
    expect(alone.status).toBe(400);
  });

  it('a named provider gets no fallback: its own status, or 429 while it cools down', async () => {
    queues.jina = [{ status: 503 }];
    const r = await fetchPage({ provider: 'jina' });
    expect(r.status).toBe(503);
    expect(hits.firecrawl).toBe(0);
    queues.tavily = [{ status: 429, retryAfter: '40' }];
    expect((await fetchPage({ provider: 'tavily' })).status).toBe(429);
    const cooling = await fetchPage({ provider: 'tavily' });
    expect(cooling.status).toBe(429);
    expect(cooling.headers['retry-after']).toBe('40');
    expect(hits.tavily).toBe(1);
    expect((await fetchPage({ provider: 'builtin' })).json.provider).toBe('builtin');
  });
});
