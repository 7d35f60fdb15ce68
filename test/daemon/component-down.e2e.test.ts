import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

/** One rule for every component: a bad file at start keeps that component down, never the daemon. */
describe('a component with a bad configuration file', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startDaemon({
      files: {
        'gateway.yaml': 'providers: 7\n',
        'alertmanager.yml': 'route:\n  receiver: nope\nreceivers: [{name: x}]\n',
      },
    });
  });
  afterAll(async () => {
    await d.cleanup();
  });

  it('stays down with 503 and the reason, on its listener and its socket host; the other APIs run', async () => {
    const gw = await d.request('gateway', 'GET', '/v1/models');
    expect(gw.status).toBe(503);
    expect(gw.json.error).toMatch(/^gateway is down: .*gateway\.yaml/);
    const am = await fetch(`${await d.baseUrl('alertmanager')}/api/v2/status`);
    expect(am.status).toBe(503);
    expect(((await am.json()) as { error: string }).error).toMatch(/^alertmanager is down: .*alertmanager\.yml.*nope/);
    expect((await d.request('core', 'GET', '/core/1.0/ready')).status).toBe(200);
    expect((await d.request('nodes', 'GET', '/api/nodes')).status).toBeLessThan(500);
    expect((await d.request('pipeline', 'GET', '/api/system/health')).status).toBe(200);
    // An answer ctl chose is a one-line warning, not an error with a stack trace.
    await d.waitLog(/request answered with an error/);
    expect(d.log).not.toMatch(/"stack":"HttpError: gateway is down/);
  });

  it('ctl status shows which component is down and why, and exits 5', async () => {
    const r = await d.cli(['status']);
    expect(r.code).toBe(5);
    expect(r.stdout).toMatch(/^gateway\s.*\sdown\s.*gateway\.yaml/m);
    expect(r.stdout).toMatch(/^nodes\s.*\srunning/m);
    expect(r.stderr).toMatch(/^ctl: component gateway is down: .*gateway\.yaml/m);
    expect(r.stderr).toMatch(/^ctl: component alertmanager is down: .*nope/m);
    const json = await d.cli(['-o', 'json', 'status']);
    expect(json.code).toBe(5);
    const j = JSON.parse(json.stdout);
    expect(j.servers.alertmanager).toMatchObject({ component: 'down', state: 'listening' });
    expect(j.servers.alertmanager.component_error).toMatch(/nope/);
  });

  it('SIGHUP with the file still bad keeps it down and does not say the configuration was reloaded', async () => {
    const from = d.log.length;
    d.signal('SIGHUP');
    await d.waitLog(/configuration reload finished with errors/, 5000, from);
    const after = d.log.slice(from);
    expect(after).toMatch(/reload of gateway failed; it stays down/);
    expect(after).not.toMatch(/"msg":"configuration reloaded"/);
    expect((await d.request('gateway', 'GET', '/v1/models')).status).toBe(503);
  });

  it('SIGHUP after the files are fixed brings both up on the listeners they already had', async () => {
    writeFileSync(join(d.dir, 'gateway.yaml'), 'providers: []\n');
    writeFileSync(join(d.dir, 'alertmanager.yml'), 'route:\n  receiver: x\nreceivers: [{name: x}]\n');
    const from = d.log.length;
    d.signal('SIGHUP');
    await d.waitLog(/"msg":"configuration reloaded"/, 5000, from);
    expect((await d.request('gateway', 'GET', '/v1/models')).status).toBe(200);
    const am = await fetch(`${await d.baseUrl('alertmanager')}/api/v2/receivers`);
    expect(await am.json()).toEqual([{ name: 'x' }]);
    const st = await d.cli(['-o', 'json', 'status']);
    expect(st.code).toBe(0);
    const j = JSON.parse(st.stdout);
    expect(j.servers.gateway.component).toBe('running');
    expect(j.servers.gateway.component_error).toBeUndefined();
  });
});
