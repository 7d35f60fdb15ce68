/**
 * The skill sandbox's limits: WebAssembly is off in the runners (its memory is outside the isolate's
 * limit), runners started by root run unprivileged, outputs over 1 MiB are dropped with a 422 and
 * never break the executions listing (rows older versions stored too big included, across a restart),
 * and a schema too complex to compile is refused with a 400 while the rest is compiled off the loop.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { watchLoop, type LoopHold } from '../helpers/loop-hold.js';
import { startGateway, type GatewayHarness } from './harness.js';

const YAML = `skills:
  timeout_ms: 3000
  memory_mb: 16
  runners: 1
`;
let gw: GatewayHarness;

beforeAll(async () => {
  gw = await startGateway({ yaml: YAML });
}, 30_000);
afterAll(async () => {
  await gw?.close();
});

const manifest = (name: string, handlerCode: string, schema: Record<string, unknown> = {}) => ({ name, version: '1', description: name, schema, handlerCode });
const install = (m: unknown) => gw.req('POST', '/api/skills/install', m);
const exec = (skillName: string, input: unknown = {}) => gw.req('POST', '/api/skills/executions', { skillName, input });

/** Child processes of this process running the skill runner: pid → /proc status lines. */
function runners(): Map<number, Record<string, string>> {
  const out = new Map<number, Record<string, string>>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = Object.fromEntries(
        readFileSync(`/proc/${name}/status`, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]),
      );
      if (Number(status.PPid) !== process.pid) continue;
      if (!readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('skill-runner')) continue;
      out.set(Number(name), status);
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

