import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import net from 'node:net';
import { execFileSync } from 'node:child_process';
import YAML from 'yaml';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { freePort } from '../helpers/free-port.js';

const ENVELOPE_KEYS = ['type', 'status', 'status_code', 'operation', 'error_code', 'error', 'metadata'].sort();


describe('Core API over the control socket', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startDaemon({ daemonYaml: { name: 'node-a', servers: {} } });
  });
  afterAll(async () => {
    await d.cleanup();
  });

  it('GET / lists /1.0 in a sync envelope with every key present', async () => {
    const r = await d.request('core', 'GET', '/');
    expect(r.status).toBe(200);
    expect(Object.keys(r.json).sort()).toEqual(ENVELOPE_KEYS);
    expect(r.json).toMatchObject({ type: 'sync', status: 'Success', status_code: 200, operation: '', error_code: 0, error: '', metadata: ['/1.0'] });
    expect(r.headers['content-type']).toBe('application/json');
  });

  it('GET /core/1.0 reports name, version, ready and extensions', async () => {
    const r = await d.request('core', 'GET', '/core/1.0');
    expect(r.json.metadata).toMatchObject({ name: 'node-a', address: '', ready: true });
    expect(typeof r.json.metadata.version).toBe('string');
    expect(Array.isArray(r.json.metadata.extensions)).toBe(true);
  });

  it('an unknown Host reaches the Core API too', async () => {
    const r = await d.request('no-such-server', 'GET', '/core/1.0/ready');
    expect(r.status).toBe(200);
  });

  it('curl --unix-socket works as documented', () => {
    let out: string;
    try {
      out = execFileSync('curl', ['-s', '--unix-socket', d.socket, 'http://core/core/1.0/daemon/config'], { encoding: 'utf8' });
    } catch {
      console.log('curl not installed: skipping the curl check');
      return;
    }
    expect(JSON.parse(out).metadata.name).toBe('node-a');
  });

  it('errors use the LXD envelope: 404 unknown path, 405 wrong method, 400 bad JSON', async () => {
    const nf = await d.request('core', 'GET', '/core/1.0/nope');
    expect(nf.status).toBe(404);
    expect(Object.keys(nf.json).sort()).toEqual(ENVELOPE_KEYS);
    expect(nf.json).toMatchObject({ type: 'error', error_code: 404, metadata: null, status: '', status_code: 0 });
    expect(nf.text.endsWith('\n')).toBe(true);

    const na = await d.request('core', 'DELETE', '/core/1.0/daemon/config');
    expect(na.status).toBe(405);
    expect(na.json.error_code).toBe(405);
    expect(na.headers.allow).toContain('PATCH');

    const bad = await d.request('core', 'PATCH', '/core/1.0/daemon/config', '{"servers": ');
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatch(/invalid JSON/);

    const arr = await d.request('core', 'PUT', '/core/1.0/daemon/config', '[]');
    expect(arr.status).toBe(400);
  });

  it('PUT: name and address are immutable', async () => {
    const a = await d.request('core', 'PUT', '/core/1.0/daemon/config', { name: 'other' });
    expect(a.status).toBe(400);
    expect(a.json.error).toBe('Name is immutable');
    const b = await d.request('core', 'PUT', '/core/1.0/daemon/config', { name: 'node-a', address: '10.0.0.1:7443' });
    expect(b.status).toBe(400);
    expect(b.json.error).toBe('Address is immutable');
    const same = await d.request('core', 'PUT', '/core/1.0/daemon/config', { name: 'node-a', address: '', 'failure-domain': 2 });
    expect(same.status).toBe(200);
    expect(same.json.metadata).toEqual({});
  });

  it('PUT replaces: omitted servers are cleared, omitted failure-domain resets to 0', async () => {
    let r = await d.request('core', 'PUT', '/core/1.0/daemon/config', { servers: { nodes: { address: '127.0.0.1:0' } }, 'failure-domain': 5 });
    expect(r.status).toBe(200);
    let cfg = (await d.request('core', 'GET', '/core/1.0/daemon/config')).json.metadata;
    expect(cfg.servers).toEqual({ nodes: { address: '127.0.0.1:0' } });
    expect(cfg['failure-domain']).toBe(5);
    r = await d.request('core', 'PUT', '/core/1.0/daemon/config', {});
    expect(r.status).toBe(200);
    cfg = (await d.request('core', 'GET', '/core/1.0/daemon/config')).json.metadata;
    expect(cfg).toEqual({ name: 'node-a', address: '', servers: {}, 'failure-domain': 0 });
    r = await d.request('core', 'PUT', '/core/1.0/daemon/config', { servers: null, 'failure-domain': 1 });
    expect(r.status).toBe(200);
    expect((await d.request('core', 'GET', '/core/1.0/daemon/config')).json.metadata.servers).toEqual({});
  });

  it('PATCH: omitted fields stay, servers replaces the map, {} clears, 0 resets, name/address ignored', async () => {
    await d.request('core', 'PUT', '/core/1.0/daemon/config', { servers: { nodes: { address: '127.0.0.1:0' } }, 'failure-domain': 4 });
    let r = await d.request('core', 'PATCH', '/core/1.0/daemon/config', { 'failure-domain': 7, name: 'ignored', address: 'ignored:1' });
    expect(r.status).toBe(200);
    let cfg = (await d.request('core', 'GET', '/core/1.0/daemon/config')).json.metadata;
    expect(cfg).toEqual({ name: 'node-a', address: '', servers: { nodes: { address: '127.0.0.1:0' } }, 'failure-domain': 7 });
    r = await d.request('core', 'PATCH', '/core/1.0/daemon/config', { servers: { gateway: { address: '' } } });
    cfg = (await d.request('core', 'GET', '/core/1.0/daemon/config')).json.metadata;
    expect(cfg.servers).toEqual({ gateway: { address: '' } });
    expect(cfg['failure-domain']).toBe(7);
    await d.request('core', 'PATCH', '/core/1.0/daemon/config', { servers: {}, 'failure-domain': 0 });
    cfg = (await d.request('core', 'GET', '/core/1.0/daemon/config')).json.metadata;
    expect(cfg.servers).toEqual({});
    expect(cfg['failure-domain']).toBe(0);
  });

  it('PATCH and PUT refuse unknown fields with 400 naming them, and change nothing', async () => {
    await d.request('core', 'PUT', '/core/1.0/daemon/config', { servers: {}, 'failure-domain': 5 });
    const before = readFileSync(join(d.dir, 'daemon.yaml'), 'utf8');
    const p = await d.request('core', 'PATCH', '/core/1.0/daemon/config', { failure_domain: 2 });
    expect(p.status).toBe(400);
    expect(p.json.error).toBe('unknown field "failure_domain"');
    const q = await d.request('core', 'PUT', '/core/1.0/daemon/config', { servers: {}, 'failure-domain': 1, extra: 1, other: 2 });
    expect(q.status).toBe(400);
    expect(q.json.error).toBe('unknown fields "extra", "other"');
    const s = await d.request('core', 'PATCH', '/core/1.0/daemon/config', { servers: { nodes: { adress: '127.0.0.1:0' } } });
    expect(s.status).toBe(400);
    expect(s.json.error).toBe('servers.nodes: unknown field "adress"');
    expect(readFileSync(join(d.dir, 'daemon.yaml'), 'utf8')).toBe(before);
  });

  it('rejects bad servers and failure domains with 400 and changes nothing', async () => {
    await d.request('core', 'PUT', '/core/1.0/daemon/config', { servers: { nodes: { address: '127.0.0.1:0' } }, 'failure-domain': 3 });
    const before = readFileSync(join(d.dir, 'daemon.yaml'), 'utf8');
    const cases: unknown[] = [
      { servers: { nosuch: { address: '127.0.0.1:0' } } },
      { servers: { nodes: { address: 'not an address' } } },
      { servers: { nodes: { address: '127.0.0.1:99999' } } },
      { servers: { nodes: 'x' } },
      { servers: [] },
      { 'failure-domain': -1 },
      { 'failure-domain': 1.5 },
      { 'failure-domain': 'two' },
    ];
    for (const body of cases) {
      const r = await d.request('core', 'PATCH', '/core/1.0/daemon/config', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.type).toBe('error');
    }
    const nomatch = await d.request('core', 'PATCH', '/core/1.0/daemon/config', { servers: { nosuch: { address: '127.0.0.1:0' } } });
    expect(nomatch.json.error).toBe('No matching additional listener found for "nosuch"');
    expect(readFileSync(join(d.dir, 'daemon.yaml'), 'utf8')).toBe(before);
  });

  it('restart query: true reopens databases and answers after it; garbage is 400', async () => {
    const r = await d.request('core', 'PATCH', '/core/1.0/daemon/config?restart=true', { 'failure-domain': 9 });
    expect(r.status).toBe(200);
    await d.waitLog(/databases restarted/);
    const bad = await d.request('core', 'PATCH', '/core/1.0/daemon/config?restart=maybe', { 'failure-domain': 9 });
    expect(bad.status).toBe(400);
  });

  it('legacy GET|PUT /core/1.0/daemon/servers', async () => {
    let r = await d.request('core', 'PUT', '/core/1.0/daemon/servers', { nodes: { address: '127.0.0.1:0' } });
    expect(r.status).toBe(200);
    r = await d.request('core', 'GET', '/core/1.0/daemon/servers');
    expect(r.json.metadata).toEqual({ nodes: { address: '127.0.0.1:0' } });
    r = await d.request('core', 'PUT', '/core/1.0/daemon/servers', { bogus: { address: '127.0.0.1:0' } });
    expect(r.status).toBe(400);
  });
});

