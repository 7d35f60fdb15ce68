/**
 * OAuth logins against a loopback fake authorization server: the device-code flow (pending, then
 * authorized), the authorization-code flow with PKCE (the challenge checked against the verifier)
 * through the public callback, tokens sealed at rest (never in the clear in the database), used as
 * the provider's accounts upstream, refreshed, kept across a restart, logged out; the oauth breaker
 * profile.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';
import { guessProfile } from '../../src/gateway/resilience/policy.js';

let mock: MockUpstream;
let auth: Server;
let authUrl = '';
let approved = false;
let challenge = '';
const grants: string[] = [];
const root = mkdtempSync(join(tmpdir(), 'ctl-oauth-'));
const dir = join(root, 'state');
let gw: GatewayHarness;

const jwt = (claims: object) => `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;

beforeAll(async () => {
  mock = await startLlmUpstream();
  auth = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c));
    req.on('end', () => {
      const f = new URLSearchParams(text);
      const send = (status: number, body: object) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (f.get('client_id') !== 'ctl-client') return send(401, { error: 'invalid_client' });
      if (req.url === '/device') return send(200, { device_code: 'dc-1', user_code: 'ABCD-EFGH', verification_uri: `${authUrl}/activate`, expires_in: 600, interval: 1 });
      const grant = f.get('grant_type')!;
      grants.push(grant);
      if (grant === 'urn:ietf:params:oauth:grant-type:device_code') {
        if (!approved) return send(400, { error: 'authorization_pending' });
        return send(200, { access_token: 'at-device-1', refresh_token: 'rt-device-1', token_type: 'Bearer', expires_in: 3600, id_token: jwt({ sub: 'user-1', email: 'ann@example.com' }) });
      }
      if (grant === 'authorization_code') {
        const verifier = f.get('code_verifier') ?? '';
        if (f.get('code') !== 'code-xyz' || createHash('sha256').update(verifier).digest('base64url') !== challenge) return send(400, { error: 'invalid_grant', error_description: 'bad code or verifier' });
        return send(200, { access_token: 'at-code-1', refresh_token: 'rt-code-1', expires_in: 60, id_token: jwt({ sub: 'user-2', email: 'bob@example.com' }) });
      }
      if (grant === 'refresh_token') {
        const rt = f.get('refresh_token');
        if (rt === 'rt-code-1') return send(200, { access_token: 'at-code-2', expires_in: 3600 });
        if (rt === 'rt-device-1') return send(200, { access_token: 'at-device-2', refresh_token: 'rt-device-2', expires_in: 3600 });
        return send(400, { error: 'invalid_grant' });
      }
      send(400, { error: 'unsupported_grant_type' });
    });
  });
  await new Promise<void>((r) => auth.listen(0, '127.0.0.1', r));
  authUrl = `http://127.0.0.1:${(auth.address() as AddressInfo).port}`;
  mkdirSync(dir);
  gw = await start();
});
afterAll(async () => {
  await gw.close();
  await mock.close();
  await new Promise((r) => auth.close(r));
  rmSync(root, { recursive: true, force: true });
});

const start = () =>
  startGateway({
    dir,
    config: {
      oauth_providers: [
        {
          id: 'codex',
          name: 'Codex subscription',
          kind: 'openai',
          base_url: mock.baseUrl('openai'),
          models: ['gpt-5'],
          client_id: 'ctl-client',
          token_url: `${authUrl}/token`,
          device_authorization_url: `${authUrl}/device`,
          authorize_url: `${authUrl}/authorize`,
          redirect_uri: 'http://127.0.0.1:20128/api/oauth/codex/callback',
          scopes: ['openid', 'offline_access'],
        },
      ],
    },
  });

const chatAuth = async () => {
  mock.reset();
  const r = await gw.req('POST', '/v1/chat/completions', { model: 'codex/gpt-5', messages: [{ role: 'user', content: 'hi' }] });
  expect(r.status, r.text).toBe(200);
  return mock.requests[0]!.headers.authorization;
};

describe('OAuth providers', () => {
  it('device code: pending until approved, then an account whose token goes upstream; sealed at rest', async () => {
    const d = await gw.req('POST', '/api/oauth/codex/device');
    expect(d.status, d.text).toBe(200);
    expect(d.json).toMatchObject({ userCode: 'ABCD-EFGH', verificationUri: `${authUrl}/activate`, interval: 1 });
    expect((await gw.req('POST', '/api/oauth/codex/poll', { flowId: d.json.flowId })).json).toEqual({ status: 'pending', interval: 1 });
    approved = true;
    const done = await gw.req('POST', '/api/oauth/codex/poll', { flowId: d.json.flowId });
    expect(done.json).toMatchObject({ status: 'authorized', provider: 'codex', label: 'ann@example.com', accountId: expect.stringMatching(/^oauth:codex:/) });
    expect((await gw.req('POST', '/api/oauth/codex/poll', { flowId: d.json.flowId })).status).toBe(404); // finished

    expect(await chatAuth()).toBe('Bearer at-device-1');
    const p = await gw.req('GET', '/api/providers/codex');
    expect(p.json.accounts.map((a: { name: string }) => a.name)).toEqual(['ann@example.com']);

    const db = new Database(join(dir, 'database', 'gateway.db'), { readonly: true });
    try {
      const dump = JSON.stringify([db.prepare('SELECT * FROM oauth_tokens').all(), db.prepare('SELECT * FROM provider_accounts').all()]);
      expect(dump).not.toContain('at-device-1');
      expect(dump).not.toContain('rt-device-1');
      expect(dump).toContain('v1.');
    } finally {
      db.close();
    }
    expect(statSync(join(dir, 'secrets', 'gateway-oauth.key')).mode & 0o777).toBe(0o600);
  });

  it('authorization code with PKCE through the public callback', async () => {
    const a = await gw.req('POST', '/api/oauth/codex/authorize');
    const u = new URL(a.json.authorizeUrl);
    expect(u.origin + u.pathname).toBe(`${authUrl}/authorize`);
    expect(Object.fromEntries(u.searchParams)).toMatchObject({ response_type: 'code', client_id: 'ctl-client', code_challenge_method: 'S256', scope: 'openid offline_access', state: a.json.state });
    challenge = u.searchParams.get('code_challenge')!;
    const wrong = await gw.req('GET', `/api/oauth/codex/callback?code=code-xyz&state=forged`, undefined, {}, { tcp: true });
    expect(wrong.status).toBe(400);
    const cb = await gw.req('GET', `/api/oauth/codex/callback?code=code-xyz&state=${a.json.state}`, undefined, {}, { tcp: true });
    expect(cb.status, cb.text).toBe(200);
    expect(cb.text).toContain('bob@example.com is now an account of codex');
    expect((await gw.req('GET', '/api/oauth/codex/status')).json.accounts.map((x: { label: string }) => x.label).sort()).toEqual(['ann@example.com', 'bob@example.com']);
    expect((await gw.req('GET', '/api/oauth/codex/status', undefined, {}, { tcp: true })).status).toBe(401); // status is not public
  });

  it('refresh replaces the access token; tokens survive a restart; the breaker profile is oauth', async () => {
    const r = await gw.req('POST', '/api/oauth/codex/refresh', {});
    expect(r.status, r.text).toBe(200);
    expect(grants.filter((g) => g === 'refresh_token')).toHaveLength(2);
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) seen.add((await chatAuth()) as string);
    expect([...seen].every((h) => h === 'Bearer at-device-2' || h === 'Bearer at-code-2')).toBe(true);

    await gw.close();
    gw = await start();
    expect(['Bearer at-device-2', 'Bearer at-code-2']).toContain(await chatAuth());
    const rt = { config: { kind: 'openai', accounts: [{ id: 'oauth:codex:abc', enabled: true, apiKey: 't' }] } };
    expect(guessProfile(rt as never)).toBe('oauth');
  });

  it('logout forgets tokens and accounts; bad input', async () => {
    expect((await gw.req('POST', '/api/oauth/codex/logout', {})).json).toEqual({ provider: 'codex', loggedOut: 2 });
    expect((await gw.req('GET', '/api/oauth/codex/status')).json.accounts).toEqual([]);
    // Out of routing: the next chat does not go upstream without Authorization, it fails saying why.
    mock.reset();
    const after = await gw.req('POST', '/v1/chat/completions', { model: 'codex/gpt-5', messages: [{ role: 'user', content: 'hi' }] });
    expect(after.status, after.text).toBeGreaterThanOrEqual(400);
    expect(after.json.error.message).toBe('provider codex is disabled');
    expect(mock.requests).toHaveLength(0);
    expect((await gw.req('GET', '/api/providers/codex')).json).toMatchObject({ enabled: false, accounts: [] });
    expect((await gw.req('POST', '/api/oauth/nope/device')).status).toBe(404);
    expect((await gw.req('POST', '/api/oauth/codex/teleport')).status).toBe(404);
    expect((await gw.req('POST', '/api/oauth/codex/exchange', { flowId: 'flow_x', code: 'c' })).status).toBe(400);
    expect((await gw.req('GET', '/api/oauth/providers')).json.providers).toEqual([{ id: 'codex', name: 'Codex subscription', kind: 'openai', flows: ['device', 'authorization-code'], accounts: 0 }]);
    expect(readFileSync(join(dir, 'secrets', 'gateway-oauth.key'), 'utf8').trim()).toHaveLength(44);
  });
});