describe('the sandbox’s limits', () => {
  it('has no WebAssembly: a skill cannot grow memory past memory_mb outside the isolate’s heap', async () => {
    await install(manifest('wasmtype', 'return typeof WebAssembly;'));
    expect((await exec('wasmtype')).json).toMatchObject({ status: 'success', output: 'undefined' });
    await install(manifest('wasmgrow', 'const m = new WebAssembly.Memory({ initial: 1, maximum: 65536 }); for (let i = 0; i < 64; i++) m.grow(1024); return m.buffer.byteLength;'));
    const r = (await exec('wasmgrow')).json;
    expect(r.status).toBe('error');
    expect(r.error).toMatch(/WebAssembly is not defined/);
    // Every runner process stays small (a grown WebAssembly.Memory of 4 GiB shows in VmPeak).
    for (const [pid, st] of runners()) expect(parseInt(st.VmPeak!, 10) / 1024, `runner ${pid} VmPeak`).toBeLessThan(3 * 1024);
  }, 30_000);

  it.runIf(process.getuid?.() === 0)('runs runners as uid and gid 65534 with no supplementary groups when the daemon is root', async () => {
    await install(manifest('who', 'return 1;'));
    expect((await exec('who')).json).toMatchObject({ status: 'success' });
    const found = runners();
    expect(found.size).toBeGreaterThan(0);
    for (const [pid, st] of found) {
      expect(st.Uid!.split(/\s+/), `runner ${pid} uids`).toEqual(['65534', '65534', '65534', '65534']);
      expect(st.Gid!.split(/\s+/), `runner ${pid} gids`).toEqual(['65534', '65534', '65534', '65534']);
      expect(st.Groups ?? '', `runner ${pid} groups`).toBe('');
    }
  }, 30_000);

  it('drops an output over 1 MiB with a 422 and keeps the listing readable', async () => {
    await install(manifest('huge', "return 'x'.repeat(2 * 1024 * 1024);"));
    await install(manifest('wide', "return '\\u00e9'.repeat(600 * 1024);")); // 600 Ki characters, 1.2 MiB of UTF-8
    await install(manifest('fits', "return 'y'.repeat(1000 * 1000);"));
    for (const name of ['huge', 'wide']) {
      const r = await exec(name);
      expect(r.status, r.text).toBe(422);
      expect(r.json.error).toMatchObject({ code: 'skill_output_too_large', message: expect.stringMatching(/larger than 1048576 bytes/) });
    }
    expect((await exec('fits')).status).toBe(201);
    const list = await gw.req('GET', '/api/skills/executions?limit=10');
    expect(list.status, list.text.slice(0, 200)).toBe(200);
    const rows = list.json.executions as { skillName: string; status: string; output: unknown; outputTruncated?: boolean }[];
    expect(rows.find((e) => e.skillName === 'huge')).toMatchObject({ status: 'invalid_output', output: null, error: expect.stringMatching(/larger than 1048576 bytes .* dropped/) });
    expect(rows.find((e) => e.skillName === 'fits')!.output).toHaveLength(1000 * 1000);
  }, 30_000);

  it('lists rows that older versions stored too big (a text cut at 1 MiB, a 3 MiB output), also after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctl-skills-rows-'));
    const first = await startGateway({ dir, yaml: YAML });
    const db = new Database(join(dir, 'database', 'gateway.db'));
    const insert = db.prepare(`INSERT INTO skill_executions (id, skill_id, skill_name, api_key_id, session_id, input, output, status, error, duration_ms, created_at) VALUES (?, 'skl_old', 'old', NULL, NULL, ?, ?, ?, ?, 1, ?)`);
    const cut = JSON.stringify('z'.repeat(2 * 1024 * 1024)).slice(0, 1024 * 1024);
    insert.run('exe_old_cut', '{}', cut, 'invalid_output', 'output is larger than 1 MiB', Date.now() - 2000);
    insert.run('exe_old_big', cut, JSON.stringify('w'.repeat(3 * 1024 * 1024)), 'success', null, Date.now() - 1000);
    db.close();
    const check = async (h: GatewayHarness) => {
      const r = await h.req('GET', '/api/skills/executions?skillName=old');
      expect(r.status, r.text.slice(0, 200)).toBe(200);
      const byId = Object.fromEntries((r.json.executions as { id: string }[]).map((e) => [e.id, e]));
      expect(byId.exe_old_cut).toMatchObject({ input: {}, output: null, outputTruncated: true });
      expect(byId.exe_old_big).toMatchObject({ input: null, inputTruncated: true, output: null, outputTruncated: true, status: 'success' });
    };
    try {
      await check(first);
      await first.close();
      const again = await startGateway({ dir, yaml: YAML });
      await check(again);
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it('tests each schema’s own patterns (skills with different patterns on one property)', async () => {
    await install(manifest('pa', 'return 1;', { input: { type: 'object', properties: { v: { type: 'string', pattern: '^a+$' } } } }));
    await install(manifest('pb', 'return 1;', { input: { type: 'object', properties: { v: { type: 'string', pattern: '^b+$' } } } }));
    expect((await exec('pa', { v: 'aaa' })).status).toBe(201);
    expect((await exec('pb', { v: 'bbb' })).status).toBe(201);
    expect((await exec('pb', { v: 'aaa' })).json.error.message).toMatch(/input\/v must match pattern "\^b\+\$"/);
  });

  it('refuses a schema too complex to compile (2,000 anyOf branches) with a 400, at once', async () => {
    const branches = Array.from({ length: 2000 }, (_, i) => ({ type: 'object', properties: { [`k${i}`]: { type: 'string', pattern: '^a+$' } }, required: [`k${i}`] }));
    const t0 = Date.now();
    const r = await install(manifest('anyof', 'return 1;', { input: { anyOf: branches } }));
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.message).toMatch(/schema\.input has more than 500 objects/);
    const deep: Record<string, unknown> = {};
    let at = deep;
    for (let i = 0; i < 40; i++) at = (at.items = {}) as Record<string, unknown>;
    expect((await install(manifest('deep', 'return 1;', { output: deep }))).json.error.message).toMatch(/schema\.output is nested deeper than 32/);
  });

  it('compiles and applies schemas off the event loop: it is never held meanwhile', async () => {
    // 120 branches (481 objects, within the bound): Ajv takes hundreds of milliseconds to compile it.
    const branches = Array.from({ length: 120 }, (_, i) => ({ type: 'object', properties: { [`k${i}`]: { type: 'string', pattern: `^a{1,${i + 1}}$` } }, required: [`k${i}`] }));
    const schema = { input: { anyOf: branches }, output: { anyOf: branches.map((b, i) => ({ ...b, properties: { [`o${i}`]: { type: 'integer' } }, required: [`o${i}`] })) } };
    let slowest = 0;
    let stop = false;
    const probe = (async () => {
      while (!stop) {
        const t0 = performance.now();
        expect((await gw.req('GET', '/api/skills?limit=1')).status).toBe(200);
        slowest = Math.max(slowest, performance.now() - t0);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const watch = watchLoop();
    let seen: LoopHold;
    try {
      for (let i = 0; i < 2; i++) {
        const r = await install(manifest(`wide${i}`, 'return { o119: 1 };', schema));
        expect(r.status, r.text).toBe(201);
        const e = await exec(`wide${i}`, { k7: 'aaa' });
        expect(e.json).toMatchObject({ status: 'success', output: { o119: 1 } });
        const bad = await exec(`wide${i}`, { k7: 'b' });
        expect(bad.status).toBe(400);
      }
    } finally {
      seen = watch.stop();
      stop = true;
      await probe;
    }
    // Ajv on the loop held it 1 to 2 s per compile here; the bound leaves room for a request's own work.
    expect(seen.maxHoldMs, `loop held (ms); event-loop delay max ${seen.maxDelayMs.toFixed(0)} ms, slowest other request ${slowest.toFixed(0)} ms`).toBeLessThan(50);
  }, 60_000);
});