describe('listeners follow the config', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startDaemon({ daemonYaml: { servers: { nodes: { address: '127.0.0.1:0' } } } });
  });
  afterAll(async () => {
    await d.cleanup();
  });

  async function servers() {
    return (await d.request('core', 'GET', '/core/1.0')).json.metadata.servers;
  }

  function connects(address: string): Promise<boolean> {
    const m = /^(.*):(\d+)$/.exec(address)!;
    return new Promise((resolve) => {
      const s = net.connect(Number(m[2]), m[1]!.replace(/^\[|\]$/g, ''));
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
  }

  it('port 0 is bound and reported', async () => {
    const s = await servers();
    expect(s.nodes.state).toBe('listening');
    expect(s.nodes.bound_address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(s.nodes.bound_address).not.toBe('127.0.0.1:0');
    expect(await connects(s.nodes.bound_address)).toBe(true);
  });

  it('a moved listener accepts before the PATCH response; the old one stops', async () => {
    const old = (await servers()).nodes.bound_address;
    const port = await freePort();
    const r = await d.request('core', 'PATCH', '/core/1.0/daemon/config', { servers: { nodes: { address: `127.0.0.1:${port}` } } });
    expect(r.status).toBe(200);
    expect(await connects(`127.0.0.1:${port}`)).toBe(true);
    expect(await connects(old)).toBe(false);
    const s = await servers();
    expect(s.nodes).toMatchObject({ address: `127.0.0.1:${port}`, bound_address: `127.0.0.1:${port}`, state: 'listening' });
  });

  it('an address in use gives 400 and leaves config and listeners as they were', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const taken = (blocker.address() as net.AddressInfo).port;
    const before = await servers();
    const yamlBefore = readFileSync(join(d.dir, 'daemon.yaml'), 'utf8');
    const r = await d.request('core', 'PATCH', '/core/1.0/daemon/config', { servers: { nodes: { address: `127.0.0.1:${taken}` } } });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe(`Address "127.0.0.1:${taken}" is already in use`);
    expect(await servers()).toEqual(before);
    expect(readFileSync(join(d.dir, 'daemon.yaml'), 'utf8')).toBe(yamlBefore);
    expect(await connects(before.nodes.bound_address)).toBe(true);
    blocker.close();
  });

  it('two servers on one address is 400', async () => {
    const port = await freePort();
    const r = await d.request('core', 'PATCH', '/core/1.0/daemon/config', {
      servers: { nodes: { address: `127.0.0.1:${port}` }, gateway: { address: `127.0.0.1:${port}` } },
    });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/already in use/);
  });

  it('a removed server stops accepting', async () => {
    const old = (await servers()).nodes.bound_address;
    const r = await d.request('core', 'PATCH', '/core/1.0/daemon/config', { servers: {} });
    expect(r.status).toBe(200);
    expect(await connects(old)).toBe(false);
    expect((await servers()).nodes.state).toBe('socket-only');
  });

  it('concurrent PATCHes: one wins whole and daemon.yaml is never torn', async () => {
    const ports = await Promise.all(Array.from({ length: 8 }, () => freePort()));
    const replies = await Promise.all(
      ports.map((p, i) =>
        d.request('core', 'PATCH', '/core/1.0/daemon/config', { servers: { nodes: { address: `127.0.0.1:${p}` } }, 'failure-domain': 100 + i }),
      ),
    );
    for (const r of replies) expect(r.status).toBe(200);
    const file = YAML.parse(readFileSync(join(d.dir, 'daemon.yaml'), 'utf8'));
    const cfg = (await d.request('core', 'GET', '/core/1.0/daemon/config')).json.metadata;
    expect(file).toEqual(cfg);
    const i = cfg['failure-domain'] - 100;
    expect(cfg.servers.nodes.address).toBe(`127.0.0.1:${ports[i]}`);
    expect(await connects(`127.0.0.1:${ports[i]}`)).toBe(true);
  });
});

