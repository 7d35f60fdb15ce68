import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Egress } from '../../src/egress/index.js';
import { isPublicAddress } from '../../src/egress/public-address.js';
import { URL_REFUSED, checkUserUrl, fetchUserUrl } from '../../src/egress/user-url.js';

/** Every spelling of an address that is not on the public internet. */
const PRIVATE = [
  '127.0.0.1', '10.0.0.1', '169.254.169.254', '0.0.0.0', '100.64.0.1', '192.168.1.1', '172.16.0.1',
  '::1', '::', '::ffff:127.0.0.1', '::ffff:7f00:1', '0:0:0:0:0:ffff:7f00:1', '::127.0.0.1', '::7f00:1',
  '::ffff:10.0.0.1', '::ffff:a9fe:a9fe', '64:ff9b::7f00:1', '64:ff9b::a9fe:a9fe', '64:ff9b:1::1', '2002:7f00:1::', '2002:a9fe:a9fe::',
  '2001::1', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'fe80::1%lo', 'fec0::1', 'ff02::1', '100::1',
];

describe('SSRF policy: addresses', () => {
  it('refuses every private address in every spelling, IPv4 inside IPv6 included', () => {
    for (const ip of PRIVATE) expect(isPublicAddress(ip), ip).toBe(false);
  });
  it('accepts public ones, and IPv6 forms that reach a public IPv4', () => {
    for (const ip of ['8.8.8.8', '1.1.1.1', '2001:4860:4860::8888', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1']) expect(isPublicAddress(ip), ip).toBe(true);
  });
});

describe('SSRF policy: user URLs', () => {
  let server: Server;
  let port: number;
  let closedPort: number;
  let egress: Egress;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/to-private') {
        res.writeHead(302, { location: `http://127.0.0.1:${port}/ok` });
        res.end();
      } else if (req.url === '/to-mapped') {
        res.writeHead(301, { location: 'http://203.0.113.9/ok' });
        res.end();
      } else {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('fine');
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    const spare = createServer();
    await new Promise<void>((r) => spare.listen(0, '127.0.0.1', r));
    closedPort = (spare.address() as AddressInfo).port;
    await new Promise((r) => spare.close(r));
    // Public-looking test addresses reach loopback fakes through the address map, as in every test.
    egress = new Egress({ loopbackOnly: true, addressMap: { '203.0.113.9:80': `127.0.0.1:${port}`, '203.0.113.10:80': `127.0.0.1:${closedPort}` } });
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await egress.close();
  });

  const text = async (url: string, e = egress) => {
    const r = await fetchUserUrl(e, url, { allowHttp: true, timeoutMs: 3000 });
    let body = '';
    for await (const c of r.body) body += c;
    return { status: r.status, body };
  };

  it('refuses URLs naming a private address however it is spelled, before connecting', () => {
    const urls = [
      `http://127.0.0.1:${port}/`, 'http://[::ffff:127.0.0.1]/', 'http://[::ffff:7f00:1]/', 'http://[0:0:0:0:0:ffff:7f00:1]/', 'http://[::127.0.0.1]/',
      'http://2130706433/', 'http://0x7f.1/', 'http://0177.0.0.1/', 'http://127.1/', 'http://0.0.0.0/', 'http://[::]/', 'http://[::1]/',
      'http://169.254.169.254/latest/meta-data/', 'http://[::ffff:169.254.169.254]/', 'http://[64:ff9b::a9fe:a9fe]/', 'http://[2002:a9fe:a9fe::1]/',
      'http://10.0.0.1/', 'http://[::ffff:10.0.0.1]/', 'http://[fd00::1]/', 'ftp://203.0.113.9/', 'http://user:pw@203.0.113.9/', 'not a url',
    ];
    for (const u of urls) expect(() => checkUserUrl(u, egress, { allowHttp: true }), u).toThrow(URL_REFUSED);
    expect(() => checkUserUrl('http://203.0.113.9/ok', egress), 'http when only https is allowed').toThrow(URL_REFUSED);
    expect(checkUserUrl('http://203.0.113.9/ok', egress, { allowHttp: true }).hostname).toBe('203.0.113.9');
  });

  it('fetches a public address, follows redirects that stay public, refuses one to a private address', async () => {
    expect(await text('http://203.0.113.9/ok')).toEqual({ status: 200, body: 'fine' });
    expect(await text(`http://203.0.113.9/to-mapped`)).toEqual({ status: 200, body: 'fine' });
    await expect(text('http://203.0.113.9/to-private')).rejects.toThrow(URL_REFUSED);
  });

  it('judges the addresses a name resolves to (localhost is loopback)', async () => {
    await expect(text(`http://localhost:${port}/ok`)).rejects.toThrow(URL_REFUSED);
  });

  it('reads the same whether the port is closed or the name unknown (nothing about what is reachable)', async () => {
    const reasons = await Promise.all(['http://203.0.113.10/ok', 'http://no-such-host.invalid/'].map((u) => text(u).then(() => 'fetched', (e: Error) => e.message)));
    expect(reasons).toEqual([URL_REFUSED, URL_REFUSED]);
  });

  it('says why a private address is refused and how to allow it', async () => {
    expect(() => checkUserUrl('http://10.0.0.5/feed', egress, { allowHttp: true })).toThrow(
      `${URL_REFUSED}: private address 10.0.0.5 is not in egress.allow (to allow it, add 10.0.0.5 to egress.allow in ctl.yaml and reload with SIGHUP)`,
    );
    await expect(text(`http://localhost:${port}/ok`)).rejects.toThrow(
      /^URL is not allowed or not reachable: localhost resolves to private address (127\.0\.0\.1|::1) is not in egress\.allow \(to allow it, add localhost or (127\.0\.0\.1|::1) to egress\.allow in ctl\.yaml and reload with SIGHUP\)$/,
    );
    await expect(text('http://203.0.113.9/to-private')).rejects.toThrow(/private address 127\.0\.0\.1 is not in egress\.allow/);
    expect(() => checkUserUrl('ftp://203.0.113.9/', egress, { allowHttp: true })).toThrow(`${URL_REFUSED}: scheme ftp: is not http or https`);
  });

  it('takes a new allow-list in place (SIGHUP), keeping the old one when the new one is bad', async () => {
    const live = new Egress({ loopbackOnly: true });
    try {
      await expect(text(`http://127.0.0.1:${port}/ok`, live)).rejects.toThrow(/private address 127\.0\.0\.1/);
      live.reconfigure({ allow: ['127.0.0.1'] });
      expect(await text(`http://127.0.0.1:${port}/ok`, live)).toEqual({ status: 200, body: 'fine' });
      expect(() => live.reconfigure({ allow: ['127.0.0.1/40'] })).toThrow(/egress\.allow/);
      expect(await text(`http://127.0.0.1:${port}/ok`, live)).toEqual({ status: 200, body: 'fine' });
      live.reconfigure({ allow: [] });
      expect(() => checkUserUrl(`http://127.0.0.1:${port}/ok`, live, { allowHttp: true })).toThrow(/not in egress\.allow/);
    } finally {
      await live.close();
    }
  });

  it('reaches an intranet address or name the allow-list names, and only those', async () => {
    const byAddress = new Egress({ loopbackOnly: true, allow: ['127.0.0.0/8'] });
    const byName = new Egress({ loopbackOnly: true, allow: [`localhost:${port}`] });
    try {
      expect(await text(`http://127.0.0.1:${port}/ok`, byAddress)).toEqual({ status: 200, body: 'fine' });
      expect(await text(`http://localhost:${port}/ok`, byName)).toEqual({ status: 200, body: 'fine' });
      await expect(text(`http://localhost:${closedPort}/ok`, byName)).rejects.toThrow(URL_REFUSED);
      expect(() => new Egress({ allow: ['10.0.0.0/99'] })).toThrow(/egress\.allow/);
    } finally {
      await byAddress.close();
      await byName.close();
    }
  });
});
