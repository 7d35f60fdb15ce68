/**
 * Instructions the alert manager spends on its first burst of alerts, counted by callgrind
 * (wall-clock figures of one cold burst on a shared 2-core machine vary by 2x; instruction counts
 * barely move):
 *   node dist/test/bench/alertmanager-callgrind.js [ctl|floor] [BATCHES] [WARMUP] [alerts|silences]
 * starts test/bench/alertmanager-standalone.js (the component as the daemon runs it, with the
 * daemon's V8 settings) or alertmanager-floor.js (node:http, JSON.parse, a fingerprint and a Map
 * entry per alert, one journal writev) under `valgrind --tool=callgrind --separate-threads=yes`,
 * posts WARMUP (default 0: a cold server, as a user meets it) batches of the bench's warm-up
 * alerts, zeroes the counters, posts BATCHES (default 100) batches of 100 of the bench's alerts
 * one after another, dumps, and prints the instructions of the main thread and of every thread
 * together (V8's compiler and collector threads included), per batch. With `silences`, BATCHES
 * silences are posted one after another instead (an amtool loop; default 1000). With `notify`, the
 * notification bench's backlog (alertmanager-notify.ts: 10,000 alerts started an hour ago in 1,000
 * new groups, group_by alertname, one webhook; BATCHES is ignored) is posted in 10 batches of
 * 1,000 and counted until a webhook sink in this process has all 1,000 first notifications
 * (`floor` is then alertmanager-floor.js --notify); CTL_CG_NOTIFY_AGE_MS=0 posts new alerts
 * instead, which wait the config's group_wait (1 s). CTL_CG_RSS=1 runs the same without valgrind
 * and prints the server's peak and current resident memory (VmHWM, VmRSS) after the run.
 * Loopback only; needs valgrind (and callgrind_control) on PATH.
 */
import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_CONFIG, makeAlerts, warmupBatches, batchesOf } from './alertmanager.js';
import { RawHttpConnection } from './raw-http.js';

const mode = (process.argv[2] ?? 'ctl') as 'ctl' | 'floor';
const what = (process.argv[5] ?? 'alerts') as 'alerts' | 'silences' | 'notify';
const batches = Number(process.argv[3] ?? (what === 'silences' ? 1000 : 100));
const warmup = Number(process.argv[4] ?? 0);
const here = dirname(fileURLToPath(import.meta.url));
const noValgrind = process.env.CTL_CG_RSS === '1';

// The notification bench's shape and configuration (alertmanager-notify.ts), but for a group_interval
// of 10m: a flush's sends are given up group_interval after it began, and under valgrind 1,000 cold
// sends can take more than the bench's 1m (the work is the same).
const GROUPS = 1000;
const PER_GROUP = 10;
const notifyConfig = (sink: string) => `route:
  receiver: hook
  group_by: [alertname]
  group_wait: 1s
  group_interval: 10m
  repeat_interval: 1h
receivers:
  - name: hook
    webhook_configs: [{url: "${sink}"}]
`;
const notified = new Set<string>();
let allNotified: () => void = () => {};
const sinkDone = new Promise<void>((r) => (allNotified = r));
const sink = what === 'notify'
  ? http.createServer((req, res) => {
      let b = '';
      req.on('error', (e) => process.stderr.write(`sink: ${e.message}\n`));
      req.on('data', (c) => (b += c));
      req.on('end', () => {
        notified.add((JSON.parse(b) as { groupKey: string }).groupKey);
        res.end();
        if (notified.size === GROUPS) allNotified();
      });
    })
  : undefined;
if (sink) await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
const sinkUrl = sink ? `http://127.0.0.1:${(sink.address() as AddressInfo).port}/hook` : '';