describe('start-up and durability', () => {
  it('first start writes daemon.yaml with hostname, empty address, failure domain from --init-failure-domain', async () => {
    const d = await startDaemon({ daemonYaml: null, args: ['--init-failure-domain', '4'], ctlYaml: { servers: { alertmanager: { address: '127.0.0.1:0' }, gateway: { address: '127.0.0.1:0' }, pipeline: { address: '127.0.0.1:0' }, nodes: { address: '127.0.0.1:0' } } } });
    try {
      const cfg = YAML.parse(readFileSync(join(d.dir, 'daemon.yaml'), 'utf8'));
      expect(cfg.address).toBe('');
      expect(cfg['failure-domain']).toBe(4);
      expect(typeof cfg.name).toBe('string');
      expect(cfg.name.length).toBeGreaterThan(0);
    } finally {
      await d.cleanup();
    }
  });

  it('kill -9 then restart keeps the last acknowledged config; a stale socket is replaced', async () => {
    const d = await startDaemon({ daemonYaml: { servers: {} } });
    try {
      const r = await d.request('core', 'PATCH', '/core/1.0/daemon/config', { 'failure-domain': 42, servers: { nodes: { address: '127.0.0.1:0' } } });
      expect(r.status).toBe(200);
      await d.kill9();
      await d.start();
      const cfg = (await d.request('core', 'GET', '/core/1.0/daemon/config')).json.metadata;
      expect(cfg['failure-domain']).toBe(42);
      expect(cfg.servers).toEqual({ nodes: { address: '127.0.0.1:0' } });
    } finally {
      await d.cleanup();
    }
  });

  it('a second daemon on the same state dir says another one runs (its pid), before opening any database', async () => {
    const d = await startDaemon({ daemonYaml: { servers: {} } });
    try {
      // With alert data the second start used to fail later with SQLite's "database is locked".
      const alert = [{ labels: { alertname: 'Second' }, annotations: {} }];
      expect((await d.request('alertmanager', 'POST', '/api/v2/alerts', alert)).status).toBe(200);
      const second = await d.cli(['serve']);
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`another ctl daemon is running on state dir ${d.dir} (pid ${d.child.pid})`);
      expect(second.stderr).not.toMatch(/database is locked/);
      expect((await d.request('core', 'GET', '/core/1.0/ready')).status).toBe(200);
    } finally {
      await d.cleanup();
    }
  });

  it('SIGTERM exits 0 even when whoever read the log went away (stdout is a broken pipe)', async () => {
    const d = await startDaemon({ daemonYaml: { servers: {} } });
    try {
      d.child.stdout!.destroy();
      d.child.stderr!.destroy();
      d.signal('SIGTERM');
      const code = await Promise.race([d.waitExit(), new Promise((r) => setTimeout(() => r('hung'), 5000))]);
      expect(code).toBe(0);
    } finally {
      await d.cleanup();
    }
  });

  it('SIGTERM drains and exits 0', async () => {
    const d = await startDaemon({ daemonYaml: { servers: {} } });
    try {
      d.signal('SIGTERM');
      expect(await d.waitExit()).toBe(0);
    } finally {
      await d.cleanup();
    }
  });

  it('a server whose address cannot be bound is reported, the others still run; ctl status exits 5', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const taken = (blocker.address() as net.AddressInfo).port;
    const d = await startDaemon({ daemonYaml: { servers: { nodes: { address: `127.0.0.1:${taken}` }, pipeline: { address: '127.0.0.1:0' } } } });
    try {
      const s = (await d.request('core', 'GET', '/core/1.0')).json.metadata.servers;
      expect(s.nodes.state).toBe('failed');
      expect(s.nodes.error).toMatch(/EADDRINUSE/);
      expect(s.pipeline.state).toBe('listening');
      await d.waitLog(/could not listen/);
      const st = await d.cli(['status']);
      expect(st.code).toBe(5);
      expect(st.stdout).toMatch(/nodes\s+127\.0\.0\.1:\d+\s+-\s+failed/);
      expect(st.stderr).toMatch(new RegExp(`^ctl: server nodes cannot listen on 127\\.0\\.0\\.1:${taken}: .*EADDRINUSE`, 'm'));
    } finally {
      blocker.close();
      await d.cleanup();
    }
  });

  it('a dedicated certificate makes the listener serve HTTPS with a P-384 key written to certificates/', async () => {
    const d = await startDaemon({ daemonYaml: { servers: { nodes: { address: '127.0.0.1:0' } } }, ctlYaml: { servers: { nodes: { 'dedicated-certificate': true } } } });
    try {
      const s = (await d.request('core', 'GET', '/core/1.0')).json.metadata.servers;
      expect(s.nodes.tls).toBe(true);
      const crt = readFileSync(join(d.dir, 'certificates', 'nodes.crt'), 'utf8');
      const { X509Certificate } = await import('node:crypto');
      const x = new X509Certificate(crt);
      expect(x.publicKey.asymmetricKeyDetails?.namedCurve).toBe('secp384r1');
      const tls = await import('node:tls');
      const [host, port] = s.nodes.bound_address.split(':');
      const peer = await new Promise<string>((resolve, reject) => {
        const sock = tls.connect({ host, port: Number(port), rejectUnauthorized: false }, () => {
          resolve(sock.getPeerCertificate().fingerprint256);
          sock.destroy();
        });
        sock.once('error', reject);
      });
      expect(peer).toBe(x.fingerprint256);
    } finally {
      await d.cleanup();
    }
  });
});
