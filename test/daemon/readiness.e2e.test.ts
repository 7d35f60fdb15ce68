import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { TestDaemon } from '../helpers/daemon.js';

/** A daemon that is waited for until its control socket answers, ready or not. */
class UnreadyDaemon extends TestDaemon {
  override async waitReady(timeoutMs = 20_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!/ctl daemon (not )?ready/.test(this.log)) {
      if (this.child.exitCode !== null) throw new Error(`daemon exited with ${this.child.exitCode}:\n${this.log}`);
      if (Date.now() > until) throw new Error(`daemon did not finish starting:\n${this.log}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

const listen = async (): Promise<net.Server> => {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return s;
};

describe('a daemon whose every listener failed', () => {
  let d: UnreadyDaemon;
  let blockers: net.Server[];
  beforeAll(async () => {
    blockers = [await listen(), await listen()];
    const [a, b] = blockers.map((s) => (s.address() as net.AddressInfo).port);
    const dir = mkdtempSync(join(tmpdir(), 'ctl-unready-'));
    writeFileSync(join(dir, 'daemon.yaml'), YAML.stringify({ servers: { alertmanager: { address: `127.0.0.1:${a}` }, nodes: { address: `127.0.0.1:${b}` } } }));
    d = new UnreadyDaemon(dir, {});
    await d.start();
  });
  afterAll(async () => {
    for (const s of blockers) s.close();
    await d?.cleanup();
  });

  it('says it is not ready, and never that it is', async () => {
    expect(d.log).toMatch(/ctl daemon not ready: No listener is up: alertmanager on 127\.0\.0\.1:\d+: .*EADDRINUSE/);
    expect(d.log).not.toMatch(/"msg":"ctl daemon ready"/);
    const ready = await d.request('core', 'GET', '/core/1.0/ready');
    expect(ready.status).toBe(503);
    expect(ready.json.error).toMatch(/^No listener is up/);
    expect((await d.request('core', 'GET', '/core/1.0')).json.metadata.ready).toBe(false);
  });

  it('ctl status exits 4 with the reason', async () => {
    const r = await d.cli(['status']);
    expect(r.code).toBe(4);
    expect(r.stdout).toMatch(/^ready:\s+false/m);
    expect(r.stderr).toMatch(/^ctl: daemon not ready: No listener is up: alertmanager on 127\.0\.0\.1:\d+: .*EADDRINUSE.*; nodes on/m);
    expect((await d.cli(['-o', 'json', 'status'])).code).toBe(4);
  });

  it('becomes ready once an address is free and SIGHUP binds it again', async () => {
    await new Promise((r) => blockers[0]!.close(r));
    const from = d.log.length;
    d.signal('SIGHUP');
    await d.waitLog(/"msg":"ctl daemon ready"/, 5000, from);
    expect((await d.request('core', 'GET', '/core/1.0/ready')).status).toBe(200);
    const am = await fetch(`${await d.baseUrl('alertmanager')}/api/v2/status`);
    expect(am.status).toBe(200);
    // Ready, but nodes still cannot listen: something is down.
    const r = await d.cli(['status']);
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/^ctl: server nodes cannot listen on/m);
  });
});
