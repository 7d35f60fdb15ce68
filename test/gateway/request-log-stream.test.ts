/**
 * The live request log (GET /api/usage/request-logs/stream, what the dashboard's request log follows),
 * the login status the dashboard starts from, and the cache savings in the usage history.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHarness } from './harness.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { MAX_LOG_STREAMS } from '../../src/gateway/routes/management/usage.js';

let gw: GatewayHarness;
let mock: MockUpstream;

beforeAll(async () => {
  mock = await startLlmUpstream({ apiKey: 'sk-up' });
  gw = await startGateway({
    yaml: `
providers:
  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: "sk-up", models: [m1, m2]}
pricing:
  oa/m1: {input: 1, output: 2}
`,
    env: { INITIAL_PASSWORD: 'dash-password-1' },
  });
});
afterAll(async () => {
  await gw?.close();
  await mock?.close();
});

/** Reads SSE events of an open response until `want` of the given type arrived. */
async function events(res: Response, type: string, want: number): Promise<any[]> {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = '';
  const out: any[] = [];
  while (out.length < want) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const ev = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (ev === type && data) out.push(JSON.parse(data));
    }
  }
  await reader.cancel();
  return out;
}

const chat = (model: string) => gw.req('POST', '/v1/chat/completions', { model, messages: [{ role: 'user', content: `hi ${model}` }] });

describe('live request log', () => {
  it('streams each finished request as a log event, filtered as request-logs filters', async () => {
    const ctl = new AbortController();
    const res = await fetch(`${gw.trustedUrl}/api/usage/request-logs/stream?model=m2`, { signal: ctl.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const got = events(res, 'log', 1);
    // The subscription is registered before the 200 is written, so these requests are seen.
    expect((await chat('oa/m1')).status).toBe(200);
    expect((await chat('oa/m2')).status).toBe(200);
    const [row] = await got;
    ctl.abort();
    expect(row).toMatchObject({ requestedModel: 'oa/m2', provider: 'oa', model: 'm2', status: 200, modality: 'chat' });
    expect(row.id).toMatch(/^live-\d+$/);
    // The same row as GET /api/usage/request-logs answers, but for its id.
    const stored = (await gw.req('GET', '/api/usage/request-logs?model=m2&limit=1')).json.items[0];
    expect({ ...row, id: stored.id }).toEqual(stored);
  });

  it('needs management auth over TCP, and the login cookie is enough', async () => {
    expect((await fetch(`${gw.tcpUrl}/api/usage/request-logs/stream`)).status).toBe(401);
    const login = await fetch(`${gw.tcpUrl}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: 'dash-password-1' }) });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const ctl = new AbortController();
    const res = await fetch(`${gw.tcpUrl}/api/usage/request-logs/stream`, { headers: { cookie }, signal: ctl.signal });
    expect(res.status).toBe(200);
    ctl.abort();
  });
});

describe('live request log limits', () => {
  it(`holds at most ${MAX_LOG_STREAMS} readers, and a reader that leaves frees its place`, async () => {
    const ctl = new AbortController();
    const open = await Promise.all(Array.from({ length: MAX_LOG_STREAMS }, () => fetch(`${gw.trustedUrl}/api/usage/request-logs/stream`, { signal: ctl.signal })));
    expect(open.every((r) => r.status === 200)).toBe(true);
    const refused = await fetch(`${gw.trustedUrl}/api/usage/request-logs/stream`);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect((await refused.json()).error.code).toBe('too_many_streams');
    ctl.abort();
    // The server sees the sockets close a moment later: poll until a new reader is let in.
    const deadline = Date.now() + 10_000;
    let status = 0;
    while (Date.now() < deadline) {
      const again = new AbortController();
      const r = await fetch(`${gw.trustedUrl}/api/usage/request-logs/stream`, { signal: again.signal });
      status = r.status;
      again.abort();
      if (status === 200) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(status).toBe(200);
  });
});

describe('dashboard status and savings', () => {
  it('auth status says whether a login is required', async () => {
    const s = await gw.req('GET', '/api/auth/status', undefined, {}, { tcp: true });
    expect(s.json).toMatchObject({ authenticated: false, loginConfigured: true, requireLogin: true });
    await gw.req('PUT', '/api/settings/require-login', { requireLogin: false });
    try {
      expect((await gw.req('GET', '/api/auth/status', undefined, {}, { tcp: true })).json.requireLogin).toBe(false);
    } finally {
      await gw.req('PUT', '/api/settings/require-login', { requireLogin: true });
    }
  });

  it('usage history counts cache hits and the cost they saved', async () => {
    const body = { model: 'oa/m1', messages: [{ role: 'user', content: 'the same question' }], temperature: 0 };
    expect((await gw.req('POST', '/v1/chat/completions', body)).status).toBe(200);
    const second = await gw.req('POST', '/v1/chat/completions', body);
    expect(second.status).toBe(200);
    const h = await gw.req('GET', '/api/usage/history?days=1&period=hour');
    expect(h.json.totals.cacheHits).toBe(1);
    expect(h.json.totals.costSaved).toBeGreaterThan(0);
    expect(h.json.history.at(-1)).toHaveProperty('costSaved');
  });
});
