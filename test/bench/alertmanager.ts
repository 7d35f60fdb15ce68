/**
 * Alert manager bench (issue 4), side by side with the real Alertmanager 0.25 in one run, same
 * configuration (one inhibit rule), loopback, the same clients for both:
 *   POST 10,000 alerts in batches of 100; GET /api/v2/alerts with 10,000 alerts; GET with a filter
 *   returning 100; GET /api/v2/alerts/groups; GET /api/v2/silences with 1,000 silences; resident
 *   memory after the load. Prints each figure and the ratio (Alertmanager / ctl; > 1 means ctl is
 *   faster or smaller). Goal: every time ratio ≥ 3x, memory ratio ≥ 1x.
 *
 * Fairness: both servers get the same warm-up first (2,000 already-resolved alerts posted 15
 * times with each client: 600 requests, about what V8 needs to finish optimising the request
 * path; the GET figures still see exactly the 10,000 active alerts; each GET is also run once
 * before timing), the same batches and the same clients. POST is timed with a
 * minimal keep-alive HTTP/1.1 client (raw-http.ts: pre-encoded requests, one in flight per
 * connection), so the figure is the server's more than the client's: first sequentially (the
 * issue's figure), then the same 10,000 are re-posted (what Prometheus does every evaluation)
 * sequentially, with undici as the client, and with 4 requests in flight. The server's own CPU
 * time (all its threads) during the first POST is read from /proc, to separate its work from the
 * client's and the kernel's. That first POST is timed on five fresh servers of each kind (same
 * warm-up each time) and the median reported. GETs use undici (keep-alive).
 *
 * The Node floor (alertmanager-floor.ts; CTL_BENCH_FLOOR=0 leaves it out) gets the same warm-up and
 * first POST: node:http, JSON.parse, a fingerprint and a Map entry per alert, one journal writev,
 * nothing else; what any durable Node alert store pays on this machine during the same run.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { alertmanagerBinary, startRealAlertmanager } from '../alertmanager/real-alertmanager.js';
import { ROOT, fmt, median, report, section, startBenchDaemon } from './util.js';
import { RawHttpConnection } from './raw-http.js';
import http from 'node:http';

const ALERTS = 10_000;
const BATCH = 100;
const ALERTNAMES = 100;
const SILENCES = 1_000;
const GET_RUNS = 7;
const IDLE_MS = 10_000;
const WARMUP_BATCHES = 20;
const WARMUP_ROUNDS = Number(process.env.AM_BENCH_WARMUP_ROUNDS ?? 15);
const CONCURRENCY = 4;
const REPOST_RUNS = 3;
/** Fresh servers the first POST is timed on (the figure is their median; one of them is the full run's). */
const POST_RUNS = 5;

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
export function makeAlerts(): Record<string, unknown>[] {
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

/**
 * Already-resolved alerts with label sets of their own: they exercise the POST path, no GET shows
 * them. Same fields as the measured alerts (labels, annotations, endsAt; startsAt defaults to
 * endsAt), so the JIT-compiled request path has seen the body shape it is timed on (with a
 * `startsAt` of their own, the decoder's optimised code was thrown away on the first timed batch).
 */
export function warmupBatches(): string[] {
  const ends = new Date(Date.now() - 3_600_000).toISOString();
  const out: string[] = [];
  for (let b = 0; b < WARMUP_BATCHES; b++) {
    const batch = [];
    for (let i = 0; i < BATCH; i++) {
      const n = b * BATCH + i;
      batch.push({
        labels: { alertname: `Warmup${n % ALERTNAMES}`, instance: `warm-${n}.example:9100`, job: `job-${n % 7}`, severity: n % 10 === 0 ? 'critical' : 'warning', team: n % 2 === 0 ? 'a' : 'b' },
        annotations: { summary: `Warm-up ${n}`, runbook: `https://runbooks.example/warm/${n % ALERTNAMES}` },
        endsAt: ends,
      });
    }
    out.push(JSON.stringify(batch));
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
  /** Server CPU time (user + system) during the sequential POST. */
  postCpuMs: number;
  repostMs: number;
  repostUndiciMs: number;
  repostConcMs: number;
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

/** utime + stime of a process, in ms (from /proc/PID/stat; clock ticks are 100 Hz on Linux). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

/** POST every batch with the general-purpose client (undici), `inFlight` requests at a time. */
async function postAll(base: string, batches: string[], inFlight: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < batches.length) await call(base, 'POST', '/api/v2/alerts', batches[next++]);
    }),
  );
}

