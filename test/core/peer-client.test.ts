/** Member-to-member requests give up in bounded time whatever the other side does. */
import { afterEach, describe, expect, it } from 'vitest';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { generateSelfSigned } from '../../src/daemon/certificates.js';
import { peerRequest } from '../../src/core/cluster/client.js';
import { fingerprint } from '../../src/core/cluster/identity.js';
import type { Egress } from '../../src/egress/index.js';

const loopback = { resolve: async (host: string, port: number) => ({ host, port }) } as unknown as Egress;

describe('peerRequest', () => {
  let server: tls.Server | undefined;
  const sockets: tls.TLSSocket[] = [];
  afterEach(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
  });

  // Before this bound a member frozen mid-answer held the request for good (measured: still
  // waiting after 8 s with a 500 ms timeout), and with it every later heartbeat round of the sender.
  it.each([
    ['stops in the middle of its answer (frozen)', false],
    ['sends a byte now and then, never the whole answer', true],
  ])('a member that %s is given up after twice the timeout', async (_what, drip) => {
    const pair = await generateSelfSigned('member');
    server = tls.createServer({ cert: pair.cert, key: pair.key }, (s) => {
      sockets.push(s);
      s.once('data', () => {
        // Headers and the start of a body, then nothing more (or a byte every 300 ms, so the
        // connection is never idle for the timeout).
        s.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"metadata":');
        if (!drip) return;
        const t = setInterval(() => s.write(' '), 300);
        s.once('close', () => clearInterval(t));
      });
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const t0 = Date.now();
    const err = await peerRequest(loopback, { address: `127.0.0.1:${port}`, method: 'GET', path: '/', pin: fingerprint(pair.cert), identity: pair, timeoutMs: 500 }).catch((e: Error) => e);
    const ms = Date.now() - t0;
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/no complete answer within 1000 ms/);
    // 1,000 ms is the bound (measured 1,017 to 1,059 ms); headroom for a loaded machine.
    expect(ms).toBeLessThan(4000);
  });
});
