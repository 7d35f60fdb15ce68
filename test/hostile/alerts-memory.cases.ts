/**
 * Concurrent GET /api/v2/alerts on a store of large alerts: each answer is streamed in pieces of
 * about 64 KiB with backpressure, so 20 readers at once must not each hold their whole document
 * (they once took the daemon to 4.3 GiB). Measured on the daemon's resident memory.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { loopHoldEnv, maxHold } from '../helpers/daemon-loop-hold.js';

const ALERTS = 60;
const READERS = 20;
const BOUND_MIB = 150;

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** GET over the control socket, counting the bytes of the answer. */
function getBytes(socket: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get({ socketPath: socket, path, headers: { host: 'alertmanager' } }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => (n += c.length));
      res.on('end', () => resolve(n));
    });
    req.on('error', reject);
  });
}

describe.skipIf(process.platform !== 'linux')('20 concurrent GET /api/v2/alerts on large alerts', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startDaemon();
    const endsAt = new Date(Date.now() + 3_600_000).toISOString();
    for (let b = 0; b < ALERTS / 10; b++) {
      const batch = Array.from({ length: 10 }, (_, i) => ({ labels: { alertname: 'Big', n: `${b}-${i}` }, annotations: { text: 'x'.repeat(200_000) }, endsAt }));
      expect((await d.request('alertmanager', 'POST', '/api/v2/alerts', batch)).status).toBe(200);
    }
  }, 120_000);
  afterAll(async () => {
    await d?.cleanup();
  });

  it(`stay within ${BOUND_MIB} MiB of the daemon's memory before them`, async () => {
    const pid = d.child.pid!;
    const one = await getBytes(d.socket, '/api/v2/alerts');
    expect(one).toBeGreaterThan(ALERTS * 200_000);
    const before = rssMiB(pid);
    let peak = before;
    const watch = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 20);
    try {
      const sizes = await Promise.all(Array.from({ length: READERS }, () => getBytes(d.socket, '/api/v2/alerts')));
      expect(sizes).toEqual(Array(READERS).fill(one));
    } finally {
      clearInterval(watch);
    }
    expect(peak - before, `RSS ${before.toFixed(0)} MiB before, ${peak.toFixed(0)} MiB at the peak`).toBeLessThan(BOUND_MIB);
  }, 120_000);
});

/**
 * A full store of small alerts: GET /api/v2/alerts once built three arrays over the whole store
 * before sending a byte (statuses computed up front), held by every concurrent GET while it was
 * sent, and computed them in one turn of the loop. Each alert is now filtered as it is rendered,
 * and the loop is given back every 2,048 alerts looked at.
 */
describe.skipIf(process.platform !== 'linux')('20 concurrent GET /api/v2/alerts on a store of many small alerts', () => {
  const SMALL = 200_000;
  /**
   * The most CPU one turn of the daemon's loop may use meanwhile. Measured (load ~15, two cores):
   * 34-41 ms reading everything (8 ms of rendering a turn, the writes and collections around it),
   * 10-19 ms with the filter; before, 650-1900 ms and 73-152 ms (the whole store filtered in one
   * turn per GET, then every answer rendered for as long as its socket took writes). Memory
   * (BOUND_MIB): 40-68 MiB over the 20 GETs now, 303 MiB before.
   */
  const HOLD_BOUND_MS = 100;
  const FILTERED_HOLD_BOUND_MS = 60;
  const hold = loopHoldEnv(5);
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startDaemon({ env: hold.env });
    const endsAt = new Date(Date.now() + 3_600_000).toISOString();
    for (let b = 0; b < SMALL / 10_000; b++) {
      const batch = Array.from({ length: 10_000 }, (_, i) => ({ labels: { alertname: 'Small', instance: `host-${b}-${i}`, job: 'node' }, endsAt }));
      const r = await d.request('alertmanager', 'POST', '/api/v2/alerts', batch);
      expect(r.status, r.text).toBe(200);
    }
    // The journal of those writes is folded into the snapshot from 10 s after the first of them,
    // its last step holding the loop (a matter of the write path; a stop folds it at once): measured
    // here is reading, so restart on the folded store, sort it once (the first GET) and wait until
    // the loop has been quiet for a second.
    await d.restart();
    await getBytes(d.socket, '/api/v2/alerts');
    const until = Date.now() + 60_000;
    while (Date.now() < until && maxHold(hold, Date.now() - 1000, Date.now()) > 0) await new Promise((r) => setTimeout(r, 100));
  }, 300_000);
  afterAll(async () => {
    await d?.cleanup();
  });

  it('all of them: the same answer to each, memory bounded, the loop never held long', async () => {
    const pid = d.child.pid!;
    const one = await getBytes(d.socket, '/api/v2/alerts');
    expect(one).toBeGreaterThan(SMALL * 100);
    const before = rssMiB(pid);
    let peak = before;
    const watch = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 20);
    const from = Date.now();
    try {
      const sizes = await Promise.all(Array.from({ length: READERS }, () => getBytes(d.socket, '/api/v2/alerts')));
      expect(sizes).toEqual(Array(READERS).fill(one));
    } finally {
      clearInterval(watch);
    }
    const heldMs = maxHold(hold, from, Date.now());
    const seen = `RSS ${before.toFixed(0)} MiB before, ${peak.toFixed(0)} MiB at the peak; loop held up to ${heldMs.toFixed(1)} ms of CPU in one turn`;
    expect(peak - before, seen).toBeLessThan(BOUND_MIB);
    expect(heldMs, seen).toBeLessThan(HOLD_BOUND_MS);
  }, 300_000);

  it('a filter that keeps none of them: the loop is never held long', async () => {
    const from = Date.now();
    const answers = await Promise.all(Array.from({ length: READERS }, () => d.request('alertmanager', 'GET', '/api/v2/alerts?filter=alertname%3D%22None%22')));
    for (const r of answers) expect(r.text).toBe('[]\n');
    const heldMs = maxHold(hold, from, Date.now());
    expect(heldMs, `loop held up to ${heldMs.toFixed(1)} ms of CPU in one turn`).toBeLessThan(FILTERED_HOLD_BOUND_MS);
  }, 120_000);
});
