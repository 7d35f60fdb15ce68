/**
 * Custom ACP agents arrive not only through POST /api/acp/agents (which checks them) but also inside
 * an imported or restored gateway database, where the stored list can hold anything. Whatever it
 * holds, GET /api/acp/agents keeps answering: entries of another shape are reported, never run, and
 * a `versionCommand` from an old version is never run either.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/index.js';
import { GATEWAY_MIGRATIONS } from '../../src/gateway/schema.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

let d: TestDaemon;
const dir = mkdtempSync(join(tmpdir(), 'ctl-acp-import-'));
const marker = join(dir, 'ran');

/** POST a file as the body, on a connection of its own (the gateway restarts after an import). */
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

describe('custom ACP agents from an imported database', () => {
  it('entries of any shape are reported, not run, and the list keeps answering', async () => {
    const file = join(dir, 'gateway.db');
    const store = openStore(file, GATEWAY_MIGRATIONS);
    const stored = [
      { id: 'arr', name: 'arr', binary: ['sh'] },
      { id: 'num', name: 'num', binary: 5 },
      { id: 'abs', name: 'abs', binary: '/bin/sh', versionCommand: `touch ${marker}` },
      null,
      'text',
      { id: 'args', name: 'args', binary: 'sh', spawnArgs: 'not a list' },
    ];
    store.db.prepare('INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)').run('acp.custom_agents', JSON.stringify(stored));
    store.close();
    const r = await upload('/api/db-backups/import', readFileSync(file));
    expect(r.status, r.text).toBe(202);

    let list: Awaited<ReturnType<TestDaemon['request']>> | undefined;
    const until = Date.now() + 20_000;
    for (;;) {
      list = await d.request('gateway', 'GET', '/api/acp/agents?refresh=true').catch(() => undefined);
      // 503 while the gateway restarts on the imported data.
      if (list && list.status !== 503) break;
      if (Date.now() > until) throw new Error(`gateway did not come back:\n${d.log.slice(-2000)}`);
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(list.status, list.text).toBe(200);
    const custom = (list.json.agents as { id: string; installed: boolean; commandPath: string | null; reason: string | null; spawnArgs: unknown }[]).filter((a) => ['arr', 'num', 'abs', 'args'].includes(a.id));
    expect(custom.map((a) => a.id).sort()).toEqual(['abs', 'args', 'arr', 'num']);
    for (const a of custom.filter((x) => x.id !== 'args')) {
      expect(a.installed).toBe(false);
      expect(a.commandPath).toBeNull();
      expect(a.reason).toMatch(/not run/);
    }
    expect(custom.find((a) => a.id === 'args')!.spawnArgs).toEqual([]);
    expect(existsSync(marker)).toBe(false);
    // Removing one of them works as for any custom agent.
    expect((await d.request('gateway', 'DELETE', '/api/acp/agents?id=num')).status).toBe(200);
  }, 60_000);
});
