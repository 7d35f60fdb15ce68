/**
 * Sync and cloud: the configuration pushed to a loopback HTTP remote (no secrets unless asked) and
 * merged into another gateway from there; an S3-compatible remote whose SigV4 signatures are checked
 * with the AWS SDK's own signer; the cloud routes (a Bearer key's masked view, credentials update,
 * model resolution, aliases); 503 while sync is not configured.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '../helpers/sha256.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

const TOKEN = 'sync-token-123';
const MGMT = 'sk-cloud-mgmt-000000000000000';
const USER = 'sk-cloud-user-000000000000000';
let mock: MockUpstream;
let remote: Server;
let remoteUrl = '';
let stored: string | undefined;
const s3Objects = new Map<string, string>();
let s3: Server;
let s3Url = '';
let s3Verified = 0;

const body = (req: IncomingMessage) => new Promise<string>((r) => {
  let t = '';
  req.on('data', (c: Buffer) => (t += c));
  req.on('end', () => r(t));
});

beforeAll(async () => {
  mock = await startLlmUpstream();
  remote = createServer(async (req, res) => {
    const text = await body(req);
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return res.writeHead(401).end('no');
    if (req.method === 'PUT') {
      stored = text;
      return res.writeHead(200, { etag: '"v1"' }).end();
    }
    if (stored === undefined) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(stored);
  });
  await new Promise<void>((r) => remote.listen(0, '127.0.0.1', r));
  remoteUrl = `http://127.0.0.1:${(remote.address() as AddressInfo).port}/ctl/config.json`;
  s3 = createServer(async (req, res) => {
    const text = await body(req);
    // Check the signature with the AWS SDK's signer, at the time the request says it was signed.
    const amz = String(req.headers['x-amz-date']);
    const when = new Date(`${amz.slice(0, 4)}-${amz.slice(4, 6)}-${amz.slice(6, 8)}T${amz.slice(9, 11)}:${amz.slice(11, 13)}:${amz.slice(13, 15)}Z`);
    const signer = new SignatureV4({ service: 's3', region: 'eu-central-1', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 's3-secret' }, sha256: Sha256, uriEscapePath: false, applyChecksum: false });
    const headers: Record<string, string> = { host: String(req.headers.host), 'x-amz-content-sha256': String(req.headers['x-amz-content-sha256']) };
    if (req.method === 'PUT') Object.assign(headers, { 'content-type': String(req.headers['content-type']), 'content-length': String(req.headers['content-length']) });
    const expected = await signer.sign({ method: req.method!, protocol: 'http:', hostname: '127.0.0.1', port: (s3.address() as AddressInfo).port, path: req.url!.split('?')[0]!, headers, ...(req.method === 'PUT' ? { body: text } : {}) }, { signingDate: when });
    if (expected.headers.authorization !== req.headers.authorization) return res.writeHead(403).end('SignatureDoesNotMatch');
    if (createHash('sha256').update(text).digest('hex') !== req.headers['x-amz-content-sha256']) return res.writeHead(400).end('XAmzContentSHA256Mismatch');
    s3Verified++;
    if (req.method === 'PUT') {
      s3Objects.set(req.url!, text);
      return res.writeHead(200, { etag: '"s3v1"' }).end();
    }
    const o = s3Objects.get(req.url!);
    if (o === undefined) return res.writeHead(404).end('<Error><Code>NoSuchKey</Code></Error>');
    res.writeHead(200).end(o);
  });
  await new Promise<void>((r) => s3.listen(0, '127.0.0.1', r));
  s3Url = `http://127.0.0.1:${(s3.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await mock.close();
  await new Promise((r) => remote.close(r));
  await new Promise((r) => s3.close(r));
});

const keys = `keys:\n  - {name: mgmt, key: "${MGMT}", models: ["*"], scopes: [management]}\n  - {name: user, key: "${USER}", models: ["oa/*"]}\n`;

describe('sync', () => {
  let a: GatewayHarness;
  let b: GatewayHarness;
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it('pushes the configuration without secrets; initialize refuses to overwrite; another gateway pulls and merges it', async () => {
    a = await startGateway({ yaml: keys, config: { sync: { url: remoteUrl, token: TOKEN } } });
    expect((await a.req('POST', '/api/providers', { id: 'oa', kind: 'openai', baseUrl: mock.baseUrl('openai'), apiKey: 'sk-secret-upstream-A', models: ['gpt-4o'] })).status).toBe(201);
    expect((await a.req('POST', '/api/combos', { name: 'duo', targets: ['oa/gpt-4o'] })).status).toBe(201);
    expect((await a.req('POST', '/api/models/alias', { alias: 'fast', model: 'oa/gpt-4o' })).status).toBe(201);

    const init = await a.req('POST', '/api/sync/initialize', {});
    expect(init.status, init.text).toBe(201);
    expect(init.json).toMatchObject({ initialized: true, secrets: false, counts: { providers: 1, combos: 1, aliases: 1 } });
    expect(stored).toContain('"format":"ctl-gateway-config/1"');
    expect(stored).not.toContain('sk-secret-upstream-A');
    expect((await a.req('POST', '/api/sync/initialize', {})).status).toBe(409);
    expect((await a.req('GET', '/api/sync/cloud')).json).toMatchObject({ configured: true, remote: remoteUrl, etag: '"v1"', lastPush: expect.any(String) });

    b = await startGateway({ yaml: keys, config: { sync: { url: remoteUrl, token: TOKEN } } });
    expect((await b.req('POST', '/api/models/alias', { alias: 'mine', model: 'x/y' })).status).toBe(201);
    const pull = await b.req('POST', '/api/sync/cloud', { action: 'pull' });
    expect(pull.status, pull.text).toBe(200);
    expect(pull.json).toMatchObject({ pulled: true, providers: 1, combos: 1, aliases: 1 });
    expect((await b.req('GET', '/api/combos')).json.combos.map((c: { name: string }) => c.name)).toEqual(['duo']);
    const aliases = (await b.req('GET', '/api/models/alias')).json.aliases;
    expect(aliases).toEqual({ fast: 'oa/gpt-4o', mine: 'x/y' }); // merged: local extras stay
    expect((await b.req('GET', '/api/providers/oa')).json.baseUrl).toBe(mock.baseUrl('openai'));
  });

  it('an S3-compatible bucket, signed with SigV4, with secrets when asked', async () => {
    const c = await startGateway({ config: { sync: { include_secrets: true, s3: { endpoint: s3Url, bucket: 'configs', key: 'ctl/gw.json', region: 'eu-central-1', access_key_id: 'AKIDEXAMPLE', secret_access_key: 's3-secret' } } } });
    try {
      expect((await c.req('POST', '/api/providers', { id: 'an', kind: 'anthropic', apiKey: 'sk-ant-secret-key-C', models: ['claude'] })).status).toBe(201);
      const r = await c.req('POST', '/api/sync/initialize', {});
      expect(r.status, r.text).toBe(201);
      expect(r.json).toMatchObject({ remote: `s3://configs/ctl/gw.json at ${s3Url}`, secrets: true });
      expect(s3Objects.get('/configs/ctl/gw.json')).toContain('sk-ant-secret-key-C');
      expect((await c.req('POST', '/api/sync/cloud', { action: 'pull' })).json.providers).toBe(1);
      expect(s3Verified).toBeGreaterThanOrEqual(3); // GET (initialize's check), PUT, GET
    } finally {
      await c.close();
    }
  });

  it('503 while sync is not configured; a remote that refuses is a 502 and recorded', async () => {
    const d = await startGateway({});
    try {
      expect((await d.req('POST', '/api/sync/cloud', { action: 'push' })).status).toBe(503);
      expect((await d.req('GET', '/api/sync/cloud')).json).toMatchObject({ configured: false, remote: null });
    } finally {
      await d.close();
    }
    const e = await startGateway({ config: { sync: { url: remoteUrl, token: 'wrong' } } });
    try {
      const r = await e.req('POST', '/api/sync/cloud', { action: 'push' });
      expect(r.status).toBe(502);
      expect(r.json.error.message).toMatch(/answered 401/);
      expect((await e.req('GET', '/api/sync/cloud')).json.lastError).toMatch(/401/);
    } finally {
      await e.close();
    }
  });
});

describe('cloud', () => {
  let g: GatewayHarness;
  beforeAll(async () => {
    g = await startGateway({ yaml: keys });
    await g.req('POST', '/api/providers', { id: 'oa', kind: 'openai', baseUrl: mock.baseUrl('openai'), apiKey: 'sk-proj-abcdefghijklmnop', models: ['gpt-4o'] });
    await g.req('POST', '/api/models/alias', { alias: 'fast', model: 'oa/gpt-4o' });
  });
  afterAll(async () => {
    await g.close();
  });
  const as = (k?: string) => (k ? { Authorization: `Bearer ${k}` } : {});

  it('auth: a Bearer key sees the connections with keys masked, and the aliases', async () => {
    const r = await g.req('POST', '/api/cloud/auth', {}, as(USER), { tcp: true });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ valid: true, key: { name: 'user' }, connections: [{ provider: 'oa', kind: 'openai', apiKey: 'sk-p…mnop' }], aliases: { fast: 'oa/gpt-4o' } });
    expect(r.text).not.toContain('abcdefghijklmnop');
    expect((await g.req('POST', '/api/cloud/auth', {}, as(), { tcp: true })).status).toBe(401);
    expect((await g.req('POST', '/api/cloud/auth', {}, as('sk-nope-000000000000000000'), { tcp: true })).status).toBe(401);
  });

  it('credentials update needs the management scope; resolve and aliases follow the key', async () => {
    expect((await g.req('POST', '/api/cloud/credentials/update', { provider: 'oa', apiKey: 'sk-new-key-0123456789' }, as(USER), { tcp: true })).status).toBe(403);
    const u = await g.req('POST', '/api/cloud/credentials/update', { provider: 'oa', apiKey: 'sk-new-key-0123456789' }, as(MGMT), { tcp: true });
    expect(u.json).toMatchObject({ updated: true, provider: 'oa', apiKey: 'sk-n…6789' });
    mock.reset();
    await g.req('POST', '/v1/chat/completions', { model: 'oa/gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    expect(mock.requests[0]!.headers.authorization).toBe('Bearer sk-new-key-0123456789');

    const res = await g.req('POST', '/api/cloud/model/resolve', { model: 'fast' }, as(USER), { tcp: true });
    expect(res.json).toMatchObject({ model: 'fast', via: 'alias', strategy: 'single', targets: [{ ref: 'oa/gpt-4o', provider: 'oa', model: 'gpt-4o' }] });
    expect((await g.req('POST', '/api/cloud/model/resolve', { model: 'nope/x' }, as(USER), { tcp: true })).status).toBe(404);
    expect((await g.req('GET', '/api/cloud/models/alias', undefined, as(USER), { tcp: true })).json).toEqual({ aliases: { fast: 'oa/gpt-4o' } });
  });
});
