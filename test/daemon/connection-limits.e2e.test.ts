import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import http from 'node:http';
import { spawnSync } from 'node:child_process';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

/** What a raw connection gets back (and how long it stayed open), sending `first` and nothing else. */
function stall(connect: () => net.Socket, first: string): Promise<{ reply: string; ms: number }> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const s = connect();
    let reply = '';
    s.on('connect', () => s.write(first));
    s.on('data', (d) => (reply += d.toString()));
    s.on('error', () => undefined);
    const guard = setTimeout(() => s.destroy(), 8000);
    s.on('close', () => {
      clearTimeout(guard);
      resolve({ reply, ms: Date.now() - t0 });
    });
  });
}

describe('ctl.yaml servers.<name> connection limits in the daemon', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startDaemon({
      ctlYaml: {
        servers: {
          alertmanager: { 'header-timeout': '500ms', 'max-connections-per-ip': 4 },
          core: { 'header-timeout': '500ms' },
        },
      },
    });
  });
  afterAll(async () => {
    await d?.cleanup();
  });

  it('sheds a client that never finishes its headers, on a TCP listener and on the control socket', async () => {
    const am = new URL(await d.baseUrl('alertmanager'));
    const tcp = await stall(() => net.connect(Number(am.port), am.hostname), 'GET /api/v2/status HTTP/1.1\r\n');
    expect(tcp.reply).toMatch(/^HTTP\/1\.1 408 /);
    expect(tcp.ms).toBeLessThan(4000);
    const unix = await stall(() => net.connect(d.socket), 'GET /core/1.0 HTTP/1.1\r\n');
    expect(unix.reply).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('refuses connections past max-connections-per-ip with 503 while the others are answered', async () => {
    const am = new URL(await d.baseUrl('alertmanager'));
    const held = await Promise.all(Array.from({ length: 4 }, () => new Promise<net.Socket>((r) => { const s = net.connect(Number(am.port), am.hostname, () => r(s)); s.on('error', () => undefined); })));
    const refused = await stall(() => net.connect(Number(am.port), am.hostname), 'GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(refused.reply).toMatch(/^HTTP\/1\.1 503 /);
    expect((await d.request('alertmanager', 'GET', '/api/v2/status')).status).toBe(200); // the socket is not capped per IP
    for (const s of held) s.destroy();
  });
});

/** GET `url` on a fresh connection; the status, or the error code when the connection failed. */
function getOnce(url: string, from = '127.0.0.1'): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, localAddress: from }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    req.setTimeout(5000, () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
  });
}

describe.skipIf(spawnSync('prlimit', ['--version']).status !== 0)('few open files (prlimit --nofile=256): idle connections do not take the APIs down', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startDaemon({ wrap: ['prlimit', '--nofile=256'] });
  });
  afterAll(async () => {
    await d?.cleanup();
  });

  it('sheds idle connections from 5 addresses so the control socket and every listener still answer', async () => {
    const am = new URL(await d.baseUrl('alertmanager'));
    const nodes = await d.baseUrl('nodes');
    // 5 addresses × 60 idle connections, each reopened when the daemon closes it: more than the
    // 256 descriptors the daemon has. Bounded: it stops when this test ends.
    let stop = false;
    const held = new Set<net.Socket>();
    const hold = (from: string) => {
      if (stop) return;
      const s = net.connect({ port: Number(am.port), host: am.hostname, localAddress: from });
      held.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        held.delete(s);
        setTimeout(() => hold(from), 20);
      });
    };
    try {
      for (let a = 1; a <= 5; a++) for (let i = 0; i < 60; i++) hold(`127.0.8.${a}`);
      await new Promise((r) => setTimeout(r, 1000));
      for (let round = 0; round < 3; round++) {
        expect((await d.request('core', 'GET', '/core/1.0')).status).toBe(200);
        expect((await d.request('alertmanager', 'GET', '/api/v2/status')).status).toBe(200);
        expect(await getOnce(`${nodes}/api`)).toBe(405);
        expect(await getOnce(`${am.origin}/api/v2/status`, '127.0.8.9')).toBe(200);
        await new Promise((r) => setTimeout(r, 200));
      }
      await d.waitLog(/open files near the limit \(LimitNOFILE\): shedding idle TCP connections/);
    } finally {
      stop = true;
      for (const s of held) s.destroy();
    }
  });
});
