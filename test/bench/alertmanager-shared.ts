/**
 * What sharing alerts through PostgreSQL costs: `POST /api/v2/alerts` on a daemon with its own
 * state dir (embedded) and on one of three daemons sharing a private PostgreSQL (each POST is in
 * the database before its 200, and the other two take it). Batches of 10 alerts, as Prometheus
 * sends them: one client in sequence (latency), then 20 clients at once (throughput); and how long
 * an alert posted to one daemon takes to be listed by another.
 */
import http from 'node:http';
import { PG_BIN, PostgresServer } from '../helpers/postgres-server.js';
import { boundAddresses, fmt, percentile, report, section, startBenchDaemon, type BenchDaemon } from './util.js';

const SEQUENTIAL = 500;
const CONCURRENT_CLIENTS = 20;
const CONCURRENT_POSTS = 2000;
const PROPAGATION = 100;
const CONFIG = 'route:\n  receiver: r\n  group_by: [alertname]\nreceivers:\n  - name: r\n';
/** Every server on an ephemeral loopback port (four daemons run side by side). */
const DAEMON_YAML = ['alertmanager', 'gateway', 'pipeline', 'nodes'].reduce((y, s) => `${y}  ${s}: {address: '127.0.0.1:0'}\n`, 'servers:\n');

async function amBase(d: BenchDaemon): Promise<string> {
  return `http://${(await boundAddresses(d.socket)).servers.alertmanager!.bound_address}`;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENT_CLIENTS });

function call(base: string, method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
  const u = new URL(path, base);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const batch = (run: string, i: number) =>
  JSON.stringify(Array.from({ length: 10 }, (_, j) => ({ labels: { alertname: `Bench${run}`, instance: `h${(i * 10 + j) % 500}` }, annotations: { round: String(i) } })));

async function sequential(base: string, run: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const t0 = performance.now();
    const r = await call(base, 'POST', '/api/v2/alerts', batch(run, i));
    if (r.status !== 200) throw new Error(`POST answered ${r.status}: ${r.text}`);
    times.push(performance.now() - t0);
  }
  return times;
}

async function concurrent(base: string, run: string): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENT_CLIENTS }, async () => {
      while (next < CONCURRENT_POSTS) {
        const i = next++;
        const r = await call(base, 'POST', '/api/v2/alerts', batch(run, i));
        if (r.status !== 200) throw new Error(`POST answered ${r.status}: ${r.text}`);
      }
    }),
  );
  return (CONCURRENT_POSTS / (performance.now() - t0)) * 1000;
}

async function propagation(from: string, to: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < PROPAGATION; i++) {
    const name = `Prop${i}`;
    const t0 = performance.now();
    const r = await call(from, 'POST', '/api/v2/alerts', JSON.stringify([{ labels: { alertname: name } }]));
    if (r.status !== 200) throw new Error(`POST answered ${r.status}`);
    for (;;) {
      const g = await call(to, 'GET', `/api/v2/alerts?filter=${encodeURIComponent(`alertname="${name}"`)}`);
      if (g.text.length > 3) break;
      if (performance.now() - t0 > 10_000) throw new Error('not propagated within 10 s');
    }
    times.push(performance.now() - t0);
  }
  return times;
}

const line = (t: number[]) => `p50 ${fmt(percentile(t, 50))}, p99 ${fmt(percentile(t, 99))}`;

export async function runAlertmanagerSharedBench(): Promise<void> {
  section('alertmanager-shared: POST /api/v2/alerts (batches of 10), embedded vs three daemons on PostgreSQL');
  if (!PG_BIN) {
    report('skipped', 'PostgreSQL not installed');
    return;
  }
  const pg = await PostgresServer.start();
  const daemons: BenchDaemon[] = [];
  try {
    const url = await pg.createDatabase('bench_alerts');
    const files = { 'alertmanager.yml': CONFIG, 'daemon.yaml': DAEMON_YAML };
    const embedded = await startBenchDaemon(files);
    daemons.push(embedded);
    const shared = await Promise.all([1, 2, 3].map(() => startBenchDaemon({ ...files, 'ctl.yaml': `storage:\n  postgres: ${url}\n` })));
    daemons.push(...shared);
    const e = await amBase(embedded);
    const [a, b] = await Promise.all(shared.slice(0, 2).map(amBase));
    const se = await sequential(e, 'E');
    const ss = await sequential(a!, 'S');
    report('1 client, embedded', line(se));
    report('1 client, shared', line(ss), `(${(percentile(ss, 50) / percentile(se, 50)).toFixed(2)}x p50)`);
    const ce = await concurrent(e, 'E2');
    const cs = await concurrent(a!, 'S2');
    report(`${CONCURRENT_CLIENTS} clients, embedded`, `${ce.toFixed(0)} POSTs/s`);
    report(`${CONCURRENT_CLIENTS} clients, shared`, `${cs.toFixed(0)} POSTs/s`, `(${((cs / ce) * 100).toFixed(1)} %)`);
    report('posted to one daemon, listed by another', line(await propagation(a!, b!)));
  } finally {
    for (const d of daemons) await d.stop();
    await pg.destroy();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runAlertmanagerSharedBench();