/** POST every pre-encoded batch with the minimal client, one connection per request in flight. */
async function postAllRaw(conns: RawHttpConnection[], batches: Buffer[]): Promise<void> {
  let next = 0;
  await Promise.all(
    conns.map(async (c) => {
      while (next < batches.length) {
        const r = await c.send(batches[next++]!);
        if (r.status !== 200) throw new Error(`POST /api/v2/alerts: ${r.status} ${r.body.toString().slice(0, 200)}`);
      }
    }),
  );
}

interface FirstPost {
  postMs: number;
  postCpuMs: number;
}

/** The batches of `alerts` as request bodies. */
export function batchesOf(alerts: Record<string, unknown>[]): string[] {
  const batches: string[] = [];
  for (let i = 0; i < alerts.length; i += BATCH) batches.push(JSON.stringify(alerts.slice(i, i + BATCH)));
  return batches;
}

/**
 * On a server that has not seen them: the warm-up (the same resolved alerts posted WARMUP_ROUNDS
 * times with both clients: the Node server's request path gets JIT-compiled, Alertmanager gets
 * the same requests), then the timed POST of every batch, sequentially, with its server CPU time.
 */
async function warmUpAndPost(t: Target, conns: RawHttpConnection[], encoded: Buffer[]): Promise<FirstPost> {
  const warmup = warmupBatches();
  const warmupEncoded = warmup.map((b) => conns[0]!.encode('POST', '/api/v2/alerts', b));
  for (let i = 0; i < WARMUP_ROUNDS; i++) {
    await postAllRaw(conns.slice(0, 1), warmupEncoded);
    await postAll(t.base, warmup, 1);
  }
  const cpu0 = cpuMs(t.pid);
  const postMs = await timed(() => postAllRaw(conns.slice(0, 1), encoded));
  return { postMs, postCpuMs: cpuMs(t.pid) - cpu0 };
}

async function openConnections(t: Target, n: number): Promise<RawHttpConnection[]> {
  const { hostname, port } = new URL(t.base);
  return Promise.all(Array.from({ length: n }, () => RawHttpConnection.open(hostname, Number(port))));
}

/**
 * The first POST on a cold server: started, then the 10,000 alerts posted at once, with no
 * warm-up (as a user meets a restarted alert manager, with Prometheus re-sending its alerts).
 */
async function coldPost(t: Target, alerts: Record<string, unknown>[]): Promise<FirstPost> {
  const conns = await openConnections(t, 1);
  try {
    const encoded = batchesOf(alerts).map((b) => conns[0]!.encode('POST', '/api/v2/alerts', b));
    const cpu0 = cpuMs(t.pid);
    const postMs = await timed(() => postAllRaw(conns, encoded));
    return { postMs, postCpuMs: cpuMs(t.pid) - cpu0 };
  } finally {
    for (const c of conns) c.close();
  }
}

type On = <T>(fn: (t: Target) => Promise<T>) => Promise<T>;

/**
 * The cold first POST on POST_RUNS fresh servers of each kind, taken in turns (ctl, the Node
 * floor, Alertmanager; so that the machine's drift from one minute to the next reaches all
 * three alike): each sample, the medians, the ratio to 0.25 and ctl's ratio to the floor.
 */
