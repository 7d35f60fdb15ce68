/**
 * POST /api/system/env/repair: dryRun reports, a real run fixes the state directory's modes, missing
 * directories and leftovers of interrupted writes; variables gateway.yaml names but the environment
 * lacks, and unreadable values, are reported for the operator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGateway, type GatewayHarness } from './harness.js';

let gw: GatewayHarness;

beforeAll(async () => {
  gw = await startGateway({
    yaml: `providers:
  - {id: later, kind: openai, base_url: "http://127.0.0.1:9/v1", api_key_env: CTL_TEST_UNSET_PROVIDER_KEY, enabled: false, models: [m]}
`,
    env: { REQUIRE_API_KEY: 'maybe' },
  });
});
afterAll(async () => {
  await gw.close();
});

const mode = (p: string) => statSync(p).mode & 0o777;

describe('env repair', () => {
  it('dryRun reports; a run repairs modes, directories and leftovers, and reports what it cannot fix', async () => {
    const dir = gw.dir;
    chmodSync(dir, 0o755);
    const db = join(dir, 'database', 'gateway.db');
    chmodSync(db, 0o644);
    rmSync(join(dir, 'uploads'), { recursive: true, force: true });
    const leftover = join(dir, '.export-abc123');
    mkdirSync(leftover);
    writeFileSync(join(leftover, '0.db'), 'x');
    const old = (Date.now() - 2 * 3_600_000) / 1000;
    utimesSync(leftover, old, old);
    const fresh = join(dir, '.export-justnow');
    mkdirSync(fresh);

    const dry = await gw.req('POST', '/api/system/env/repair?dryRun=1');
    expect(dry.status, dry.text).toBe(200);
    expect(dry.json).toMatchObject({ success: false, dryRun: true, repaired: [], backupPath: null });
    expect((dry.json.checks as { status: string }[]).filter((c) => c.status === 'would-repair').length).toBeGreaterThanOrEqual(4);
    expect(mode(dir)).toBe(0o755);
    expect(existsSync(leftover)).toBe(true);

    const r = await gw.req('POST', '/api/system/env/repair');
    const checks = r.json.checks as { check: string; status: string; detail: string }[];
    const of = (name: string) => checks.filter((c) => c.check === name);
    expect(of('state-dir')[0]).toMatchObject({ status: 'repaired' });
    expect(of('directories').some((c) => c.status === 'repaired' && c.detail === `created ${join(dir, 'uploads')} (mode 0700)`)).toBe(true);
    expect(of('file-modes').some((c) => c.detail.startsWith(db))).toBe(true);
    expect(r.json.backupPath).toMatch(/backups\/env-repair-/);
    expect(of('temporary-files').map((c) => c.detail)).toEqual([`moved ${leftover} to ${r.json.backupPath}`]);
    expect(existsSync(join(r.json.backupPath, '.export-abc123', '0.db'))).toBe(true);
    expect(r.json.repaired).toEqual(checks.filter((c) => c.status === 'repaired').map((c) => c.detail));
    expect(of('env-references')[0]).toMatchObject({ status: 'problem' });
    expect(of('env-references')[0]!.detail).toMatch(/provider later names CTL_TEST_UNSET_PROVIDER_KEY, which is not set/);
    expect(of('env-values')[0]!.detail).toMatch(/REQUIRE_API_KEY="maybe" is not a boolean/);
    expect(r.json.success).toBe(false);

    expect(mode(dir)).toBe(0o700);
    expect(mode(db)).toBe(0o600);
    expect(existsSync(join(dir, 'uploads'))).toBe(true);
    expect(existsSync(leftover)).toBe(false);
    expect(existsSync(fresh)).toBe(true); // may still be in use

    // Nothing left to repair: a second run changes nothing.
    const again = await gw.req('POST', '/api/system/env/repair');
    expect(again.json.repaired).toEqual([]);
    expect(again.json.backupPath).toBeNull();
    expect((again.json.checks as { status: string }[]).filter((c) => c.status === 'problem')).toHaveLength(2);
  });

  it('{provider} narrows the environment check to that provider; an unknown one is a 400', async () => {
    const r = await gw.req('POST', '/api/system/env/repair', { provider: 'later', dryRun: true });
    expect(r.json.checks.find((c: { check: string }) => c.check === 'env-references').status).toBe('problem');
    expect((await gw.req('POST', '/api/system/env/repair', { provider: 'nope' })).status).toBe(400);
    expect((await gw.req('POST', '/api/system/env/repair', { provider: 'later', extra: 1 })).status).toBe(400);
  });
});
