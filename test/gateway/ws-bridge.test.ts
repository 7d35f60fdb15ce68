/**
 * Responses over WebSocket: a ws client through the gateway's bridge to a loopback fake of the
 * upstream responses socket — model re-resolution (bare, provider-prefixed, qtSd), the first-frame
 * rule, bridge_ws_provider_required, relayed events (response.created, rate limits), auth on the
 * handshake, and GET /v1/ws?handshake=1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { startGateway, type GatewayHarness } from './harness.js';

const KEY = 'sk-ws-key-aaaaaaaaaaaaaaaaa';
let gw: GatewayHarness;
let upstream: http.Server;
let wss: WebSocketServer;
const seen: { auth?: string; path?: string; frames: Record<string, unknown>[] }[] = [];

beforeAll(async () => {
  upstream = http.createServer();
  wss = new WebSocketServer({ server: upstream });
  wss.on('connection', (sock, req) => {
    const conn = { auth: req.headers.authorization, path: req.url, frames: [] as Record<string, unknown>[] };
    seen.push(conn);
    sock.on('message', (data) => {
      const f = JSON.parse(String(data)) as Record<string, unknown>;
      conn.frames.push(f);
      if (f.type === 'response.create') {
        sock.send(JSON.stringify({ type: 'response.created', response: { id: 'resp_1', model: f.model, status: 'in_progress' } }));
        sock.send(JSON.stringify({ type: 'rate_limits.updated', rate_limits: [{ name: 'requests', limit: 100, remaining: 99 }] }));
        sock.send(JSON.stringify({ type: 'response.output_text.delta', delta: 'Hi' }));
        sock.send(JSON.stringify({ type: 'response.completed', response: { id: 'resp_1', status: 'completed', usage: { input_tokens: 3, output_tokens: 1 } } }));
      }
      if (f.type === 'response.cancel') sock.close(1000, 'cancelled');
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  const port = (upstream.address() as AddressInfo).port;
  gw = await startGateway({
    env: { REQUIRE_API_KEY: 'true' },
    yaml: `providers:
  - {id: oa, kind: openai, base_url: "http://127.0.0.1:${port}/v1", api_key: sk-upstream, models: [gpt-x]}
  - {id: other, kind: openai, base_url: "http://127.0.0.1:${port}/v1", api_key: sk-other, models: [m]}
keys:
  - {name: a, key: "${KEY}", models: ["*"]}
responses_websocket: {provider: oa}
`,
  });
});
afterAll(async () => {
  await gw.close();
  wss.close();
  await new Promise((r) => upstream.close(r));
});

function connect(path = '/v1/responses', key: string | undefined = KEY): Promise<{ ws: WebSocket; frames: Record<string, unknown>[]; closed: Promise<{ code: number; reason: string }> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(gw.tcpUrl.replace('http', 'ws') + path, { headers: key ? { Authorization: `Bearer ${key}` } : {} });
    const frames: Record<string, unknown>[] = [];
    const closed = new Promise<{ code: number; reason: string }>((r) => ws.on('close', (code, reason) => r({ code, reason: String(reason) })));
    ws.on('message', (d) => frames.push(JSON.parse(String(d)) as Record<string, unknown>));
    ws.on('open', () => resolve({ ws, frames, closed }));
    ws.on('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.on('error', reject);
  });
}

async function until<T>(f: () => T | undefined, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('responses over WebSocket', () => {
  it('relays a response.create to the provider with the upstream model id and every upstream event back', async () => {
    for (const [path, model] of [['/v1/responses', 'gpt-x'], ['/responses', 'oa/gpt-x'], ['/api/v1/responses', 'qtSd/team/oa/gpt-x']] as const) {
      const before = seen.length;
      const c = await connect(path);
      c.ws.send(JSON.stringify({ type: 'response.create', model, input: [{ role: 'user', content: 'hello' }] }));
      await until(() => (c.frames.length >= 4 ? true : undefined));
      expect(c.frames.map((f) => f.type)).toEqual(['response.created', 'rate_limits.updated', 'response.output_text.delta', 'response.completed']);
      const conn = seen[before]!;
      expect(conn.auth).toBe('Bearer sk-upstream');
      expect(conn.path).toBe('/v1/responses');
      expect(conn.frames[0]).toMatchObject({ type: 'response.create', model: 'gpt-x', input: [{ role: 'user', content: 'hello' }] });
      // Later frames go through as sent.
      c.ws.send(JSON.stringify({ type: 'response.cancel' }));
      expect((await c.closed).code).toBe(1000);
      expect(conn.frames[1]).toEqual({ type: 'response.cancel' });
    }
  });

  it('another provider’s model is bridge_ws_provider_required; a first frame that is not response.create is refused', async () => {
    const c = await connect();
    c.ws.send(JSON.stringify({ type: 'response.create', model: 'other/m', input: [] }));
    const closed = await c.closed;
    expect(closed.code).toBe(1008);
    expect(c.frames[0]).toMatchObject({ type: 'error', error: { code: 'bridge_ws_provider_required' } });
    const q = await connect();
    q.ws.send(JSON.stringify({ type: 'response.create', model: 'qtSd/team/other/m', input: [] }));
    await q.closed;
    expect(q.frames[0]).toMatchObject({ error: { code: 'bridge_ws_provider_required' } });
    const bad = await connect();
    bad.ws.send('not json');
    await bad.closed;
    expect(bad.frames[0]).toMatchObject({ type: 'error', error: { code: 'invalid_request' } });
  });

  it('the handshake needs the API key (401); other paths 404; GET /v1/ws?handshake=1 gives example messages', async () => {
    await expect(connect('/v1/responses', '')).rejects.toThrow('HTTP 401');
    await expect(connect('/v1/responses', 'sk-wrong-key-000000000000')).rejects.toThrow('HTTP 401');
    await expect(connect('/v1/chat/completions')).rejects.toThrow('HTTP 404');
    const h = await gw.req('GET', '/v1/ws?handshake=1', undefined, { Authorization: `Bearer ${KEY}` }, { tcp: true });
    expect(h.status).toBe(200);
    expect(h.json).toMatchObject({ ok: true, provider: 'oa', examples: { request: { type: 'response.create', model: 'gpt-x' }, cancel: { type: 'response.cancel' } } });
    expect((await gw.req('GET', '/v1/ws?handshake=1', undefined, {}, { tcp: true })).status).toBe(401);
    expect((await gw.req('GET', '/v1/ws', undefined, { Authorization: `Bearer ${KEY}` }, { tcp: true })).status).toBe(400);
  });
});
