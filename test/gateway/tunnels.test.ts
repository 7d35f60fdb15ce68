/**
 * Tunnels with fake cloudflared and tailscale programs on a temporary PATH: status from the real
 * binary (installed, version), enable starts a supervised child and reads its public URL, a child that
 * dies is restarted, disable stops it, a missing program answers 409 with the reason, and an enabled
 * tunnel comes back when the gateway starts again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type GatewayHarness } from './harness.js';

const root = mkdtempSync(join(tmpdir(), 'ctl-tunnels-'));
const bin = join(root, 'bin');
const argsLog = join(root, 'args.log');
let gw: GatewayHarness;

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
  mkdirSync(bin, { recursive: true });
  // A quick tunnel that prints its address on stderr as cloudflared does, then stays up.
  writeFileSync(
    join(bin, 'cloudflared'),
    `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "cloudflared version 2025.1.0 (built 2025-01-01)"; exit 0; fi\necho "$@" >> ${argsLog}\necho "INF Requesting new quick Tunnel on trycloudflare.com..." >&2\necho "INF |  https://quiet-lake-1234.trycloudflare.com  |" >&2\nexec sleep 300\n`,
  );
  chmodSync(join(bin, 'cloudflared'), 0o755);
  mkdirSync(join(root, 'state'));
  gw = await startGateway({ dir: join(root, 'state'), env: { PATH: `${bin}:/usr/bin:/bin` } });
});
afterAll(async () => {
  await gw.close();
  rmSync(root, { recursive: true, force: true });
});

describe('tunnels', () => {
  it('reports what is installed; enable starts the child and reads its public URL; a dead child is restarted; disable stops it', async () => {
    const s = await gw.req('GET', '/api/tunnels/tunnel-a');
    expect(s.status).toBe(200);
    expect(s.json).toMatchObject({ id: 'tunnel-a', kind: 'cloudflared', installed: true, version: '2025.1.0', enabled: false, running: false, publicUrl: null });

    const on = await gw.req('POST', '/api/tunnels/tunnel-a', { action: 'enable', target: 'http://127.0.0.1:20128' });
    expect(on.status, on.text).toBe(200);
    expect(on.json).toMatchObject({ enabled: true, running: true, publicUrl: 'https://quiet-lake-1234.trycloudflare.com', target: 'http://127.0.0.1:20128' });
    expect(readFileSync(argsLog, 'utf8').trim()).toBe('tunnel --no-autoupdate --url http://127.0.0.1:20128');
    const pid = on.json.pid as number;
    expect(alive(pid)).toBe(true);

    // The child dies: the supervisor starts another after a second.
    process.kill(pid, 'SIGKILL');
    await until(async () => {
      const r = (await gw.req('GET', '/api/tunnels/tunnel-a')).json;
      return r.running && r.pid !== pid && r.restarts === 1;
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

  it('an enabled tunnel comes back when the gateway starts again', async () => {
    expect((await gw.req('POST', '/api/tunnels/tunnel-a', { action: 'enable', target: 'http://127.0.0.1:20129' })).json.running).toBe(true);
    const dir = gw.dir;
    await gw.close();
    gw = await startGateway({ dir, env: { PATH: `${bin}:/usr/bin:/bin` } });
    gw.instance.start?.();
    await until(async () => (await gw.req('GET', '/api/tunnels/tunnel-a')).json.publicUrl !== null);
    expect((await gw.req('GET', '/api/tunnels/tunnel-a')).json).toMatchObject({ enabled: true, running: true, target: 'http://127.0.0.1:20129' });
    await gw.req('POST', '/api/tunnels/tunnel-a', { action: 'disable' });
  });
});
