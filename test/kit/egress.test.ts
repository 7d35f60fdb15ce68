import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Egress, isLoopback, loopbackOnlyFromEnv, parseHostPort } from '../../src/egress/index.js';
import { isPublicAddress, isPublicIPv4 } from '../../src/egress/public-address.js';

describe('egress', () => {
  let server: http.Server;
  let port: number;
  const hosts: string[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hosts.push(String(req.headers.host));
      res.end(`hello ${req.url}`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('is loopback-only under test', () => {
    expect(loopbackOnlyFromEnv({ NODE_ENV: 'test' })).toBe(true);
    expect(loopbackOnlyFromEnv({})).toBe(false);
    expect(loopbackOnlyFromEnv({ NODE_ENV: 'production', CTL_EGRESS_LOOPBACK_ONLY: '1' })).toBe(true);
    expect(new Egress().loopbackOnly).toBe(true);
  });

  it('maps a public-looking address to a loopback fake, keeping the Host header', async () => {
    const e = new Egress({ addressMap: { '203.0.113.7:30003': `127.0.0.1:${port}` }, loopbackOnly: true });
    const r = await e.fetch('http://203.0.113.7:30003/rpc');
    expect(await r.text()).toBe('hello /rpc');
    expect(hosts.at(-1)).toBe('203.0.113.7:30003');
    await e.close();
  });

  it('refuses an unmapped non-loopback destination instead of connecting', async () => {
    const e = new Egress({ loopbackOnly: true });
    await expect(e.fetch('http://203.0.113.8:30003/')).rejects.toThrow();
    await expect(e.resolve('203.0.113.8', 30003)).rejects.toThrow(/egress refused/);
    await expect(e.resolve('192.168.1.1', 80)).rejects.toThrow(/egress refused/);
    await expect(e.connect('198.51.100.1', 80)).rejects.toThrow(/egress refused/);
    await expect(e.resolve('127.0.0.1', 80)).resolves.toEqual({ host: '127.0.0.1', port: 80 });
    await e.close();
  });

  it('maps whole hosts too, and raw TCP connections pass the same policy', async () => {
    const e = new Egress({ addressMap: { 'api.example.test': `127.0.0.1:${port}` }, loopbackOnly: true });
    const r = await e.fetch('http://api.example.test/v1/models');
    expect(await r.text()).toBe('hello /v1/models');
    const s = await e.connect('api.example.test', 443);
    expect(s.remotePort).toBe(port);
    s.destroy();
    await e.close();
  });

  it('parses addresses and recognises loopback', () => {
    expect(parseHostPort('[::1]:80')).toEqual({ host: '::1', port: 80 });
    expect(parseHostPort('a.b:9')).toEqual({ host: 'a.b', port: 9 });
    expect(isLoopback('127.5.5.5')).toBe(true);
    expect(isLoopback('::1')).toBe(true);
    expect(isLoopback('::ffff:127.0.0.1')).toBe(true);
    expect(isLoopback('10.0.0.1')).toBe(false);
    expect(isLoopback('localhost')).toBe(false);
  });

  it('tells public addresses from the rest; the benchmarking range only on request', () => {
    expect(isPublicIPv4('203.0.113.7')).toBe(true);
    expect(isPublicIPv4('10.0.0.1')).toBe(false);
    expect(isPublicIPv4('198.18.0.9')).toBe(false);
    expect(isPublicIPv4('198.18.0.9', { allowBenchmarkRange: true })).toBe(true);
    expect(isPublicIPv4('::1')).toBe(false);
    expect(isPublicAddress('::ffff:192.168.1.1')).toBe(false);
    expect(isPublicAddress('2001:db8::1')).toBe(true);
  });
});
