import { describe, expect, it } from 'vitest';
import http from 'node:http';
import net from 'node:net';
import { Listener } from '../../src/daemon/listener.js';

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

describe('Listener drain', () => {
  it('stops accepting at once and lets an in-flight request finish within the drain timeout', async () => {
    const l = await Listener.tcp('t', '127.0.0.1', 0, '127.0.0.1:0', {
      request: (req, res) => {
        const delay = req.url === '/slow' ? 300 : 0;
        setTimeout(() => res.end('done'), delay);
      },
      upgrade: (_r, s) => s.destroy(),
    }, null);
    const port = Number(l.boundAddress.split(':')[1]);
    const slow = get(port, '/slow');
    await new Promise((r) => setTimeout(r, 50));
    const closed = l.close(5000);
    const refused = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(false);
      });
      s.once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
    expect(await slow).toEqual({ status: 200, body: 'done' });
    await closed;
  });

  it('cuts requests still running when the drain timeout ends', async () => {
    const l = await Listener.tcp('t', '127.0.0.1', 0, '127.0.0.1:0', { request: () => undefined, upgrade: (_r, s) => s.destroy() }, null);
    const port = Number(l.boundAddress.split(':')[1]);
    const hung = get(port, '/never').then(
      () => 'answered',
      () => 'cut',
    );
    await new Promise((r) => setTimeout(r, 50));
    const t0 = Date.now();
    await l.close(100);
    expect(await hung).toBe('cut');
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('refuses to bind an address in use', async () => {
    const a = await Listener.tcp('a', '127.0.0.1', 0, '', { request: () => undefined, upgrade: () => undefined }, null);
    const port = Number(a.boundAddress.split(':')[1]);
    await expect(Listener.tcp('b', '127.0.0.1', port, '', { request: () => undefined, upgrade: () => undefined }, null)).rejects.toMatchObject({ code: 'EADDRINUSE' });
    await a.close(0);
  });
});
