/**
 * Concurrent GET /api/v2/alerts on a store of large alerts: each answer is streamed in pieces of
 * about 64 KiB with backpressure, so 20 readers at once must not each hold their whole document
 * (they once took the daemon to 4.3 GiB). Measured on the daemon's resident memory.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

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
