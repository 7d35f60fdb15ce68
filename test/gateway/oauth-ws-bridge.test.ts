/**
 * The responses-over-WebSocket bridge on an OAuth provider: after a device-code login the bridge opens
 * the upstream socket with the login's access token, and with the refreshed one after a refresh.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { startGateway, type GatewayHarness } from './harness.js';

let gw: GatewayHarness;
let upstream: http.Server;
let wss: WebSocketServer;
let auth: http.Server;
const seenAuth: (string | undefined)[] = [];
let refreshed = false;

beforeAll(async () => {
  upstream = http.createServer();
  wss = new WebSocketServer({ server: upstream });
  wss.on('connection', (sock, req) => {
    seenAuth.push(req.headers.authorization);
    sock.on('message', () => {
      sock.send(JSON.stringify({ type: 'response.created', response: { id: 'resp_1', status: 'in_progress' } }));
      sock.send(JSON.stringify({ type: 'response.completed', response: { id: 'resp_1', status: 'completed' } }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  auth = http.createServer((req, res) => {
    let t = '';
    req.on('data', (c: Buffer) => (t += c));
    req.on('end', () => {
      const f = new URLSearchParams(t);
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.url === '/device') return res.end(JSON.stringify({ device_code: 'dc', user_code: 'UC', verification_uri: 'http://127.0.0.1/', expires_in: 60, interval: 1 }));
      if (f.get('grant_type') === 'refresh_token') {
        refreshed = true;
        return res.end(JSON.stringify({ access_token: 'at-ws-2', expires_in: 3600 }));
      }
      res.end(JSON.stringify({ access_token: 'at-ws-1', refresh_token: 'rt-ws', expires_in: 3600 }));
    });
  });
  await new Promise<void>((r) => auth.listen(0, '127.0.0.1', () => r()));
  const a = `http://127.0.0.1:${(auth.address() as AddressInfo).port}`;
  gw = await startGateway({
    yaml: 'responses_websocket: {provider: codex}\n',
    config: {
      oauth_providers: [
        { id: 'codex', kind: 'openai', base_url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`, models: ['gpt-5'], client_id: 'c', token_url: `${a}/token`, device_authorization_url: `${a}/device` },
      ],
    },
  });
});
afterAll(async () => {
  await gw.close();
  wss.close();
  await new Promise((r) => upstream.close(r));
  await new Promise((r) => auth.close(r));
});

async function roundTrip(): Promise<void> {
  const ws = new WebSocket(gw.tcpUrl.replace('http', 'ws') + '/v1/responses');
  await new Promise((r, j) => (ws.on('open', r), ws.on('error', j)));
  const done = new Promise<void>((r) => ws.on('message', (d) => (JSON.parse(String(d)).type === 'response.completed' ? r() : undefined)));
  ws.send(JSON.stringify({ type: 'response.create', model: 'gpt-5', input: 'hi' }));
  await done;
  ws.close();
}

describe('OAuth and the WebSocket bridge', () => {
  it('uses the login\'s access token, and the refreshed one after a refresh', async () => {
    const d = await gw.req('POST', '/api/oauth/codex/device');
    expect((await gw.req('POST', '/api/oauth/codex/poll', { flowId: d.json.flowId })).json.status).toBe('authorized');
    await roundTrip();
    expect(seenAuth.at(-1)).toBe('Bearer at-ws-1');
    expect((await gw.req('POST', '/api/oauth/codex/refresh', {})).status).toBe(200);
    expect(refreshed).toBe(true);
    await roundTrip();
    expect(seenAuth.at(-1)).toBe('Bearer at-ws-2');
  });
});