const dir = mkdtempSync(join(tmpdir(), 'ctl-cg-am-'));
writeFileSync(join(dir, 'alertmanager.yml'), what === 'notify' ? notifyConfig(sinkUrl) : BENCH_CONFIG);
const script = join(here, mode === 'floor' ? 'alertmanager-floor.js' : 'alertmanager-standalone.js');
const out = join(dir, 'cg.out');
// CTL_CG_NODE_FLAGS: extra node flags (e.g. --perf-basic-prof to name JIT code in the dump afterwards).
const nodeArgs = [...(process.env.CTL_CG_NODE_FLAGS ?? '').split(' ').filter(Boolean), script, dir, ...(what === 'notify' && mode === 'floor' ? ['--notify', sinkUrl] : [])];
// Under valgrind the server can pause for longer than node's 5 s keep-alive timeout between two requests.
const env = noValgrind ? process.env : { CTL_BENCH_KEEP_ALIVE_MS: '600000', ...process.env };
const child = noValgrind
  ? spawn(process.execPath, nodeArgs, { stdio: ['ignore', 'pipe', 'pipe'] })
  : spawn('valgrind', ['--tool=callgrind', '--separate-threads=yes', '--smc-check=all-non-file', `--callgrind-out-file=${out}`, process.execPath, ...nodeArgs], { stdio: ['ignore', 'pipe', 'pipe'], env });
let stderr = '';
child.stderr!.on('data', (c) => (stderr += c));
const port = await new Promise<number>((resolve, reject) => {
  let text = '';
  child.stdout!.on('data', (c) => {
    text += c;
    const m = /^(\d+)\s*$/m.exec(text);
    if (m) resolve(Number(m[1]));
  });
  child.once('exit', (code) => reject(new Error(`exited with ${code}: ${stderr.slice(-2000)}`)));
});

const control = (flag: string) => {
  if (noValgrind) return;
  const r = spawnSync('callgrind_control', [flag, String(child.pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`callgrind_control ${flag}: ${r.stderr}`);
};
const conn = await RawHttpConnection.open('127.0.0.1', port);
async function post(bodies: string[], path = '/api/v2/alerts'): Promise<void> {
  for (const b of bodies) {
    const r = await conn.send(conn.encode('POST', path, b));
    if (r.status !== 200) throw new Error(`POST ${path}: ${r.status} ${r.body.toString().slice(0, 200)}`);
  }
}

/** The silence bench's bodies (alertmanager-silences.ts): one matcher each, an hour long. */
function silenceBodies(n: number): string[] {
  const now = Date.now();
  return Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      matchers: [{ name: 'instance', value: `host-${i}`, isRegex: false, isEqual: true }],
      startsAt: new Date(now).toISOString(),
      endsAt: new Date(now + 3_600_000).toISOString(),
      createdBy: 'bench',
      comment: `maintenance ${i}`,
    }),
  );
}

/** The notification bench's 10 batches of 1,000 alerts (alertmanager-notify.ts). */
function notifyBodies(): string[] {
  const startsAt = new Date(Date.now() - Number(process.env.CTL_CG_NOTIFY_AGE_MS ?? 3_600_000)).toISOString();
  const bodies: string[] = [];
  for (let start = 0; start < GROUPS * PER_GROUP; start += 1000) {
    bodies.push(JSON.stringify(Array.from({ length: 1000 }, (_, i) => {
      const n = start + i;
      return { labels: { alertname: `G${n % GROUPS}`, instance: `i${n}` }, annotations: { summary: 'bench' }, startsAt };
    })));
  }
  return bodies;
}

