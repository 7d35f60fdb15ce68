/**
 * src/http/console.ts: the shell and the bundle's assets from memory, hashed names cached as
 * immutable, ETag revalidation, gzip, a strict CSP, and a clear 404 when the bundle is missing.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientIpResolver, createDispatcher, Router, sendJson, type ComponentInstance } from '../../src/http/index.js';
import { CONSOLE_CSP, mountConsole } from '../../src/http/console.js';

function get(base: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${base}${path}`, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

describe('mountConsole', () => {
  let server: http.Server;
  let base: string;
  const dir = mkdtempSync(join(tmpdir(), 'ctl-console-'));
  const js = `console.log(${JSON.stringify('x'.repeat(4000))});\n`;

  beforeAll(async () => {
    writeFileSync(join(dir, 'demo.js'), js);
    writeFileSync(join(dir, 'demo.css'), 'body{color:red}\n');
    const router = new Router({ ignoreTrailingSlash: true });
    mountConsole(router, { name: 'demo', title: 'Demo <console>', dir, meta: { api: '/api/v1' } });
    mountConsole(router, { name: 'absent', base: '/dashboard', title: 'Absent', dir: join(dir, 'none'), paths: ['/dashboard/*'] });
    const component: ComponentInstance = { router, renderError: (ctx, err) => sendJson(ctx.res, err.status, { error: err.message }) };
    server = http.createServer(createDispatcher({ target: () => component, listener: 't', viaSocket: false, ips: () => new ClientIpResolver([]), log: pino({ level: 'silent' }) }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the shell with a strict CSP, no inline script, and hashed asset links', async () => {
    const r = await get(base, '/');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toMatch(/default-src 'self'/);
    expect(CONSOLE_CSP).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(r.headers['cache-control']).toBe('no-cache');
    const html = r.body.toString();
    expect(html).toContain('<title>Demo &lt;console&gt;</title>');
    expect(html).toContain('<meta name="ctl-api" content="/api/v1">');
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]/);
    expect(html).toMatch(/<script type="module" src="assets\/demo-[0-9a-f]{16}\.js"><\/script>/);
    expect(html).toMatch(/<link rel="stylesheet" href="assets\/demo-[0-9a-f]{16}\.css">/);
  });

  it('serves assets immutable, gzipped on request, and answers 304 to a matching ETag', async () => {
    const html = (await get(base, '/')).body.toString();
    const src = '/' + /src="([^"]+)"/.exec(html)![1]!;
    const plain = await get(base, src);
    expect(plain.status).toBe(200);
    expect(plain.body.toString()).toBe(js);
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    const gz = await get(base, src, { 'accept-encoding': 'gzip, br' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).toString()).toBe(js);
    const again = await get(base, src, { 'if-none-match': plain.headers.etag as string });
    expect(again.status).toBe(304);
    const shell = await get(base, '/');
    expect((await get(base, '/', { 'if-none-match': shell.headers.etag as string })).status).toBe(304);
    expect((await get(base, '/assets/demo-0000000000000000.js')).status).toBe(404);
  });

  it('answers 404 with how to build it when the bundle is missing, on every shell path', async () => {
    for (const p of ['/dashboard', '/dashboard/', '/dashboard/keys']) {
      const r = await get(base, p);
      expect(r.status).toBe(404);
      expect(r.body.toString()).toMatch(/absent web console is not built \(dist\/console\/absent\.js is missing\): run npm run build/);
    }
  });
});
