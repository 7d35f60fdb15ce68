/**
 * Tunnels with fake cloudflared and tailscale programs on a temporary PATH: status from the real
 * binary (installed, version), enable starts a supervised child and reads its public URL, a child that
 * dies is restarted, disable stops it, a missing program answers 409 with the reason, and an enabled
 * tunnel comes back when the gateway starts again.
 *
 * The public address the fake prints is checked with a probe through it: the egress address map sends
 * `*.trycloudflare.com:443` to a loopback HTTPS "edge" (a test CA's certificate for the name) that
 * forwards to the gateway's TCP listener, as the real edge forwards to the tunnel's target, or, for an
 * address that does not reach ctl, answers by itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type GatewayHarness } from './harness.js';
import { createTestCa, type TestCa } from '../helpers/test-pki.js';

const root = mkdtempSync(join(tmpdir(), 'ctl-tunnels-'));
const bin = join(root, 'bin');
const argsLog = join(root, 'args.log');
/** The host name the fake cloudflared prints (read by the script at each start). */
const hostFile = join(root, 'host');
const GOOD = 'quiet-lake-1234.trycloudflare.com';
const DEAD_END = 'dead-end-5678.trycloudflare.com';
const UNMAPPED = 'nowhere-9999.trycloudflare.com';
let gw: GatewayHarness;
let ca: TestCa;
let edge: HttpsServer;
/** Paths the edge saw, by host. */
const edgeSaw: string[] = [];

/**
 * The gateway's egress, with the test CA trusted for the probe (the daemon trusts the system's CAs;
 * a test cannot add one to those in-process). Everything else about the connection is the egress's
 * own: the address map, loopback-only.
 */
function trustTestCa(h: GatewayHarness): void {
  const own = h.egress.request.bind(h.egress);
  h.egress.request = (url, opts) => own(url, opts, h.egress.pooled(1, { ca: ca.ca }));
  const port = (edge.address() as AddressInfo).port;
  h.egress.addMapping(`${GOOD}:443`, `127.0.0.1:${port}`);
  h.egress.addMapping(`${DEAD_END}:443`, `127.0.0.1:${port}`);
}
const startGw = async (dir: string) => {
  const h = await startGateway({ dir, env: { PATH: `${bin}:/usr/bin:/bin` }, config: { tunnels: { probe_timeout_ms: 4000 } } });
  trustTestCa(h);
  return h;
};

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const until = async (what: () => Promise<boolean> | boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
};

beforeAll(async () => {
  ca = await createTestCa();
  const cert = await ca.server([GOOD, DEAD_END]);
  // The edge: requests for GOOD go on to the gateway's TCP listener (where auth applies, as it does
  // for whatever comes through a tunnel); DEAD_END answers by itself, as a tunnel to the wrong place would.
  edge = createHttpsServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    edgeSaw.push(`${req.headers.host}${req.url}`);
    if (req.headers.host !== GOOD) {
      res.writeHead(404).end('no such tunnel');
      return;
    }
    const up = httpRequest(`${gw.tcpUrl}${req.url}`, { method: req.method, headers: { ...req.headers, host: new URL(gw.tcpUrl).host } }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  });
  await new Promise<void>((r) => edge.listen(0, '127.0.0.1', r));
  writeFileSync(hostFile, GOOD);
  mkdirSync(bin, { recursive: true });
  // A quick tunnel that prints its address on stderr as cloudflared does, then stays up.
  writeFileSync(
    join(bin, 'cloudflared'),
    `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "cloudflared version 2025.1.0 (built 2025-01-01)"; exit 0; fi\necho "$@" >> ${argsLog}\necho "INF Requesting new quick Tunnel on trycloudflare.com..." >&2\necho "INF |  https://$(cat ${hostFile})  |" >&2\nexec sleep 300\n`,
  );
  chmodSync(join(bin, 'cloudflared'), 0o755);
  mkdirSync(join(root, 'state'));
  gw = await startGw(join(root, 'state'));
});
afterAll(async () => {
  await gw.close();
  await new Promise((r) => edge.close(r));
  rmSync(root, { recursive: true, force: true });
});