try {
  const warm = warmupBatches();
  for (let i = 0; i < warmup; i++) await post([warm[i % warm.length]!]);
  const measured = what === 'silences' ? silenceBodies(batches) : what === 'notify' ? notifyBodies() : batchesOf(makeAlerts()).slice(0, batches);
  control('-z');
  const t0 = performance.now();
  if (what === 'notify') {
    // A connection per batch, as the notification bench's fetch calls: under valgrind the server is
    // busy notifying between two batches for longer than node's headersTimeout (60 s) on one
    // kept-alive connection.
    for (const [i, b] of measured.entries()) {
      const c = await RawHttpConnection.open('127.0.0.1', port);
      try {
        const r = await c.send(c.encode('POST', '/api/v2/alerts', b));
        if (r.status !== 200) throw new Error(`POST /api/v2/alerts: ${r.status} ${r.body.toString().slice(0, 200)}`);
      } finally {
        c.close();
      }
      if (process.env.CTL_CG_VERBOSE) process.stderr.write(`batch ${i + 1} answered after ${((performance.now() - t0) / 1000).toFixed(1)} s; ${notified.size} groups notified\n`);
    }
  } else await post(measured, what === 'silences' ? '/api/v2/silences' : '/api/v2/alerts');
  if (what === 'notify') {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([sinkDone, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`only ${notified.size} of ${GROUPS} groups notified in 600 s`)), 600_000)))]);
    clearTimeout(timer);
  }
  const burstS = (performance.now() - t0) / 1000;
  if (noValgrind) {
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024;
    process.stdout.write(`${mode}: ${what}: took ${(burstS * 1000).toFixed(0)} ms without valgrind; peak RSS (VmHWM) ${kb('VmHWM').toFixed(1)} MB, RSS now ${kb('VmRSS').toFixed(1)} MB\n`);
  } else {
  control('-d');
  // One file per thread of the last dump: `<out>.<dump>-<thread>`, totals on the `summary:`/`totals:` line.
  const files = readdirSync(dir).filter((f) => /^cg\.out\.\d+-\d+$/.test(f));
  const lastDump = Math.max(...files.map((f) => Number(/\.(\d+)-/.exec(f)![1])));
  let main = 0;
  let all = 0;
  for (const f of files.filter((f) => Number(/\.(\d+)-/.exec(f)![1]) === lastDump)) {
    const text = readFileSync(join(dir, f), 'utf8');
    const ir = Number(/^(?:summary|totals):\s*(\d+)/m.exec(text)?.[1] ?? 0);
    all += ir;
    // CTL_CG_KEEP_DIR=DIR keeps every thread's dump of the measured burst.
    if (process.env.CTL_CG_KEEP_DIR) writeFileSync(join(process.env.CTL_CG_KEEP_DIR, f), text);
    if (f.endsWith('-01')) {
      main = ir;
      // CTL_CG_KEEP=FILE keeps the main thread's dump for callgrind_annotate.
      if (process.env.CTL_CG_KEEP) writeFileSync(process.env.CTL_CG_KEEP, `# pid ${child.pid}\n${text}`);
    }
  }
  const m = (n: number) => `${(n / 1e6).toFixed(1)}M`;
  if (what === 'notify') {
    process.stdout.write(`${mode}: notify ${GROUPS * PER_GROUP} alerts in ${GROUPS} new groups, ${process.env.CTL_CG_NOTIFY_AGE_MS === '0' ? 'new alerts (group_wait 1 s)' : 'a backlog (flushed at once)'}: main thread ${m(main)} Ir, all threads ${m(all)} Ir; until the sink had all ${GROUPS}: ${burstS.toFixed(1)} s under valgrind\n`);
  } else {
    const per = what === 'silences' ? 'request' : 'batch';
    process.stdout.write(`${mode}: ${batches} ${what === 'silences' ? 'silences' : 'batches of 100'} after ${warmup} warm-up batches of alerts: main thread ${m(main)} Ir (${m(main / batches)} per ${per}), all threads ${m(all)} Ir (${m(all / batches)} per ${per}); the burst took ${burstS.toFixed(1)} s under valgrind\n`);
  }
  }
} catch (e) {
  process.stderr.write(`server's stderr: ${stderr.slice(-3000)}\n`);
  throw e;
} finally {
  conn.close();
  child.kill('SIGTERM');
  await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
  rmSync(dir, { recursive: true, force: true });
  sink?.close();
  sink?.closeAllConnections();
}
