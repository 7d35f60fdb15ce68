/**
 * Gateway management writes with 5,000 providers: how long one write takes, and what it does to
 * another API meanwhile (the alert manager's status p99 on the control socket), against the same
 * status calls with no writes. Before writes updated the catalog incrementally, each rebuilt it
 * whole: 182 ms at 5,000 providers, every other API waiting.
 */
import http from 'node:http';
import { fmt, percentile, report, section, startBenchDaemon } from './util.js';

const PROVIDERS = 5000;
const WRITES = 100;

function call(socket: string, host: string, method: string, path: string, body?: unknown): Promise<{ status: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request({ socketPath: socket, method, path, headers: { Host: host, ...(payload ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0 }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** Status calls one after another while `busy` runs (or for `count` calls). */
async function sampleStatus(socket: string, until: () => boolean, max = 2000): Promise<number[]> {
  const out: number[] = [];
  while (!until() && out.length < max) out.push((await call(socket, 'alertmanager', 'GET', '/api/v2/status')).ms);
  return out;
}

export async function runGatewayCatalogBench(): Promise<void> {
  section(`gateway catalog: management writes with ${PROVIDERS.toLocaleString('en')} providers`);
  const d = await startBenchDaemon();
  try {
    for (let start = 0; start < PROVIDERS; start += 1000) {
      const rows = Array.from({ length: 1000 }, (_, i) => ({ id: `p${start + i}`, kind: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: `sk-bench-${start + i}-0000000`, models: [`m${(start + i) % 50}`] }));
      const r = await call(d.socket, 'gateway', 'POST', '/api/providers/import', { providers: rows });
      if (r.status !== 200) throw new Error(`import answered ${r.status}`);
    }
    // Warm-up: the first writes compile the write path.
    for (let i = 0; i < 10; i++) await call(d.socket, 'gateway', 'PATCH', `/api/providers/p${i}`, { priority: 1 });
    let n = 0;
    const quiet = await sampleStatus(d.socket, () => n++ >= 500);
    let writing = true;
    const writes: number[] = [];
    const writer = (async () => {
      for (let i = 0; i < WRITES; i++) writes.push((await call(d.socket, 'gateway', 'PATCH', `/api/providers/p${(i * 37) % PROVIDERS}`, { priority: i % 10 })).ms);
      writing = false;
    })();
    const during = await sampleStatus(d.socket, () => !writing);
    await writer;
    report('PATCH /api/providers/:id, median (whole request)', fmt(percentile(writes, 50)));
    report('PATCH /api/providers/:id, p99', fmt(percentile(writes, 99)));
    report('alert manager GET /api/v2/status p99, no writes', fmt(percentile(quiet, 99)));
    report('alert manager GET /api/v2/status p99, during the writes', fmt(percentile(during, 99)), 'goal < 5 ms');
  } finally {
    await d.stop();
  }
}
