import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

/** The limiter inside the real daemon: rate_limit.yaml, the socket bucket, SIGHUP, ctl ratelimit. */
describe('rate limiter in the daemon', () => {
  let d: TestDaemon;
  const file = (limit: number) =>
    `default: file\nroutes:\n  - {server: core, method: PATCH, route: /core/1.0/daemon/config, limit: ${limit}, interval: 60}\n  - {server: alertmanager, method: GET, route: /api/v2/status, limit: 2, interval: 60}\n`;

  beforeAll(async () => {
    d = await startDaemon({ files: { 'rate_limit.yaml': file(3) } });
  });
  afterAll(async () => {
    await d.cleanup();
  });

  it('limits a declared route per client (the socket is one 0.0.0.0 bucket) and never reaches the handler when blocked', async () => {
    const codes: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await d.request('core', 'PATCH', '/core/1.0/daemon/config', { 'failure-domain': 10 + i });
      codes.push(r.status);
      if (r.status === 200) expect(r.headers['x-ratelimit-limit']).toBe('3');
      if (r.status === 429) {
        expect(r.text).toBe('{"message":"Too Many Requests"}');
        expect(r.headers['x-ratelimit-remaining']).toBe('0');
        expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
        expect(Number(r.headers['retry-after'])).toBeLessThanOrEqual(60);
      }
    }
    expect(codes).toEqual([200, 200, 200, 429, 429]);
    // The blocked PATCHes changed nothing: the last acknowledged one stands.
    expect((await d.request('core', 'GET', '/core/1.0/daemon/config')).json.metadata['failure-domain']).toBe(12);
    // The daemon's /metrics counts them, beside its listeners and components.
    const m = await d.request('core', 'GET', '/metrics');
    expect(m.status).toBe(200);
    expect(m.text).toMatch(/^ctl_ratelimit_hits_total\{server="core",route="PATCH \/core\/1\.0\/daemon\/config",result="allowed"\} 3$/m);
    expect(m.text).toMatch(/^ctl_ratelimit_hits_total\{server="core",route="PATCH \/core\/1\.0\/daemon\/config",result="blocked"\} 2$/m);
    expect(m.text).toMatch(/^ctl_component_up\{component="alertmanager"\} 1$/m);
    expect(m.text).toMatch(/^ctl_server_up\{server="alertmanager",state="listening"\} 1$/m);
    expect(m.text).toMatch(/^nodejs_eventloop_lag_seconds /m);
  });

  it('a limit added by the file applies on a TCP listener, per client IP, with the same 429 on every API', async () => {
    const base = await d.baseUrl('alertmanager');
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push((await fetch(`${base}/api/v2/status`)).status);
    expect(codes).toEqual([200, 200, 429]);
    const r = await fetch(`${base}/api/v2/status`);
    expect(await r.text()).toBe('{"message":"Too Many Requests"}');
    expect(r.headers.get('content-type')).toMatch(/application\/json/);
  });

  it('ctl ratelimit status lists declared routes; reset clears counters', async () => {
    const s = await d.cli(['-o', 'json', 'ratelimit', 'status']);
    expect(s.code, s.stderr).toBe(0);
    const rows = JSON.parse(s.stdout) as { server: string; method: string; route: string; limit: number }[];
    expect(rows.find((r) => r.server === 'core' && r.method === 'PATCH' && r.route === '/core/1.0/daemon/config')?.limit).toBe(3);
    expect(rows.some((r) => r.server === 'pipeline' && r.route === '/api/auth/login')).toBe(true);
    expect(rows.some((r) => r.server === 'nodes' && r.route === '/api')).toBe(true);
    const reset = await d.cli(['ratelimit', 'reset', '--server', 'core']);
    expect(reset.code, reset.stderr).toBe(0);
    expect((await d.request('core', 'PATCH', '/core/1.0/daemon/config', { 'failure-domain': 1 })).status).toBe(200);
  });

  it('SIGHUP re-reads rate_limit.yaml; a bad file keeps the old config', async () => {
    writeFileSync(join(d.dir, 'rate_limit.yaml'), file(50));
    const start = d.log.length;
    d.signal('SIGHUP');
    // Every component logs its own reload line; wait for the limiter's, from this SIGHUP on.
    await d.waitLog(/rate limit configuration reloaded/, 5000, start);
    const r = await d.request('core', 'PATCH', '/core/1.0/daemon/config', { 'failure-domain': 2 });
    expect(r.headers['x-ratelimit-limit']).toBe('50');
    writeFileSync(join(d.dir, 'rate_limit.yaml'), 'default: carrier-pigeon\n');
    const before = d.log.length;
    d.signal('SIGHUP');
    await d.waitLog(/Rate limit adapter `carrier-pigeon` is not supported\./);
    expect(d.log.slice(before)).toMatch(/keeping the previous configuration/);
    const again = await d.request('core', 'PATCH', '/core/1.0/daemon/config', { 'failure-domain': 3 });
    expect(again.headers['x-ratelimit-limit']).toBe('50');
  });

  it('an unknown adapter fails start-up with the seed message', async () => {
    const bad = await startDaemon({ files: { 'rate_limit.yaml': 'default: memcached\n' } }).then(
      async (x) => {
        await x.cleanup();
        return 'started';
      },
      (e: Error) => e.message,
    );
    expect(bad).toMatch(/Rate limit adapter `memcached` is not supported\./);
  });
});
