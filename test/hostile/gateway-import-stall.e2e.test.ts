/**
 * Importing a large gateway database (POST /api/db-backups/import) must not hold the event loop the
 * other APIs share: the upload is streamed to disk, the check and migration run on a worker thread,
 * and the gateway that restarts on the imported data reads its request log in slices. A ~95 MiB
 * database with a week of a busy gateway's request log (250,000 rows) is generated in a temporary
 * directory and imported while the alert manager is probed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/index.js';
import { GATEWAY_MIGRATIONS } from '../../src/gateway/schema.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { loopHoldEnv, maxHold } from '../helpers/daemon-loop-hold.js';
import { probeWhile } from '../helpers/loop-probe.js';

/**
 * The longest the daemon's loop may be held (CPU or blocking calls, in one turn) during the import
 * and the gateway's restart. Measured (load 15-20 on two cores): 26-44 ms now, the longest being the
 * gateway's services and router built anew; before the request log was read in slices, 365 ms (one
 * GROUP BY over the 250,000 rows at the gateway's start).
 */
const HOLD_BOUND_MS = 90;
/** The probe's slowest answer, wall clock (descheduling on a loaded machine alone reached 290 ms). */
const PROBE_BOUND_MS = 1000;
const ROWS = 250_000;

let d: TestDaemon;
const hold = loopHoldEnv(5);
const dir = mkdtempSync(join(tmpdir(), 'ctl-import-stall-'));
const file = join(dir, 'gateway.db');

/** A gateway database of this build's schema with ROWS request-log rows from the last three days. */
function generate(): void {
  const store = openStore(file, GATEWAY_MIGRATIONS);
  const db = store.db;
  const cols = (db.prepare("SELECT name, type FROM pragma_table_info('request_log') WHERE name != 'id'").all() as { name: string; type: string }[]);
  const insert = db.prepare(`INSERT INTO request_log (${cols.map((c) => c.name).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`);
  const now = Date.now();
  const value = (name: string, type: string, i: number): unknown => {
    if (name === 'ts') return now - i * 1000;
    if (name === 'combo') return `combo-${i % 5}`;
    if (name === 'provider') return `p${i % 3}`;
    if (name === 'model') return `m${i % 4}`;
    if (name === 'status') return i % 11 === 0 ? 502 : 200;
    if (/INT/i.test(type)) return i;
    if (/REAL/i.test(type)) return i / 3;
    return `${name}-${i}`;
  };
  db.transaction(() => {
    for (let i = 0; i < ROWS; i++) insert.run(...cols.map((c) => value(c.name, c.type, i)));
  })();
  store.close();
}

/** POST the file as the body, on a connection of its own. */
function upload(path: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { socketPath: d.socket, agent: false, method: 'POST', path, headers: { Host: 'gateway', 'Content-Type': 'application/vnd.sqlite3', 'Content-Length': statSync(file).size } },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      },
    );
    req.on('error', reject);
    createReadStream(file).pipe(req);
  });
}

/** GET on a connection of its own (the gateway restarting closes its connections). */
function getFresh(path: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath: d.socket, agent: false, method: 'GET', path, headers: { Host: 'gateway' } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  // Generated before the daemon starts: the test's own thread is busy for seconds meanwhile.
  generate();
  d = await startDaemon({ env: hold.env });
}, 120_000);
afterAll(async () => {
  await d?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

describe('a large gateway import', () => {
  it('keeps the loop free while it is received, checked, swapped in and the gateway restarts on it', async () => {
    expect(statSync(file).size).toBeGreaterThan(64 << 20);
    const from = Date.now();
    const { result, probe } = await probeWhile(
      d.socket,
      'alertmanager',
      '/api/v2/status',
      (async () => {
        const r = await upload('/api/db-backups/import');
        if (r.status !== 202) return { r, logs: undefined };
        // Back on the imported data: its request log is there.
        const until = Date.now() + 60_000;
        for (;;) {
          const logs = await getFresh('/api/usage/logs?limit=1').catch(() => undefined);
          if (logs?.status === 200 && logs.text.includes('endpoint-')) {
            // The start-up counts of the log run in the background: wait until they are done too.
            await new Promise((res) => setTimeout(res, 1500));
            return { r, logs };
          }
          if (Date.now() > until) throw new Error(`the gateway did not come back on the imported data: ${logs?.status} ${logs?.text.slice(0, 200)}\n${d.log.slice(-2000)}`);
          await new Promise((res) => setTimeout(res, 50));
        }
      })(),
    );
    expect(result.r.status, result.r.text).toBe(202);
    const heldMs = maxHold(hold, from, Date.now(), true);
    const seen = `loop held up to ${heldMs.toFixed(1)} ms in one turn; slowest probe ${probe.worstMs.toFixed(1)} ms over ${probe.probes} probes`;
    expect(heldMs, seen).toBeLessThan(HOLD_BOUND_MS);
    expect(probe.worstMs, seen).toBeLessThan(PROBE_BOUND_MS);
  }, 180_000);
});
