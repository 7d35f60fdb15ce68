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
 * silences are posted one after another instead (an amtool loop; default 1000). Loopback only; needs
 * valgrind (and callgrind_control) on PATH.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_CONFIG, makeAlerts, warmupBatches, batchesOf } from './alertmanager.js';
import { RawHttpConnection } from './raw-http.js';

const mode = (process.argv[2] ?? 'ctl') as 'ctl' | 'floor';
const what = (process.argv[5] ?? 'alerts') as 'alerts' | 'silences';
const batches = Number(process.argv[3] ?? (what === 'silences' ? 1000 : 100));
const warmup = Number(process.argv[4] ?? 0);
const here = dirname(fileURLToPath(import.meta.url));

const dir = mkdtempSync(join(tmpdir(), 'ctl-cg-am-'));
writeFileSync(join(dir, 'alertmanager.yml'), BENCH_CONFIG);
const script = join(here, mode === 'floor' ? 'alertmanager-floor.js' : 'alertmanager-standalone.js');
const out = join(dir, 'cg.out');
const child = spawn(
  'valgrind',
  // CTL_CG_NODE_FLAGS: extra node flags (e.g. --perf-basic-prof to name JIT code in the dump afterwards).
  ['--tool=callgrind', '--separate-threads=yes', '--smc-check=all-non-file', `--callgrind-out-file=${out}`, process.execPath, ...(process.env.CTL_CG_NODE_FLAGS ?? '').split(' ').filter(Boolean), script, dir],
  { stdio: ['ignore', 'pipe', 'pipe'] },
);
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

try {
  const warm = warmupBatches();
  for (let i = 0; i < warmup; i++) await post([warm[i % warm.length]!]);
  const measured = what === 'silences' ? silenceBodies(batches) : batchesOf(makeAlerts()).slice(0, batches);
  control('-z');
  const t0 = performance.now();
  await post(measured, what === 'silences' ? '/api/v2/silences' : '/api/v2/alerts');
  const burstS = (performance.now() - t0) / 1000;
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
  const per = what === 'silences' ? 'request' : 'batch';
  process.stdout.write(`${mode}: ${batches} ${what === 'silences' ? 'silences' : 'batches of 100'} after ${warmup} warm-up batches of alerts: main thread ${m(main)} Ir (${m(main / batches)} per ${per}), all threads ${m(all)} Ir (${m(all / batches)} per ${per}); the burst took ${burstS.toFixed(1)} s under valgrind\n`);
} finally {
  conn.close();
  child.kill('SIGTERM');
  await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
  rmSync(dir, { recursive: true, force: true });
}
