/**
 * Instructions per proxied request on the gateway's main thread, counted by callgrind (wall-clock
 * figures on a shared 2-core machine vary by 20-40 %; instruction counts barely move):
 *   node dist/test/bench/gateway-callgrind.js [ctl|idle|core|floor] [N] [WARMUP]
 * runs test/bench/gateway-server.js (ctl, or `core`: its --core mode) or gateway-floor.js (the bare
 * node:http + undici pass-through) under `valgrind --tool=callgrind --separate-threads=yes`, sends
 * (`idle`: ctl with the optional features configured but idle for the bench key: a stored memory,
 * an auto skill and a routing policy that belong to another key, a webhook for other events,
 * compression switched on with nothing to compress, the guardrails set explicitly; what `ctl` and
 * `idle` count should be the same),
 * WARMUP (default 400) sequential non-streaming requests through it from a mock upstream in this
 * process, zeroes the counters, sends N (default 1000) more, dumps, and prints the main thread's
 * instructions divided by N. Loopback only; needs valgrind (and callgrind_control) on PATH.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { startLlmUpstream } from '../fakes/llm-upstream.js';
import { listeningPort } from './util.js';

const KEY = 'sk-gw-bench-000000000';
const BODY = JSON.stringify({ model: 'mock/m1', messages: [{ role: 'user', content: 'Say hello in five words.' }], max_tokens: 32 });

const mode = (process.argv[2] ?? 'ctl') as 'ctl' | 'idle' | 'core' | 'floor';
const ADMIN = 'sk-gw-bench-admin-0000';
const n = Number(process.argv[3] ?? 1000);
const warmup = Number(process.argv[4] ?? 400);
const here = dirname(fileURLToPath(import.meta.url));

const mock = await startLlmUpstream({ defaults: { text: 'Hello there, friend, how are you today?', usage: { input: 14, output: 9 } } });
const dir = mkdtempSync(join(tmpdir(), 'ctl-cg-gw-'));
writeFileSync(
  join(dir, 'gateway.yaml'),
  `providers:\n  - {id: mock, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: "sk-up", models: [m1]}\n` +
    `keys:\n  - {name: bench, key: "${KEY}", models: ["*"]}\n` +
    (mode === 'idle'
      ? `  - {name: admin, key: "${ADMIN}", models: ["*"], scopes: [inference, management]}\n  - {name: other, key: "sk-gw-bench-other-000", models: ["*"]}\n` +
        `memory: {inject: true, max_items: 10}\nguardrails:\n  pii: {action: warn}\n  secrets: {action: block}\n  prompt-injection: {action: warn}\n` +
        `compression: {enabled: true, default_mode: "off", auto_trigger_tokens: 100000, auto_mode: standard}\n`
      : '') +
    `pricing:\n  mock/m1: {input: 0.15, output: 0.6}\n`,
);
const script = mode === 'floor' ? [join(here, 'gateway-floor.js'), mock.baseUrl('openai')] : [join(here, 'gateway-server.js'), dir, ...(mode === 'core' ? ['--core'] : [])];
const out = join(dir, 'cg.out');
const child = spawn(
  'valgrind',
  // CTL_CG_NODE_FLAGS: extra node flags (e.g. --perf-basic-prof to name JIT code in the dump afterwards).
  [
    '--tool=callgrind',
    '--separate-threads=yes',
    '--smc-check=all-non-file',
    `--callgrind-out-file=${out}`,
    process.execPath,
    ...(process.env.CTL_CG_NODE_FLAGS ?? '').split(' ').filter(Boolean),
    ...script,
  ],
  { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, REQUIRE_API_KEY: 'true' } },
);
let stderr = '';
child.stderr!.on('data', (c) => (stderr += c));
const port = await listeningPort(child, (code) => `exited with ${code}: ${stderr.slice(-2000)}`);

const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 1, pipelining: 1 });

/** A management call with the admin key (idle mode's set-up). */
async function manage(method: string, path: string, body?: unknown): Promise<any> {
  const res = await pool.request({ method: method as 'GET', path, headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: HTTP ${res.statusCode} ${text}`);
  return JSON.parse(text);
}
if (mode === 'idle') {
  const keys = (await manage('GET', '/api/keys')).keys as { id: string; name: string }[];
  const other = keys.find((k) => k.name === 'other')!.id;
  await manage('POST', '/api/memory', { content: 'The other team deploys on Fridays.', apiKeyId: other });
  await manage('POST', '/api/skills/install', { name: 'other-add', version: '1.0.0', description: 'adds', schema: {}, handlerCode: 'return { sum: 1 };', apiKeyId: other, mode: 'auto' });
  await manage('POST', '/api/policies', { name: 'other-ceiling', apiKeyId: other, maxTokens: 1000 });
  await manage('POST', '/api/webhooks', { url: 'https://hooks.example.com/ctl', events: ['budget.exceeded'] });
}
const path = mode === 'floor' ? '/v1/chat/completions' : '/v1/chat/completions';
async function send(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const res = await pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body: BODY });
    await res.body.dump();
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
    if (i % 100 === 0) mock.reset();
  }
}
const control = (flag: string) => {
  const r = spawnSync('callgrind_control', [flag, String(child.pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`callgrind_control ${flag}: ${r.stderr}`);
};

try {
  await send(warmup);
  control('-z');
  await send(n);
  control('-d');
  // The dump of the main thread: `<out>.<dump>-01`, totals on the `summary:` or `totals:` line.
  const files = readdirSync(dir).filter((f) => f.startsWith('cg.out') && f.endsWith('-01'));
  const last = files.sort().at(-1);
  if (!last) throw new Error(`no dump in ${dir}: ${readdirSync(dir).join(' ')}`);
  const text = readFileSync(join(dir, last), 'utf8');
  const m = /^(?:summary|totals):\s*(\d+)/m.exec(text);
  if (!m) throw new Error(`no totals in ${last}`);
  const ir = Number(m[1]);
  process.stdout.write(`${mode}: ${n} requests, main thread ${ir} Ir, ${Math.round(ir / n)} Ir per request\n`);
  // CTL_CG_KEEP=FILE keeps the main thread's dump for callgrind_annotate.
  if (process.env.CTL_CG_KEEP) writeFileSync(process.env.CTL_CG_KEEP, `# pid ${child.pid}\n${text}`);
} finally {
  await pool.close();
  child.kill('SIGTERM');
  await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
  await mock.close();
  rmSync(dir, { recursive: true, force: true });
}
