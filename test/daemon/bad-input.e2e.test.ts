import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request as httpRequest } from 'node:http';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

/** Raw request with the target as written (`//%00` would be normalised by fetch). */
function raw(opts: { socketPath?: string; host?: string; port?: number; path: string; hostHeader: string; body?: string }): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ ...opts, method: opts.body ? 'POST' : 'GET', headers: { host: opts.hostHeader, 'content-type': 'application/json' } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

const deep = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);

/** Malformed input that used to be answered 500 (or stored wrong) is refused with 4xx everywhere. */
describe('bad input', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startDaemon({ ctlYaml: { pipeline: { 'owner-password': 'pw-bad-input' } } });
  });
  afterAll(async () => {
    await d?.cleanup();
  });

  it('a request target starting // with an invalid host part (//%00): 4xx on every listener and the socket', async () => {
    for (const host of ['core', 'alertmanager', 'gateway', 'pipeline', 'nodes']) {
      const status = await raw({ socketPath: d.socket, path: '//%00', hostHeader: host });
      expect(status, `socket ${host}`).toBeLessThan(500);
    }
    for (const server of ['alertmanager', 'gateway', 'pipeline', 'nodes']) {
      const u = new URL(await d.baseUrl(server));
      const status = await raw({ host: u.hostname, port: Number(u.port), path: '//%00', hostHeader: u.host });
      expect(status, `tcp ${server}`).toBeLessThan(500);
    }
  });

  it('JSON nested 5,000 levels: 4xx on every API, login routes included', async () => {
    const body = deep(5000);
    const targets: [string, string][] = [
      ['gateway', '/api/auth/login'],
      ['gateway', '/api/providers'],
      ['gateway', '/api/keys'],
      ['gateway', '/api/combos'],
      ['gateway', '/v1/chat/completions'],
      ['pipeline', '/api/auth/login'],
      ['pipeline', '/api/sources'],
      ['alertmanager', '/api/v2/alerts'],
      ['alertmanager', '/api/v2/silences'],
      ['core', '/core/1.0/daemon/config'],
      ['nodes', '/api'],
    ];
    for (const [host, path] of targets) {
      const method = host === 'core' ? 'PATCH' : 'POST';
      const r = await d.request(host, method, path, body, { 'content-type': 'application/json' });
      expect(r.status, `${host} ${path}: ${r.text.slice(0, 200)}`).toBeLessThan(500);
      if (host !== 'nodes') expect(r.status, `${host} ${path}`).toBeGreaterThanOrEqual(400);
      else expect(r.json.Code, 'nodes: bad JSON code').toBe(1003);
    }
  });

  it('numbers out of range are refused at validation: key expiry 1e300, a price of 1e400', async () => {
    const key = await d.request('gateway', 'POST', '/api/keys', '{"name":"k","expiresAt":1e300}', { 'content-type': 'application/json' });
    expect(key.status).toBe(400);
    expect(key.json.error.message).toMatch(/expiresAt/);
    const price = await d.request('gateway', 'POST', '/api/pricing', '{"m":{"input":1e400}}', { 'content-type': 'application/json' });
    expect(price.status).toBe(400);
    expect((await d.request('gateway', 'GET', '/api/pricing?model=m')).json.pricing).toEqual([]);
    const ok = await d.request('gateway', 'POST', '/api/keys', { name: 'k2', expiresAt: Date.UTC(2100, 0, 1) });
    expect(ok.status).toBeLessThan(300);
  });
});
