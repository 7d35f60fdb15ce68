/** The operations CLI against the real daemon: proxies, registered keys, the reasoning cache, repair. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startConnectProxy, type FakeProxy } from '../fakes/proxies.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

let d: TestDaemon;
let proxy: FakeProxy;

beforeAll(async () => {
  proxy = await startConnectProxy();
  d = await startDaemon({
    files: { 'gateway.yaml': 'providers:\n  - {id: oa, kind: openai, base_url: "http://127.0.0.1:9/v1", api_keys: [k1], models: [m1]}\n' },
  });
}, 60_000);
afterAll(async () => {
  await d?.cleanup();
  await proxy.close();
});

describe('ctl gateway operations', () => {
  it('proxy add, assign, list, test, health, rm', async () => {
    const add = await d.cli(['gateway', 'proxy', 'add', proxy.url, '--name', 'corp']);
    expect(add.code, add.stderr).toBe(0);
    const id = add.stdout.trim();
    expect(id).toMatch(/^prx_[0-9a-f]{12}$/);
    expect((await d.cli(['gateway', 'proxy', 'assign', 'provider', 'oa', '--proxy', id])).stdout).toBe('1 assignment(s) changed\n');
    const list = await d.cli(['gateway', 'proxy', 'list']);
    expect(list.stdout).toMatch(new RegExp(`${id}\\s+corp\\s+http://127\\.0\\.0\\.1:${proxy.port}\\s+true\\s+provider:oa`));
    const t = await d.cli(['gateway', 'proxy', 'test', id, '--target', `http://127.0.0.1:${proxy.port}/`]);
    expect(t.code, t.stdout + t.stderr).toBe(0);
    expect(t.stdout).toMatch(/^ok: /);
    expect((await d.cli(['gateway', 'proxy', 'health'])).stdout).toMatch(new RegExp(`${id}\\s+corp\\s+1\\s+100%`));
    const rm = await d.cli(['gateway', 'proxy', 'rm', id]);
    expect(rm.code).not.toBe(0);
    expect(rm.stderr).toMatch(/assigned/);
    expect((await d.cli(['gateway', 'proxy', 'rm', id, '--force'])).stdout).toBe(`deleted ${id} (1 assignment(s) detached)\n`);
  });

  it('registered-key issue, list, check, revoke; cache reasoning; repair', async () => {
    const issued = await d.cli(['gateway', 'registered-key', 'issue', '--provider', 'oa', '--account', 'oa#0', '--hourly-budget', '0.5']);
    expect(issued.code, issued.stderr).toBe(0);
    expect(issued.stdout).toMatch(/^sk-gw-/);
    const list = await d.cli(['gateway', 'registered-key', 'list', '-o', 'json']);
    const keys = JSON.parse(list.stdout).keys as { id: string; accountId: string; hourlyBudget: number }[];
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ accountId: 'oa#0', hourlyBudget: 0.5 });
    expect((await d.cli(['gateway', 'registered-key', 'check', '--account', 'oa#0'])).stdout).toBe('allowed\n');
    expect((await d.cli(['gateway', 'registered-key', 'revoke', keys[0]!.id])).stdout).toBe(`revoked ${keys[0]!.id}\n`);
    expect((await d.cli(['gateway', 'cache', 'reasoning', '--clear'])).stdout).toBe('deleted 0 entries\n');
    // The test wrote gateway.yaml as 0644: the dry run says it would fix that (exit 1), the run does.
    const dry = await d.cli(['gateway', 'repair', '--dry-run']);
    expect(dry.code).toBe(1);
    expect(dry.stdout).toMatch(/file-modes\s+would-repair\s+\S+gateway\.yaml set to mode 0600 \(was 0644\)/);
    expect(dry.stdout).toMatch(/env-references\s+ok/);
    expect((await d.cli(['gateway', 'repair'])).code).toBe(0);
    const after = await d.cli(['gateway', 'repair', '--dry-run']);
    expect(after.code, after.stdout).toBe(0);
    expect((await d.cli(['gateway', 'init-state', '-o', 'json'])).stdout).toContain('"providers": 1');
  });

  it('eval add, run, show, list', async () => {
    const file = join(d.dir, 'suite.yaml');
    writeFileSync(file, 'name: smoke\ncases:\n  - {input: "hi", expected: "hello"}\n');
    const add = await d.cli(['gateway', 'eval', 'add', file]);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toMatch(/^evs_/);
    // The provider's upstream is a closed port: the run finishes with the case as an error.
    const run = await d.cli(['gateway', 'eval', 'run', 'smoke', '--model', 'oa/m1']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/oa\/m1\s+0\.0%\s+0\s+0\s+1/);
    expect((await d.cli(['gateway', 'eval', 'show', 'smoke'])).stdout).toMatch(/oa\/m1\s+0\.0%/);
    expect((await d.cli(['gateway', 'eval', 'list'])).stdout).toMatch(/evs_\S+\s+smoke\s+1/);
  });
});
