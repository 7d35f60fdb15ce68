import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
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
