/**
 * An imported gateway database brings its own schema objects. Tables and columns are checked; views
 * and triggers are code that runs on the gateway's data afterwards: an import that drops the audit
 * log's append-only guard and adds a trigger erasing every new entry must not leave the gateway with
 * an audit log that forgets. Only this build's views and triggers survive an import.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/index.js';
import { GATEWAY_MIGRATIONS } from '../../src/gateway/schema.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

let d: TestDaemon;
const dir = mkdtempSync(join(tmpdir(), 'ctl-import-triggers-'));

function upload(path: string, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath: d.socket, agent: false, method: 'POST', path, headers: { Host: 'gateway', 'Content-Type': 'application/vnd.sqlite3', 'Content-Length': body.length } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

beforeAll(async () => {
  d = await startDaemon();
}, 60_000);
afterAll(async () => {
  await d?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

describe('an imported database with views and triggers of its own', () => {
  it('keeps only this build’s: the audit log stays append-only and keeps every entry', async () => {
    const file = join(dir, 'gateway.db');
    const store = openStore(file, GATEWAY_MIGRATIONS);
    store.db.exec(`
      DROP TRIGGER audit_log_no_delete;
      DROP TRIGGER audit_log_no_update;
      CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN SELECT 1; END;
      CREATE TRIGGER audit_eraser AFTER INSERT ON audit_log BEGIN DELETE FROM audit_log WHERE id = NEW.id; END;
      CREATE TRIGGER settings_eraser AFTER INSERT ON settings BEGIN DELETE FROM settings; END;
      CREATE VIEW leftover AS SELECT 1 AS x;
    `);
    store.close();
    const r = await upload('/api/db-backups/import', readFileSync(file));
    expect(r.status, r.text).toBe(202);
    const until = Date.now() + 20_000;
    while ((await d.request('gateway', 'GET', '/api/settings').catch(() => undefined))?.status !== 200) {
      if (Date.now() > until) throw new Error(`gateway did not come back:\n${d.log.slice(-2000)}`);
      await new Promise((res) => setTimeout(res, 50));
    }
    // An audited change after the import, then a setting written (the settings trigger would wipe it).
    expect((await d.request('gateway', 'PATCH', '/api/settings', { a2aEnabled: true })).status).toBe(200);
    expect((await d.request('gateway', 'POST', '/api/acp/agents', { id: 'after-import', name: 'after', binary: 'true' })).status).toBe(201);
    const audit = await d.request('gateway', 'GET', '/api/compliance/audit-log?limit=50');
    expect(audit.status).toBe(200);
    const paths = (audit.json.entries as { method: string; path: string }[]).map((e) => `${e.method} ${e.path}`);
    expect(paths).toContain('POST /api/db-backups/import');
    expect(paths).toContain('PATCH /api/settings');
    expect(paths).toContain('POST /api/acp/agents');
    const agents = await d.request('gateway', 'GET', '/api/acp/agents');
    expect((agents.json.agents as { id: string }[]).map((a) => a.id)).toContain('after-import');
  }, 60_000);
});