async function coldFirstPosts(onDaemon: On, onReal: On | undefined, alerts: Record<string, unknown>[]): Promise<void> {
  const ours: FirstPost[] = [];
  const floor: FirstPost[] = [];
  const theirs: FirstPost[] = [];
  const withFloor = process.env.CTL_BENCH_FLOOR !== '0';
  for (let i = 0; i < POST_RUNS; i++) {
    ours.push(await onDaemon((t) => coldPost(t, alerts)));
    if (withFloor) floor.push(await onChildServer('alertmanager-floor.js', {}, (t) => coldPost(t, alerts)));
    if (onReal) theirs.push(await onReal((t) => coldPost(t, alerts)));
  }
  const med = (runs: FirstPost[], k: keyof FirstPost) => median(runs.map((r) => r[k]));
  const samples = (runs: FirstPost[]) => runs.map((r) => r.postMs.toFixed(1)).join(', ');
  process.stdout.write(`  cold servers (started, then ${ALERTS} alerts posted at once in batches of ${BATCH}), ${POST_RUNS} of each kind:
`);
  const row = (label: string, runs: FirstPost[]) => {
    if (runs.length === 0) return;
    const ms = med(runs, 'postMs');
    const cpu = med(runs, 'postCpuMs');
    const vsAm = theirs.length > 0 ? `${(med(theirs, 'postMs') / ms).toFixed(2)}x 0.25` : '';
    process.stdout.write(`  ${label.padEnd(26)} ${fmt(ms, 1).padStart(10)} (CPU ${cpu.toFixed(0)} ms) ${vsAm.padStart(10)}   runs ${samples(runs)} ms\n`);
  };
  row('ctl (whole daemon)', ours);
  row('Node floor', floor);
  row('Alertmanager 0.25', theirs);
  if (floor.length > 0) {
    const r = med(floor, 'postMs') / med(ours, 'postMs');
    process.stdout.write(`  ctl's ratio to the cold Node floor: ${r.toFixed(2)}x (1 = as fast as the floor); goal vs 0.25: >= 3x\n`);
  }
}

/** Only the first POST, on a fresh server (the extra samples of that figure). */
async function measureFirstPost(t: Target, alerts: Record<string, unknown>[]): Promise<FirstPost> {
  const conns = await openConnections(t, 1);
  try {
    return await warmUpAndPost(t, conns, batchesOf(alerts).map((b) => conns[0]!.encode('POST', '/api/v2/alerts', b)));
  } finally {
    for (const c of conns) c.close();
  }
}

