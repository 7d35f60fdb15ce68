/**
 * Alert manager bench (issue 4), side by side with the real Alertmanager 0.25 in one run, same
 * configuration (one inhibit rule), loopback, keep-alive client:
 *   POST 10,000 alerts in batches of 100; GET /api/v2/alerts with 10,000 alerts; GET with a filter
 *   returning 100; GET /api/v2/alerts/groups; GET /api/v2/silences with 1,000 silences; resident
 *   memory after the load. Prints each figure and the ratio (Alertmanager / ctl; > 1 means ctl is
 *   faster or smaller). Goal: every time ratio ≥ 3x, memory ratio ≥ 1x.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { Agent, request } from 'undici';
import { ClientIpResolver, createDispatcher, systemClock } from '../../src/http/index.js';
import { Store } from '../../src/store/index.js';
import { Egress } from '../../src/egress/index.js';
import { alertmanagerComponent } from '../../src/alertmanager/index.js';
import { alertmanagerBinary, startRealAlertmanager } from '../alertmanager/real-alertmanager.js';
import { fmt, median, report, section, startBenchDaemon, socketGet } from './util.js';
import http from 'node:http';

const ALERTS = 10_000;
const BATCH = 100;
const ALERTNAMES = 100;
const SILENCES = 1_000;
const GET_RUNS = 7;
const IDLE_MS = 10_000;

export const BENCH_CONFIG = `
global:
  resolve_timeout: 5m
route:
  receiver: default
  group_by: [alertname]
  routes:
    - matchers: ['team="a"']
      receiver: team-a
receivers:
  - name: default
  - name: team-a
inhibit_rules:
  - source_matchers: ['severity="critical"']
    target_matchers: ['severity="warning"']
    equal: [alertname]
`;

/** 10,000 alerts, 5 labels and 2 annotations each, over 100 alertnames; 10% critical; half team=a. */
function makeAlerts(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const ends = new Date(Date.now() + 3_600_000).toISOString();
  for (let i = 0; i < ALERTS; i++) {
    out.push({
      labels: {
        alertname: `Perf${i % ALERTNAMES}`,
        instance: `host-${i}.example:9100`,
        job: `job-${i % 7}`,
        severity: i % 10 === 0 ? 'critical' : 'warning',
        team: i % 2 === 0 ? 'a' : 'b',
      },
      annotations: { summary: `Instance host-${i} is misbehaving`, runbook: `https://runbooks.example/perf/${i % ALERTNAMES}` },
      endsAt: ends,
    });
  }
  return out;
}

interface Target {
  name: string;
  base: string;
  pid: number;
}

interface Figures {
  postMs: number;
  getAllMs: number;
  getAllBytes: number;
  getFilterMs: number;
  groupsMs: number;
  silencesMs: number;
  rssMiB: number;
  rssIdleMiB: number;
}

const agent = new Agent({ connections: 8, keepAliveTimeout: 30_000 });

async function call(base: string, method: string, path: string, body?: string): Promise<{ status: number; bytes: number }> {
  const r = await request(base + path, {
    method: method as 'GET' | 'POST',
    body,
    headers: body ? { 'content-type': 'application/json' } : {},
    dispatcher: agent,
  });
  const buf = Buffer.from(await r.body.arrayBuffer());
  if (r.statusCode >= 300) throw new Error(`${method} ${path}: ${r.statusCode} ${buf.toString().slice(0, 200)}`);
  return { status: r.statusCode, bytes: buf.length };
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

async function medianOf(runs: number, fn: () => Promise<unknown>): Promise<number> {
  await fn(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push(await timed(fn));
  return median(times);
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

async function measure(t: Target, alerts: Record<string, unknown>[]): Promise<Figures> {
  const batches: string[] = [];
  for (let i = 0; i < alerts.length; i += BATCH) batches.push(JSON.stringify(alerts.slice(i, i + BATCH)));
  const postMs = await timed(async () => {
    for (const b of batches) await call(t.base, 'POST', '/api/v2/alerts', b);
  });
  let bytes = 0;
  const getAllMs = await medianOf(GET_RUNS, async () => {
    bytes = (await call(t.base, 'GET', '/api/v2/alerts')).bytes;
  });
  const getFilterMs = await medianOf(GET_RUNS, () => call(t.base, 'GET', `/api/v2/alerts?filter=${encodeURIComponent('alertname="Perf1"')}`));
  const groupsMs = await medianOf(GET_RUNS, () => call(t.base, 'GET', '/api/v2/alerts/groups'));
  const now = Date.now();
  for (let i = 0; i < SILENCES; i++) {
    const body = JSON.stringify({
      matchers: [{ name: 'instance', value: `silenced-${i}`, isRegex: false }],
      startsAt: new Date(now).toISOString(),
      endsAt: new Date(now + 3_600_000 + i * 1000).toISOString(),
      createdBy: 'bench',
      comment: `silence ${i}`,
    });
    await call(t.base, 'POST', '/api/v2/silences', body);
  }
  const silencesMs = await medianOf(GET_RUNS, () => call(t.base, 'GET', '/api/v2/silences'));
  const rssNow = rssMiB(t.pid);
  // Both runtimes give garbage back to the OS lazily: also sample after a short idle period.
  await new Promise((r) => setTimeout(r, IDLE_MS));
  return { postMs, getAllMs, getAllBytes: bytes, getFilterMs, groupsMs, silencesMs, rssMiB: rssNow, rssIdleMiB: rssMiB(t.pid) };
}

function socketJson(socket: string, host: string, path: string): Promise<any> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath: socket, path, headers: { Host: host } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString())));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * `node alertmanager.js --standalone DIR`: only the alertmanager component in a Node process
 * (no other APIs), to show the component's own footprint beside the whole daemon's.
 */