describe('tunnels', () => {
  it('reports what is installed; enable starts the child and reads its public URL; a dead child is restarted; disable stops it', async () => {
    const s = await gw.req('GET', '/api/tunnels/tunnel-a');
    expect(s.status).toBe(200);
    expect(s.json).toMatchObject({ id: 'tunnel-a', kind: 'cloudflared', installed: true, version: '2025.1.0', enabled: false, running: false, publicUrl: null, live: false, probe: null });

    const on = await gw.req('POST', '/api/tunnels/tunnel-a', { action: 'enable', target: 'http://127.0.0.1:20128' });
    expect(on.status, on.text).toBe(200);
    expect(on.json).toMatchObject({
      enabled: true,
      running: true,
      publicUrl: 'https://quiet-lake-1234.trycloudflare.com',
      target: 'http://127.0.0.1:20128',
      live: true,
      probe: { state: 'reached', url: 'https://quiet-lake-1234.trycloudflare.com', error: null },
    });
    // The probe went through the edge, to a random path that answers only while its probe waits.
    const probed = edgeSaw.find((p) => p.startsWith(`${GOOD}/.well-known/ctl-tunnel-probe/`))!;
    expect(probed).toMatch(/\/[0-9a-f]{32}$/);
    expect((await gw.req('GET', probed.slice(GOOD.length), undefined, {}, { tcp: true })).status).toBe(404);
    expect(readFileSync(argsLog, 'utf8').trim()).toBe('tunnel --no-autoupdate --url http://127.0.0.1:20128');
    const pid = on.json.pid as number;
    expect(alive(pid)).toBe(true);

    // The child dies: the supervisor starts another after a second.
    process.kill(pid, 'SIGKILL');
    await until(async () => {
      const r = (await gw.req('GET', '/api/tunnels/tunnel-a')).json;
      return r.running && r.pid !== pid && r.restarts === 1 && r.live;
    });
    const next = (await gw.req('GET', '/api/tunnels/tunnel-a')).json;
    expect(next.lastExit).toMatchObject({ signal: 'SIGKILL' });

    const off = await gw.req('POST', '/api/tunnels/tunnel-a', { action: 'disable' });
    expect(off.json).toMatchObject({ enabled: false, running: false, pid: null });
    await until(() => !alive(next.pid as number));
  });

  it('a missing program: the status says so and enable answers 409 with the reason', async () => {
    const s = await gw.req('GET', '/api/tunnels/tunnel-b');
    expect(s.json).toMatchObject({ id: 'tunnel-b', kind: 'tailscale-funnel', installed: false, reason: expect.stringMatching(/tailscale is not installed/) });
    const r = await gw.req('POST', '/api/tunnels/tunnel-b', { action: 'enable', target: 'http://127.0.0.1:20128' });
    expect(r.status).toBe(409);
    expect(r.json.error.message).toMatch(/Tailscale Funnel cannot start: tailscale is not installed/);
    expect((await gw.req('GET', '/api/tunnels/tunnel-c')).status).toBe(404);
    expect((await gw.req('POST', '/api/tunnels/tunnel-a', { action: 'launch' })).status).toBe(400);
    expect((await gw.req('POST', '/api/tunnels/tunnel-a', { action: 'enable' })).json.error.message).toMatch(/target is required/);
  });

  it('a program that exits at once: enable answers a failure with its exit status and output, and the tunnel is not left enabled', async () => {
    const good = readFileSync(join(bin, 'cloudflared'), 'utf8');
    writeFileSync(join(bin, 'cloudflared'), `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "cloudflared version 2025.1.0"; exit 0; fi\necho "ERR failed to request quick Tunnel: no route" >&2\nexit 3\n`);
    try {
      const r = await gw.req('POST', '/api/tunnels/tunnel-a', { action: 'enable', target: 'http://127.0.0.1:20128' });
      expect(r.status, r.text).toBe(502);
      expect(r.json.error).toMatchObject({ code: 'tunnel_exited', message: 'Cloudflare quick tunnel exited with status 3 before it published an address: ERR failed to request quick Tunnel: no route' });
      const s = (await gw.req('GET', '/api/tunnels/tunnel-a')).json;
      expect(s).toMatchObject({ enabled: false, running: false, publicUrl: null, lastExit: { code: 3 } });
      // Not restarted behind the caller's back.
      await new Promise((r) => setTimeout(r, 1500));
      expect((await gw.req('GET', '/api/tunnels/tunnel-a')).json).toMatchObject({ running: false, restarts: 0 });
    } finally {
      writeFileSync(join(bin, 'cloudflared'), good);
    }
  });

  it('an address that does not reach ctl: enable answers 502 with why, the tunnel is stopped, and the status keeps the failed probe', async () => {
    for (const [host, why] of [
      [DEAD_END, /a request through it was answered 404 by something other than ctl/],
      [UNMAPPED, /a request through it failed: ./],
    ] as const) {
      writeFileSync(hostFile, host);
      try {
        const r = await gw.req('POST', '/api/tunnels/tunnel-a', { action: 'enable', target: 'http://127.0.0.1:20128' });
        expect(r.status, r.text).toBe(502);
        expect(r.json.error.code).toBe('tunnel_unreachable');
        expect(r.json.error.message).toMatch(new RegExp(`^Cloudflare quick tunnel published https://${host.replace(/\./g, '\\.')} but no request through it reached ctl within 4 s \\(`));
        expect(r.json.error.message).toMatch(why);
        const s = (await gw.req('GET', '/api/tunnels/tunnel-a')).json;
        expect(s).toMatchObject({ enabled: false, running: false, live: false, probe: { state: 'failed', url: `https://${host}` } });
        expect(s.probe.error).toMatch(why);
      } finally {
        writeFileSync(hostFile, GOOD);
      }
    }
  });

  it('an enabled tunnel comes back when the gateway starts again', async () => {
    expect((await gw.req('POST', '/api/tunnels/tunnel-a', { action: 'enable', target: 'http://127.0.0.1:20129' })).json.running).toBe(true);
    const dir = gw.dir;
    await gw.close();
    gw = await startGw(dir);
    gw.instance.start?.();
    await until(async () => (await gw.req('GET', '/api/tunnels/tunnel-a')).json.live === true);
    expect((await gw.req('GET', '/api/tunnels/tunnel-a')).json).toMatchObject({ enabled: true, running: true, target: 'http://127.0.0.1:20129' });
    await gw.req('POST', '/api/tunnels/tunnel-a', { action: 'disable' });
  });
});