async function measure(t: Target, alerts: Record<string, unknown>[]): Promise<Figures> {
  const batches = batchesOf(alerts);
  const conns = await openConnections(t, CONCURRENCY);
  const encoded = batches.map((b) => conns[0]!.encode('POST', '/api/v2/alerts', b));
  const { postMs, postCpuMs } = await warmUpAndPost(t, conns, encoded);
  const reposts: number[] = [];
  const repostsUndici: number[] = [];
  const concs: number[] = [];
  for (let i = 0; i < REPOST_RUNS; i++) {
    reposts.push(await timed(() => postAllRaw(conns.slice(0, 1), encoded)));
    repostsUndici.push(await timed(() => postAll(t.base, batches, 1)));
    concs.push(await timed(() => postAllRaw(conns, encoded)));
  }
  for (const c of conns) c.close();
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
  return { postMs, postCpuMs, repostMs: median(reposts), repostUndiciMs: median(repostsUndici), repostConcMs: median(concs), getAllMs, getAllBytes: bytes, getFilterMs, groupsMs, silencesMs, rssMiB: rssNow, rssIdleMiB: rssMiB(t.pid) };
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
 * The glibc malloc settings examples/ctl.service gives the daemon (its `Environment=MALLOC_*`
 * lines; docs/alertmanager.md "Memory"): the daemon is measured as a systemd user runs it.
 * AM_BENCH_UNIT_ENV=0 leaves them out (the daemon as `npm start` runs it).
 */
function unitMallocEnv(): Record<string, string> {
  if (process.env.AM_BENCH_UNIT_ENV === '0') return {};
  const env: Record<string, string> = {};
  for (const line of readFileSync(join(ROOT, 'examples', 'ctl.service'), 'utf8').split('\n')) {
    const m = /^Environment=(.*)$/.exec(line.trim());
    if (!m) continue;
    for (const pair of m[1]!.split(/\s+/)) {
      const eq = pair.indexOf('=');
      if (eq > 0 && pair.startsWith('MALLOC_')) env[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
  }
  return env;
}

/**
 * A bench server script of this folder in its own node process (`SCRIPT DIR`; it prints its
 * port), for the duration of `fn`.
 */
async function onChildServer<T>(script: string, env: Record<string, string>, fn: (t: Target) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'am-bench-server-'));
  writeFileSync(join(dir, 'alertmanager.yml'), BENCH_CONFIG);
  const entry = fileURLToPath(new URL(`./${script}`, import.meta.url));
  const child = spawn(process.execPath, [entry, dir], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  try {
    const port = await new Promise<string>((resolve, reject) => {
      child.stdout!.once('data', (d) => resolve(String(d).trim()));
      child.once('exit', () => reject(new Error(`${script} exited`)));
    });
    return await fn({ name: script, base: `http://127.0.0.1:${port}`, pid: child.pid! });
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runAlertmanagerBench(): Promise<void> {
  section('Alert manager API v2 vs Alertmanager 0.25 (issue 4)');
  const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
  process.stdout.write(`  load average before: ${load()} (2 vCPUs shared with other work: figures vary between runs)\n`);
  const alerts = makeAlerts();
  const servers = 'servers:\n  alertmanager: {address: "127.0.0.1:0"}\n  gateway: {address: "127.0.0.1:0"}\n  pipeline: {address: "127.0.0.1:0"}\n  nodes: {address: "127.0.0.1:0"}\n';
  // AM_BENCH_NODE_OPTIONS (e.g. --max-semi-space-size=4) is handed to the daemon as NODE_OPTIONS,
  // to measure runtime options without changing bin/ctl.
  const nodeOptions = process.env.AM_BENCH_NODE_OPTIONS;
  if (nodeOptions) process.stdout.write(`  daemon NODE_OPTIONS: ${nodeOptions}\n`);
  const mallocEnv = unitMallocEnv();
  const shown = Object.entries(mallocEnv).map(([k, v]) => `${k}=${v}`).join(' ');
  process.stdout.write(`  daemon environment from examples/ctl.service: ${shown || '(none)'}\n`);
  const cap = process.env.CTL_DAEMON_YOUNG_GENERATION_MIB ?? '';
  process.stdout.write(`  daemon young generation cap: ${cap.trim() === '' ? 'default' : cap === '0' ? 'none' : `${cap} MiB`} (CTL_DAEMON_YOUNG_GENERATION_MIB)\n`);
  if (process.env.CTL_DAEMON_V8_FLAGS) process.stdout.write(`  daemon V8 flags (CTL_DAEMON_V8_FLAGS): ${process.env.CTL_DAEMON_V8_FLAGS}\n`);
  const onDaemon = async <T>(fn: (t: Target) => Promise<T>): Promise<T> => {
    const d = await startBenchDaemon({ 'daemon.yaml': servers, 'alertmanager.yml': BENCH_CONFIG }, { ...mallocEnv, ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}) });
    try {
      const meta = await socketJson(d.socket, 'core', '/core/1.0');
      return await fn({ name: 'ctl', base: `http://${meta.metadata.servers.alertmanager.bound_address}`, pid: d.child.pid! });
    } finally {
      await d.stop();
    }
  };
  const onRealAlertmanager = async <T>(fn: (t: Target) => Promise<T>): Promise<T> => {
    const real = await startRealAlertmanager(BENCH_CONFIG);
    try {
      return await fn({ name: 'alertmanager', base: real.url, pid: real.proc.pid! });
    } finally {
      await real.stop();
    }
  };
  /**
   * The first POST is one 60–250 ms burst, the figure of this bench that a busy neighbour moves
   * most: it is timed on POST_RUNS fresh servers of each kind (the full run's and extra ones with
   * the same warm-up) and the median taken, both for ctl and for Alertmanager.
   */
  const firstPosts = async (on: <T>(fn: (t: Target) => Promise<T>) => Promise<T>, full: Figures): Promise<FirstPost[]> => {
    const out: FirstPost[] = [full];
    for (let i = 1; i < POST_RUNS; i++) out.push(await on((t) => measureFirstPost(t, alerts)));
    return out;
  };
  const withMedianPost = (f: Figures, runs: FirstPost[]): Figures => ({ ...f, postMs: median(runs.map((r) => r.postMs)), postCpuMs: median(runs.map((r) => r.postCpuMs)) });

  await coldFirstPosts(onDaemon, alertmanagerBinary() ? onRealAlertmanager : undefined, alerts);
  if (process.env.AM_BENCH_COLD_ONLY === '1') return void (await agent.close());

  const oursFull = await onDaemon((t) => measure(t, alerts));
  const ourPosts = await firstPosts(onDaemon, oursFull);
  const ours = withMedianPost(oursFull, ourPosts);
  const aloneFigures = await onChildServer('alertmanager-standalone.js', mallocEnv, (t) => measure(t, alerts));
  // The Node floor (alertmanager-floor.ts): only the first POST, on POST_RUNS fresh servers.
  const floorPosts: FirstPost[] = [];
  if (process.env.CTL_BENCH_FLOOR !== '0') {
    for (let i = 0; i < POST_RUNS; i++) floorPosts.push(await onChildServer('alertmanager-floor.js', {}, (t) => measureFirstPost(t, alerts)));
  }
  let theirs: Figures | undefined;
  let theirPosts: FirstPost[] = [];
  if (alertmanagerBinary()) {
    const theirsFull = await onRealAlertmanager((t) => measure(t, alerts));
    theirPosts = await firstPosts(onRealAlertmanager, theirsFull);
    theirs = withMedianPost(theirsFull, theirPosts);
  } else {
    process.stdout.write('  (prometheus-alertmanager is not installed: ctl figures only)\n');
  }
  const rows: [string, keyof Figures, string][] = [
    [`POST ${ALERTS} alerts, batches of ${BATCH}, median of ${POST_RUNS} servers`, 'postMs', 'ms'],
    ['  server CPU time during that POST', 'postCpuMs', 'ms'],
    [`re-POST the same ${ALERTS}, median of ${REPOST_RUNS}`, 'repostMs', 'ms'],
    ['  the same with undici as the client', 'repostUndiciMs', 'ms'],
    [`  the same with ${CONCURRENCY} requests in flight`, 'repostConcMs', 'ms'],
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
  const postRow = (label: string, ms: number) =>
    process.stdout.write(`  ${label.padEnd(58)} ${fmt(ms, 1).padStart(14)} ${(theirs ? fmt(theirs.postMs, 1) : '-').padStart(14)}  ${theirs ? (theirs.postMs / ms).toFixed(2) + 'x' : ''}\n`);
  postRow('POST total, component alone', aloneFigures.postMs);
  if (floorPosts.length > 0) postRow(`POST total, Node floor, median of ${POST_RUNS} servers`, median(floorPosts.map((r) => r.postMs)));
  const samples = (runs: FirstPost[]) => runs.map((r) => fmt(r.postMs, 1)).join(', ');
  report('first POST on each fresh server (ctl)', samples(ourPosts), theirs ? `alertmanager ${samples(theirPosts)}` : '');
  if (floorPosts.length > 0) report('first POST on each fresh server (Node floor)', samples(floorPosts));
  report('GET /api/v2/alerts response size (ctl)', `${(ours.getAllBytes / 1048576).toFixed(2)} MiB`, theirs ? `alertmanager ${(theirs.getAllBytes / 1048576).toFixed(2)} MiB` : '');
  process.stdout.write(`  load average after: ${load()}\n`);
  await agent.close();
}
