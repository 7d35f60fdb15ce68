/**
 * A 10,000-line chat batch against an upstream that answers in 50 ms: lines per second against
 * what the concurrency limit allows (16 lines in flight / 50 ms = 320 lines/s; goal >= 90 %), and
 * the daemon's resident memory sampled through the batch (goal: flat).
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { boundAddresses, report, section, startBenchDaemon } from './util.js';

const LINES = 10_000;
const LATENCY_MS = 50;
const CONCURRENCY = 16;

function startUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      setTimeout(() => {
        const body = JSON.stringify({
          id: 'chatcmpl-bench',
          object: 'chat.completion',
          created: 1,
          model: 'm1',
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 },
        });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      }, LATENCY_MS),
    );
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, close: () => new Promise((r) => server.close(() => r())) })),
  );
}

function call(base: string, method: string, path: string, body?: Buffer | string, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method, headers: { ...headers, ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      let t = '';
      res.on('data', (c) => (t += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: t ? JSON.parse(t) : undefined }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** What the upstream allows directly: CONCURRENCY loops of one request after another for `ms`. */
async function directRate(url: string, ms: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const body = JSON.stringify({ model: 'm1', messages: [{ role: 'user', content: 'x' }] });
  const end = performance.now() + ms;
  let n = 0;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(`${url}/chat/completions`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        res.resume();
        res.on('end', () => resolve());
      });
      req.on('error', reject);
      req.end(body);
    });
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        await one();
        n++;
      }
    }),
  );
  agent.destroy();
  return n / ((performance.now() - t0) / 1000);
}

const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

export async function runGatewayBatchBench(): Promise<void> {
  section(`gateway batch: ${LINES.toLocaleString('en')} chat lines, upstream ${LATENCY_MS} ms, ${CONCURRENCY} in flight`);
  const up = await startUpstream();
  const d = await startBenchDaemon({
    'ctl.yaml': `gateway:\n  batch_concurrency: ${CONCURRENCY}\n`,
    'gateway.yaml': `providers:\n  - {id: up, kind: openai, base_url: "${up.url}", api_key: k, models: [m1]}\n`,
  });
  try {
    const gw = `http://${(await boundAddresses(d.socket)).servers.gateway!.bound_address}`;
    const jsonl = Array.from({ length: LINES }, (_, i) => JSON.stringify({ custom_id: `l${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'up/m1', messages: [{ role: 'user', content: `line ${i}` }] } })).join('\n');
    const boundary = 'benchbatch';
    const form = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n${jsonl}\r\n--${boundary}--\r\n`,
    );
    const file = await call(gw, 'POST', '/v1/files', form, { 'content-type': `multipart/form-data; boundary=${boundary}` });
    if (file.status !== 200) throw new Error(`upload answered ${file.status}`);
    const rssStart = rssOf(d.child.pid!);
    const t0 = performance.now();
    const created = await call(gw, 'POST', '/v1/batches', JSON.stringify({ input_file_id: file.json.id, endpoint: '/v1/chat/completions', completion_window: '24h' }), { 'content-type': 'application/json' });
    if (created.status !== 200) throw new Error(`create answered ${created.status}`);
    const samples: { done: number; rss: number }[] = [];
    let b = created.json;
    let started = 0;
    const deadline = Date.now() + 10 * 60_000;
    while (b.status !== 'completed' && b.status !== 'failed' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      b = (await call(gw, 'GET', `/v1/batches/${created.json.id}`)).json;
      if (!started && b.status === 'in_progress') started = performance.now();
      samples.push({ done: b.request_counts.completed + b.request_counts.failed, rss: rssOf(d.child.pid!) });
    }
    const total = performance.now() - t0;
    if (b.status !== 'completed') throw new Error(`batch ended ${b.status}`);
    const linesPerS = LINES / ((performance.now() - (started || t0)) / 1000);
    const allowed = CONCURRENCY / (LATENCY_MS / 1000);
    const direct = await directRate(up.url, 5000);
    report(`direct calls, ${CONCURRENCY} loops against the same upstream (lines/s)`, direct.toFixed(0), `${((direct / allowed) * 100).toFixed(1)} % of ${allowed}`);
    report('lines completed / failed', `${b.request_counts.completed} / ${b.request_counts.failed}`);
    report('whole batch (create to completed)', `${(total / 1000).toFixed(1)} s`);
    report('lines per second while in progress', linesPerS.toFixed(0), `${((linesPerS / allowed) * 100).toFixed(1)} % of ${allowed} the limit allows (goal >= 90 %), ${((linesPerS / direct) * 100).toFixed(1)} % of direct`);
    const at = (f: number) => samples.find((s) => s.done >= LINES * f)?.rss ?? NaN;
    report('daemon RSS at start / 10 % / 50 % / 90 % of the lines (MiB)', `${rssStart.toFixed(0)} / ${at(0.1).toFixed(0)} / ${at(0.5).toFixed(0)} / ${at(0.9).toFixed(0)}`);
    const inRun = samples.filter((s) => s.done >= LINES * 0.1 && s.done < LINES).map((s) => s.rss);
    report('RSS min / max from 10 % to the end (MiB)', `${Math.min(...inRun).toFixed(0)} / ${Math.max(...inRun).toFixed(0)}`, 'goal: flat');
  } finally {
    await d.stop();
    await up.close();
  }
}
