/**
 * Gateway backups through the real daemon: a backup taken under write load restores to a
 * consistent state; restore restarts only the gateway (the other APIs keep answering); export and
 * import round-trip; an import that is not a gateway database is refused and changes nothing;
 * /api/restart and /api/init; the ctl backup commands.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

let d: TestDaemon;
const dir = mkdtempSync(join(tmpdir(), 'ctl-backup-'));

beforeAll(async () => {
  d = await startDaemon();
}, 60_000);
afterAll(async () => {
  await d?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

const keyNames = async () => (((await d.request('gateway', 'GET', '/api/keys')).json as { keys: { name: string }[] }).keys ?? []).map((k) => k.name).sort();

async function gatewayBack(): Promise<void> {
  const end = Date.now() + 20_000;
  for (;;) {
    const r = await d.request('gateway', 'GET', '/api/init').catch(() => undefined);
    if (r?.status === 200) return;
    if (Date.now() > end) throw new Error('the gateway did not come back');
    await new Promise((res) => setTimeout(res, 50));
  }
}

describe('gateway backups', () => {
  it('a backup taken under write load restores to a consistent state; only the gateway restarts', async () => {
    for (const n of ['alpha', 'beta']) expect((await d.request('gateway', 'POST', '/api/keys', { name: n })).status).toBe(201);
    // Writes in flight while the backup is taken.
    let writing = true;
    let written = 0;
    const load = (async () => {
      while (writing) {
        await d.request('gateway', 'POST', '/api/memory', { content: `note ${written}`, key: 'load' });
        written++;
      }
    })();
    await new Promise((r) => setTimeout(r, 100));
    const made = await d.cli(['backup', 'create', '--label', 'load']);
    writing = false;
    await load;
    expect(made.code, made.stderr).toBe(0);
    const id = made.stdout.trim();
    expect(id).toMatch(/^gateway-.*-load-[0-9a-f]{6}\.db$/);
    expect((await d.cli(['backup', 'list'])).stdout).toContain(id);

    await d.request('gateway', 'POST', '/api/keys', { name: 'after' });
    expect(await keyNames()).toEqual(['after', 'alpha', 'beta']);
    const restore = await d.cli(['backup', 'restore', id]);
    expect(restore.code, restore.stderr).toBe(0);
    // The daemon's own API answers throughout.
    expect((await d.request('core', 'GET', '/core/1.0/ready')).status).toBe(200);
    await gatewayBack();
    expect(await keyNames()).toEqual(['alpha', 'beta']);
    const notes = ((await d.request('gateway', 'GET', '/api/memory?limit=1')).json as { total: number }).total;
    expect(notes).toBeGreaterThan(0);
    expect(notes).toBeLessThanOrEqual(written);
    // The data the restore replaced is kept.
    expect((await d.cli(['backup', 'list'])).stdout).toMatch(/-before-restore-/);
  }, 60_000);

  it('export and import round-trip; a file that is not a gateway database is refused and changes nothing', async () => {
    const out = join(dir, 'export.db');
    const ex = await d.cli(['backup', 'export', '--out', out]);
    expect(ex.code, ex.stderr).toBe(0);
    const db = new Database(out, { readonly: true });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(db.pragma('user_version', { simple: true })).toBeGreaterThan(0);
    db.close();

    const junk = join(dir, 'junk.db');
    writeFileSync(junk, 'this is not a database at all, not even close '.repeat(100));
    const bad = await d.cli(['backup', 'import', junk]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/not (?:an|a readable) SQLite database/);
    const other = join(dir, 'other.db');
    const o = new Database(other);
    o.exec('CREATE TABLE t (x); PRAGMA user_version = 3;');
    o.close();
    const wrong = await d.cli(['backup', 'import', other]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/not a gateway database/);
    expect(await keyNames()).toEqual(['alpha', 'beta']);

    await d.request('gateway', 'POST', '/api/keys', { name: 'gamma' });
    const imp = await d.cli(['backup', 'import', out]);
    expect(imp.code, imp.stderr).toBe(0);
    await gatewayBack();
    expect(await keyNames()).toEqual(['alpha', 'beta']);
    expect(readFileSync(out).subarray(0, 15).toString()).toBe('SQLite format 3');
  }, 60_000);

  it('PUT takes a backup and POST restores one, as the seed says; the old shapes get a 400 saying what changed', async () => {
    const made = await d.request('gateway', 'PUT', '/api/db-backups', { label: 'verbs' });
    expect(made.status, made.text).toBe(201);
    expect(made.json.id).toMatch(/-verbs-/);
    const oldCreate = await d.request('gateway', 'POST', '/api/db-backups', { label: 'x' });
    expect(oldCreate.status).toBe(400);
    expect(oldCreate.json.error).toMatchObject({ code: 'verb_changed', message: expect.stringMatching(/send PUT \/api\/db-backups \{label\?\}/) });
    expect((await d.request('gateway', 'POST', '/api/db-backups')).json.error.code).toBe('verb_changed');
    const oldRestore = await d.request('gateway', 'PUT', '/api/db-backups', { id: made.json.id });
    expect(oldRestore.status).toBe(400);
    expect(oldRestore.json.error.message).toMatch(/send POST \/api\/db-backups \{id\}/);
    const restore = await d.request('gateway', 'POST', '/api/db-backups', { id: made.json.id });
    expect(restore.status, restore.text).toBe(202);
    await gatewayBack();
    expect(await keyNames()).toEqual(['alpha', 'beta']);
  }, 30_000);

  it('/api/init tells the first-run state; /api/restart restarts the gateway alone', async () => {
    expect((await d.request('gateway', 'GET', '/api/init')).json).toMatchObject({ initialized: false, providers: 0, apiKeys: 2, requireLogin: true });
    const r = await d.request('gateway', 'POST', '/api/restart');
    expect(r.status).toBe(202);
    await gatewayBack();
    expect(await keyNames()).toEqual(['alpha', 'beta']);
  }, 30_000);
});

describe('restores and imports that must not hurt the gateway', () => {
  const auditPaths = async () => (((await d.request('gateway', 'GET', '/api/compliance/audit-log?limit=1000')).json as { entries: { method: string; path: string; status: number }[] }).entries ?? []).map((e) => `${e.method} ${e.path} ${e.status}`);

  /** An export of the live database, changed by `change` (SQL run on the copy). */
  async function exported(name: string, change?: string): Promise<string> {
    const out = join(dir, name);
    const ex = await d.cli(['backup', 'export', '--out', out]);
    expect(ex.code, ex.stderr).toBe(0);
    if (change) {
      const db = new Database(out);
      db.exec(change);
      db.close();
    }
    return out;
  }

  it('refuses a database of an incompatible schema with a 400 and keeps serving on its own data', async () => {
    const before = await keyNames();
    const cases: [string, string, RegExp][] = [
      // Claims this build's version but lacks tables it needs.
      ['missing.db', 'DROP TABLE skills; DROP TABLE audit_log; DROP TABLE settings;', /not a gateway database of schema version \d+ \(missing table (skills|audit_log|settings)/],
      // An old version whose tables already have what the migrations add: they cannot run.
      ['stale.db', 'PRAGMA user_version = 2;', /not a gateway database of schema version 2 that this build can bring to \d+: migration 3 fails/],
      ['future.db', 'PRAGMA user_version = 999;', /schema version 999 is not one this build knows/],
    ];
    for (const [name, change, re] of cases) {
      const file = await exported(name, change);
      const r = await d.request('gateway', 'POST', '/api/db-backups/import', readFileSync(file), { 'Content-Type': 'application/vnd.sqlite3' });
      expect(r.status, `${name}: ${r.text}`).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'invalid_backup', message: expect.stringMatching(re) });
      expect((await d.request('gateway', 'GET', '/api/init')).status).toBe(200);
      expect(await keyNames()).toEqual(before);
    }
  }, 60_000);

  it('carries the audit log across a restore and an import, and records both', async () => {
    const made = await d.cli(['backup', 'create', '--label', 'audit']);
    expect(made.code, made.stderr).toBe(0);
    const old = await exported('old.db');
    expect((await d.request('gateway', 'POST', '/api/keys', { name: 'delta' })).status).toBe(201);
    const restore = await d.cli(['backup', 'restore', made.stdout.trim()]);
    expect(restore.code, restore.stderr).toBe(0);
    await gatewayBack();
    expect(await keyNames()).not.toContain('delta');
    let trail = await auditPaths();
    expect(trail).toContain('POST /api/keys 201');
    expect(trail.some((e) => /^(PUT|POST) \/api\/db-backups 202$/.test(e))).toBe(true);

    const imp = await d.request('gateway', 'POST', '/api/db-backups/import', readFileSync(old), { 'Content-Type': 'application/vnd.sqlite3' });
    expect(imp.status, imp.text).toBe(202);
    await gatewayBack();
    trail = await auditPaths();
    expect(trail).toContain('POST /api/keys 201');
    expect(trail).toContain('POST /api/db-backups/import 202');
  }, 60_000);
});

describe('scheduled backups', () => {
  it('ctl.yaml gateway.backups takes one every interval and keeps the newest `keep`', async () => {
    const s = await startDaemon({ ctlYaml: { gateway: { backups: { interval_hours: 0.0003, keep: 2 } } } });
    try {
      const scheduled = async () => (((await s.request('gateway', 'GET', '/api/db-backups')).json as { backups: { id: string }[] }).backups ?? []).filter((b) => b.id.includes('-scheduled-'));
      const end = Date.now() + 15_000;
      while ((await scheduled()).length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
      await new Promise((r) => setTimeout(r, 2500));
      expect((await scheduled()).length).toBe(2);
    } finally {
      await s.cleanup();
    }
  }, 30_000);

  it('a bad gateway.backups stops the gateway from starting, with the reason', async () => {
    const s = await startDaemon({ ctlYaml: { gateway: { backups: { interval_hours: 'daily' } } } });
    try {
      const st = await s.cli(['status']);
      expect(st.stdout + st.stderr).toMatch(/gateway.backups.interval_hours/);
    } finally {
      await s.cleanup();
    }
  }, 30_000);
});
