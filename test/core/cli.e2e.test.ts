import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import YAML from 'yaml';
import { CTL, runCtl, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { freePort } from '../helpers/free-port.js';


describe('ctl CLI against a real daemon', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startDaemon({ daemonYaml: { name: 'cli-node', servers: { nodes: { address: '127.0.0.1:0' } } } });
  });
  afterAll(async () => {
    await d.cleanup();
  });

  it('ctl status shows name, version, uptime and every listener', async () => {
    const r = await d.cli(['status']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^name:\s+cli-node$/m);
    expect(r.stdout).toMatch(/^uptime:\s+\d+s$/m);
    expect(r.stdout).toMatch(/^nodes\s+127\.0\.0\.1:0\s+127\.0\.0\.1:\d+\s+listening\s+no/m);
    expect(r.stdout).toMatch(/^gateway\s+-\s+-\s+socket-only/m);
    const j = await d.cli(['-o', 'json', 'status']);
    expect(JSON.parse(j.stdout).servers.nodes.state).toBe('listening');
    const y = await d.cli(['status', '-o', 'yaml']);
    expect(YAML.parse(y.stdout).name).toBe('cli-node');
  });

  it('daemon config get/patch with --server, --remove-server, --failure-domain, --restart', async () => {
    const port = await freePort();
    let r = await d.cli(['daemon', 'config', 'patch', '--server', `gateway=127.0.0.1:${port}`, '--failure-domain', '3', '--restart']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`gateway\\s+127\\.0\\.0\\.1:${port}`));
    r = await d.cli(['-o', 'json', 'daemon', 'config', 'get']);
    const cfg = JSON.parse(r.stdout);
    expect(cfg.servers).toEqual({ nodes: { address: '127.0.0.1:0' }, gateway: { address: `127.0.0.1:${port}` } });
    expect(cfg['failure-domain']).toBe(3);
    r = await d.cli(['daemon', 'config', 'patch', '--remove-server', 'gateway']);
    expect(r.code).toBe(0);
    r = await d.cli(['-o', 'json', 'daemon', 'config', 'get']);
    expect(JSON.parse(r.stdout).servers).toEqual({ nodes: { address: '127.0.0.1:0' } });
  });

  it('daemon config put -f FILE (YAML and JSON, and stdin)', async () => {
    const yamlFile = join(d.dir, 'put.yaml');
    writeFileSync(yamlFile, 'servers:\n  nodes: {address: "127.0.0.1:0"}\n  pipeline: {address: ""}\nfailure-domain: 8\n');
    let r = await d.cli(['daemon', 'config', 'put', '-f', yamlFile]);
    expect(r.code, r.stderr).toBe(0);
    r = await d.cli(['-o', 'json', 'daemon', 'config', 'get']);
    expect(JSON.parse(r.stdout)).toMatchObject({ servers: { nodes: { address: '127.0.0.1:0' }, pipeline: { address: '' } }, 'failure-domain': 8 });
    r = await d.cli(['daemon', 'config', 'put', '-f', '-'], undefined, JSON.stringify({ servers: { nodes: { address: '127.0.0.1:0' } } }));
    expect(r.code, r.stderr).toBe(0);
    r = await d.cli(['-o', 'json', 'daemon', 'config', 'get']);
    expect(JSON.parse(r.stdout)['failure-domain']).toBe(0);
  });

  it('daemon servers get|set', async () => {
    let r = await d.cli(['daemon', 'servers', 'set', 'nodes=127.0.0.1:0', 'alertmanager=']);
    expect(r.code, r.stderr).toBe(0);
    r = await d.cli(['-o', 'json', 'daemon', 'servers', 'get']);
    expect(JSON.parse(r.stdout)).toEqual({ nodes: { address: '127.0.0.1:0' }, alertmanager: { address: '' } });
  });

  it('exit 1 with the API message when the daemon refuses', async () => {
    const r = await d.cli(['daemon', 'config', 'patch', '--server', 'nosuch=127.0.0.1:1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('Error: No matching additional listener found for "nosuch"\n');
    const imm = await d.cli(['daemon', 'config', 'put', '-f', '-'], undefined, 'name: renamed\n');
    expect(imm.code).toBe(1);
    expect(imm.stderr).toMatch(/Name is immutable/);
  });

  it('exit 2 on usage errors', async () => {
    expect((await d.cli(['daemon', 'config', 'patch', '--failure-domain', 'x'])).code).toBe(2);
    expect((await d.cli(['daemon', 'config', 'patch', '--server', 'nonsense'])).code).toBe(2);
    expect((await d.cli(['no-such-command'])).code).toBe(2);
    expect((await d.cli(['-o', 'xml', 'status'])).code).toBe(2);
  });

  it('--help exits 0 and documents the commands', async () => {
    const r = await runCtl(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/serve/);
    expect(r.stdout).toMatch(/daemon/);
    const p = await runCtl(['daemon', 'config', 'patch', '--help']);
    expect(p.stdout).toMatch(/--remove-server/);
  });

  it('exits quietly when its reader goes away (ctl status | true)', async () => {
    // `true` exits at once; ctl writes only after its round trip to the daemon, into a closed pipe.
    const script = `set -o pipefail; "${process.execPath}" "${CTL}" --state-dir "${d.dir}" status 2>"${d.dir}/epipe.err" | true`;
    const r = spawnSync('bash', ['-c', script], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(0);
    expect(readFileSync(join(d.dir, 'epipe.err'), 'utf8')).toBe('');
  });
});

describe('ctl without a daemon', () => {
  it('exits 3 with one clear line', async () => {
    const r = await runCtl(['--socket', '/nonexistent/ctl.sock', 'status']);
    expect(r.code).toBe(3);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/cannot reach the ctl daemon at \/nonexistent\/ctl\.sock/);
  });

});