async function standalone(dir: string): Promise<void> {
  const log = pino({ level: 'silent' });
  const instance = await alertmanagerComponent.create({
    name: 'alertmanager',
    stateDir: dir,
    log,
    clock: systemClock,
    openStore: (m) => new Store(join(dir, 'database', 'alertmanager.db'), m),
    egress: new Egress({ loopbackOnly: true }),
    config: {},
    env: {},
    uploadsDir: join(dir, 'uploads'),
    handleOf: () => undefined,
    version: 'bench',
  });
  await instance.start?.();
  const server = http.createServer(createDispatcher({ target: () => instance, listener: 'bench', viaSocket: false, ips: () => new ClientIpResolver(), log }));
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as { port: number }).port}\n`));
}

if (process.argv[2] === '--standalone') await standalone(process.argv[3]!);

async function startStandalone(): Promise<{ base: string; pid: number; stop: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'am-standalone-'));
  writeFileSync(join(dir, 'alertmanager.yml'), BENCH_CONFIG);
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--standalone', dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (d) => resolve(String(d).trim()));
    child.once('exit', () => reject(new Error('standalone alertmanager exited')));
  });
  return {
    base: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function runAlertmanagerBench(): Promise<void> {
  section('Alert manager API v2 vs Alertmanager 0.25 (issue 4)');
  const alerts = makeAlerts();
  const servers = 'servers:\n  alertmanager: {address: "127.0.0.1:0"}\n  gateway: {address: "127.0.0.1:0"}\n  pipeline: {address: "127.0.0.1:0"}\n  nodes: {address: "127.0.0.1:0"}\n';
  const d = await startBenchDaemon({ 'daemon.yaml': servers, 'alertmanager.yml': BENCH_CONFIG });
  let ours: Figures;
  try {
    void socketGet;
    const meta = await socketJson(d.socket, 'core', '/core/1.0');
    const base = `http://${meta.metadata.servers.alertmanager.bound_address}`;
    ours = await measure({ name: 'ctl', base, pid: d.child.pid! }, alerts);
  } finally {
    await d.stop();
  }
  const alone = await startStandalone();
  let aloneFigures: Figures;
  try {
    aloneFigures = await measure({ name: 'component alone', base: alone.base, pid: alone.pid }, alerts);
  } finally {
    await alone.stop();
  }
  let theirs: Figures | undefined;
  if (alertmanagerBinary()) {
    const real = await startRealAlertmanager(BENCH_CONFIG);
    try {
      theirs = await measure({ name: 'alertmanager', base: real.url, pid: real.proc.pid! }, alerts);
    } finally {
      await real.stop();
    }
  } else {
    process.stdout.write('  (prometheus-alertmanager is not installed: ctl figures only)\n');
  }
  const rows: [string, keyof Figures, string][] = [
    [`POST ${ALERTS} alerts in batches of ${BATCH}, total`, 'postMs', 'ms'],
    [`GET /api/v2/alerts, ${ALERTS} alerts, median of ${GET_RUNS}`, 'getAllMs', 'ms'],
    ['GET /api/v2/alerts?filter=alertname="Perf1" (100 alerts)', 'getFilterMs', 'ms'],
    ['GET /api/v2/alerts/groups', 'groupsMs', 'ms'],
    [`GET /api/v2/silences, ${SILENCES} silences`, 'silencesMs', 'ms'],
    ['resident memory right after the load (whole daemon)', 'rssMiB', 'MiB'],
    [`resident memory ${IDLE_MS / 1000} s later (whole daemon)`, 'rssIdleMiB', 'MiB'],
  ];
  process.stdout.write(`  ${''.padEnd(58)} ${'ctl'.padStart(14)} ${'alertmanager'.padStart(14)}  ratio (AM/ctl, goal ≥ 3x; memory ≥ 1x)\n`);
  for (const [label, key, unit] of rows) {
    const o = ours[key];
    const t = theirs?.[key];
    const f = (v: number) => (unit === 'ms' ? fmt(v, 1) : `${v.toFixed(1)} MiB`);
    const ratio = t === undefined ? '' : `${(t / o).toFixed(2)}x`;
    process.stdout.write(`  ${label.padEnd(58)} ${f(o).padStart(14)} ${(t === undefined ? '-' : f(t)).padStart(14)}  ${ratio}\n`);
  }
  const memRow = (label: string, o: number, t: number | undefined) =>
    process.stdout.write(`  ${label.padEnd(58)} ${(o.toFixed(1) + ' MiB').padStart(14)} ${(t === undefined ? '-' : t.toFixed(1) + ' MiB').padStart(14)}  ${t === undefined ? '' : (t / o).toFixed(2) + 'x'}\n`);
  memRow('resident memory, component alone, right after the load', aloneFigures.rssMiB, theirs?.rssMiB);
  memRow(`resident memory, component alone, ${IDLE_MS / 1000} s later`, aloneFigures.rssIdleMiB, theirs?.rssIdleMiB);
  process.stdout.write(`  ${'POST total, component alone'.padEnd(58)} ${fmt(aloneFigures.postMs, 1).padStart(14)} ${(theirs ? fmt(theirs.postMs, 1) : '-').padStart(14)}  ${theirs ? (theirs.postMs / aloneFigures.postMs).toFixed(2) + 'x' : ''}\n`);
  report('GET /api/v2/alerts response size (ctl)', `${(ours.getAllBytes / 1048576).toFixed(2)} MiB`, theirs ? `alertmanager ${(theirs.getAllBytes / 1048576).toFixed(2)} MiB` : '');
  await agent.close();
}
