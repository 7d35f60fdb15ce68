/**
 * The Core API cluster with three real daemons: bootstrap, tokens, join, members with heartbeats
 * and failure domains, mTLS trust on the cluster address, removal, the pre-init listener turned
 * off for good, and a restart of a member.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { generateSelfSigned } from '../../src/daemon/certificates.js';
import { freePort } from '../helpers/free-port.js';
import { until } from '../helpers/until.js';



/** An HTTPS request to a cluster address, with a client certificate or none. */
function tcp(address: string, method: string, path: string, cert?: { cert: string; key: string }): Promise<{ status: number; json: any }> {
  const [host, port] = address.split(':');
  return new Promise((resolve, reject) => {
    const req = https.request({ host, port: Number(port), method, path, rejectUnauthorized: false, ...(cert ?? {}) }, (res) => {
      let b = '';
      res.on('data', (c) => (b += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: b ? JSON.parse(b) : undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });

const ctlYaml = (extra: Record<string, unknown> = {}) => ({ core: { 'heartbeat-interval': '300ms' }, ...extra });

describe('Core API cluster', () => {
  let a: TestDaemon;
  let b: TestDaemon;
  let c: TestDaemon;
  let addr: Record<string, string>;
  let preInitPort: number;

  beforeAll(async () => {
    preInitPort = await freePort();
    addr = { a: `127.0.0.1:${await freePort()}`, b: `127.0.0.1:${await freePort()}`, c: `127.0.0.1:${await freePort()}` };
    [a, b, c] = await Promise.all([
      startDaemon({ ctlYaml: ctlYaml({ 'pre-init-listen-address': `127.0.0.1:${preInitPort}` }) }),
      startDaemon({ ctlYaml: ctlYaml() }),
      startDaemon({ ctlYaml: ctlYaml() }),
    ]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.cleanup(), b?.cleanup(), c?.cleanup()]);
  });

  const members = async (d: TestDaemon) => (await d.request('core', 'GET', '/core/1.0/cluster')).json.metadata as { name: string; status: string; failure_domain: number; role: string; certificate_fingerprint: string; address: string }[];
  const serverCert = (d: TestDaemon) => ({ cert: readFileSync(join(d.dir, 'certificates/server.crt'), 'utf8'), key: readFileSync(join(d.dir, 'certificates/server.key'), 'utf8') });

  it('before bootstrap: no member list, and the pre-init listener answers', async () => {
    const r = await a.request('core', 'GET', '/core/1.0/cluster');
    expect(r.status).toBe(503);
    expect(r.json.error).toMatch(/not been initialized/);
    expect(await refused(preInitPort)).toBe(false);
  });

  it('bootstrap: one ONLINE member; the pre-init listener is off for good; the cluster address serves HTTPS', async () => {
    const out = await a.cli(['cluster', 'bootstrap', '--name', 'a', '--address', addr.a!]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/^NAME\s+ADDRESS\s+ROLE\s+FAILURE DOMAIN\s+STATUS/m);
    const list = await members(a);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ name: 'a', address: addr.a, status: 'ONLINE', role: 'voter' });
    expect(list[0]!.certificate_fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(await refused(preInitPort)).toBe(true);
    const info = await tcp(addr.a!, 'GET', '/core/1.0');
    expect(info.status).toBe(200);
    expect(info.json.metadata).toMatchObject({ name: 'a', address: addr.a });
    // A second bootstrap is refused.
    expect((await a.request('core', 'POST', '/core/control', { bootstrap: true, address: addr.a })).status).toBe(409);
  });

  it('tokens: made, listed, revoked; control endpoints do not exist over TCP', async () => {
    const made = await a.request('core', 'POST', '/core/control/tokens', { name: 'x', expire_after: 3_600_000_000_000 });
    expect(made.status).toBe(200);
    const t = JSON.parse(Buffer.from(made.json.metadata, 'base64').toString());
    expect(t).toMatchObject({ join_addresses: [addr.a] });
    expect(t.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    const listed = await a.cli(['-o', 'json', 'cluster', 'token', 'list']);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ name: 'x', token: made.json.metadata })]);
    expect((await a.request('core', 'POST', '/core/control/tokens', { name: 'x' })).status).toBe(409);
    expect((await a.cli(['cluster', 'token', 'revoke', 'x'])).code).toBe(0);
    expect((await a.request('core', 'GET', '/core/control/tokens')).json.metadata).toEqual([]);
    expect((await tcp(addr.a!, 'GET', '/core/control/tokens', serverCert(a))).status).toBe(404);
  });

  it('join: b joins with a token; both list both; heartbeats make b ONLINE; failure domains travel', async () => {
    const tok = await a.cli(['cluster', 'token', 'add', 'b', '--expire-after', '1h']);
    expect(tok.code, tok.stderr).toBe(0);
    const token = tok.stdout.trim();
    // The token is for b: another name is refused, and refused before anything changes.
    expect((await c.request('core', 'POST', '/core/control', { join_token: token, name: 'c', address: addr.c })).status).toBe(400);
    const joined = await b.cli(['cluster', 'join', token, '--name', 'b', '--address', addr.b!]);
    expect(joined.code, joined.stderr).toBe(0);
    await until('a and b to see each other ONLINE', async () => {
      const [la, lb] = [await members(a), await members(b)];
      return la.length === 2 && lb.length === 2 && [...la, ...lb].every((m) => m.status === 'ONLINE');
    });
    // The token is spent.
    expect((await a.request('core', 'GET', '/core/control/tokens')).json.metadata).toEqual([]);
    expect((await b.request('core', 'PATCH', '/core/1.0/daemon/config', { 'failure-domain': 2 })).status).toBe(200);
    await until('a to learn b\'s failure domain', async () => (await members(a)).find((m) => m.name === 'b')?.failure_domain === 2);
  });

  it('trust on the cluster address: members\' certificates only', async () => {
    expect((await tcp(addr.a!, 'GET', '/core/1.0/cluster')).status).toBe(403);
    const stranger = await generateSelfSigned('stranger');
    expect((await tcp(addr.a!, 'GET', '/core/1.0/cluster', stranger)).status).toBe(403);
    expect((await tcp(addr.a!, 'POST', '/core/internal/heartbeat', stranger)).status).toBe(403);
    const asB = await tcp(addr.a!, 'GET', '/core/1.0/cluster', serverCert(b));
    expect(asB.status).toBe(200);
    expect(asB.json.metadata.map((m: { name: string }) => m.name)).toEqual(['a', 'b']);
    // Changes to a daemon stay on its own socket, even for members.
    expect((await tcp(addr.a!, 'DELETE', '/core/1.0/cluster/b', serverCert(b))).status).toBe(403);
  });

  it('GET /core/1.0 on the cluster address: the public fields only, unless the client is a member', async () => {
    for (const who of [undefined, await generateSelfSigned('stranger')]) {
      const r = await tcp(addr.a!, 'GET', '/core/1.0', who);
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ type: 'sync', status: 'Success', status_code: 200, error_code: 0, error: '', operation: '' });
      expect(Object.keys(r.json.metadata).sort()).toEqual(['address', 'extensions', 'name', 'ready', 'version']);
      expect(r.json.metadata).toMatchObject({ name: 'a', address: addr.a, ready: true });
      expect(r.json.metadata.extensions).toContain('cluster_v1');
    }
    const asB = await tcp(addr.a!, 'GET', '/core/1.0', serverCert(b));
    expect(asB.status).toBe(200);
    expect(asB.json.metadata).toMatchObject({ name: 'a', state_dir: expect.any(String), pid: expect.any(Number), servers: expect.any(Object) });
    expect(Object.keys(asB.json.metadata.servers).length).toBeGreaterThan(0);
    const viaSocket = await a.request('core', 'GET', '/core/1.0');
    expect(Object.keys(viaSocket.json.metadata).sort()).toEqual(Object.keys(asB.json.metadata).sort());
  });

  const tokenNames = async (d: TestDaemon) => ((await d.request('core', 'GET', '/core/control/tokens')).json.metadata as { name: string }[]).map((t) => t.name);

  it('join tokens are the cluster\'s: every member lists them; a revocation anywhere holds everywhere', async () => {
    expect((await a.request('core', 'POST', '/core/control/tokens', { name: 'd' })).status).toBe(200);
    expect(await tokenNames(b)).toEqual(['d']);
    expect((await b.request('core', 'DELETE', '/core/1.0/tokens/d')).status).toBe(200);
    expect(await tokenNames(a)).toEqual([]);
  });

  it('a third member joins through another member while the token\'s issuer is down; every member learns of it', async () => {
    const token = (await b.request('core', 'POST', '/core/control/tokens', { name: 'c' })).json.metadata as string;
    expect(JSON.parse(Buffer.from(token, 'base64').toString()).join_addresses).toEqual([addr.b, addr.a]);
    await b.stop();
    const r = await c.request('core', 'POST', '/core/control', { join_token: token, name: 'c', address: addr.c });
    expect(r.status, r.text).toBe(200);
    expect(await tokenNames(a)).toEqual([]);
    await b.start();
    await b.waitReady();
    for (const d of [a, b, c]) await until('three members everywhere', async () => (await members(d)).filter((m) => m.status === 'ONLINE').length === 3);
    // The issuer missed the join: it learns the token was used and no longer offers it.
    await until('b to forget the used token', async () => (await tokenNames(b)).length === 0);
  }, 40_000);

  it('remove: every member forgets c; c leaves and stops serving its cluster address', async () => {
    const out = await a.cli(['cluster', 'remove', 'c']);
    expect(out.code, out.stderr).toBe(0);
    for (const d of [a, b]) await until('c gone', async () => (await members(d)).map((m) => m.name).join() === 'a,b');
    await until('c to leave', async () => (await c.request('core', 'GET', '/core/1.0/cluster')).status === 503);
    expect(await refused(Number(addr.c!.split(':')[1]))).toBe(true);
    expect((await a.request('core', 'DELETE', '/core/1.0/cluster/a')).status).toBe(400);
    expect((await a.request('core', 'DELETE', '/core/1.0/cluster/zzz')).status).toBe(404);
  });

  it('a restarted member serves its cluster address again, keeps its members, and has no pre-init listener', async () => {
    await a.restart();
    expect((await members(a)).map((m) => m.name)).toEqual(['a', 'b']);
    expect((await tcp(addr.a!, 'GET', '/core/1.0')).status).toBe(200);
    expect(await refused(preInitPort)).toBe(true);
    await until('b ONLINE again on a', async () => (await members(a)).every((m) => m.status === 'ONLINE'));
  }, 30_000);

  it('bad requests are 400s in the envelope', async () => {
    for (const body of [{}, { bootstrap: true, join_token: 'x' }, { join_token: 'not base64 json!' }, { join_token: Buffer.from('{}').toString('base64'), address: '127.0.0.1:1' }]) {
      const r = await c.request('core', 'POST', '/core/control', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json).toMatchObject({ type: 'error', error_code: 400 });
    }
    expect((await c.request('core', 'POST', '/core/control', { bootstrap: true, name: 'bad name!', address: '127.0.0.1:1' })).status).toBe(400);
    expect((await c.request('core', 'POST', '/core/control', { bootstrap: true, name: 'c', address: 'nowhere' })).status).toBe(400);
    expect((await a.request('core', 'POST', '/core/control/tokens', { name: 'y', expire_after: 'soon' })).status).toBe(400);
  });
});
