/**
 * Guardrails and standard compression on a chat request of about 4,000 tokens: the same daemon,
 * the same request, with both on (every guardrail enabled, compression `standard`) and with both
 * off for that request (x-gateway-disabled-guardrails naming all four, X-Gateway-Compression: off),
 * interleaved; the difference of the medians is what they add. Goal: under 1 ms at p50.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { boundAddresses, fmt, percentile, report, section, startBenchDaemon } from './util.js';
import { applyPipeline, pipelineOf } from '../../src/gateway/compression/modes.js';
import { DEFAULT_COMPRESSION } from '../../src/gateway/compression/settings.js';
import { runGuardrails } from '../../src/gateway/guardrails/engine.js';
import { DEFAULT_GUARDRAILS } from '../../src/gateway/guardrails/config.js';
import type { CanonicalRequest } from '../../src/gateway/canonical.js';

const ROUNDS = 400;

function startUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const answer = JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'm1', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 4000, completion_tokens: 1, total_tokens: 4001 } });
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) }).end(answer));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, close: () => new Promise((r) => server.close(() => r())) })));
}

/** About 4,000 tokens of ordinary prose with polite filler, a code block and a URL. */
function prompt(): string {
  const para =
    'Could you please take a look at the deployment notes below? I think that the rollout is basically fine, but the cache warm-up probably takes too long due to the fact that every node reloads its configuration at the same time. ';
  const code = '\n```ts\nexport function warm(nodes: string[]) {\n  return Promise.all(nodes.map((n) => fetch(`https://internal.example/${n}/warm`)));\n}\n```\n';
  let text = '';
  while (text.length < 16_000) text += para + (text.length % 3000 < para.length ? code : '');
  return text;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function call(base: string, body: string, headers: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/chat/completions`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

export async function runGatewayGuardrailsBench(): Promise<void> {
  section('gateway guardrails + standard compression on a 4k-token chat request');
  const up = await startUpstream();
  const d = await startBenchDaemon({
    'gateway.yaml': `providers:\n  - {id: up, kind: openai, base_url: "${up.url}", api_key: k, models: [m1]}\ncompression:\n  enabled: true\n  default_mode: standard\n`,
  });
  try {
    const gw = `http://${(await boundAddresses(d.socket)).servers.gateway!.bound_address}/v1`;
    const body = JSON.stringify({ model: 'up/m1', messages: [{ role: 'system', content: 'You review deployment notes.' }, { role: 'user', content: prompt() }] });
    const off = { 'x-gateway-disabled-guardrails': 'max-size, secrets, pii, prompt-injection', 'X-Gateway-Compression': 'off' };
    for (let i = 0; i < 50; i++) {
      await call(gw, body, off);
      await call(gw, body, {});
    }
    const without: number[] = [];
    const withBoth: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      without.push(await call(gw, body, off));
      withBoth.push(await call(gw, body, {}));
    }
    report('p50 without / with guardrails + standard compression', `${fmt(percentile(without, 50))} / ${fmt(percentile(withBoth, 50))}`);
    report('added latency p50', fmt(percentile(withBoth, 50) - percentile(without, 50)), 'goal < 1 ms');
    report('added latency p95', fmt(percentile(withBoth, 95) - percentile(without, 95)));
    // The CPU the two cost in process, apart from what the shorter upstream body saves.
    const text = prompt();
    const req: CanonicalRequest = { model: 'm1', stream: false, system: 'You review deployment notes.', messages: [{ role: 'user', content: [{ type: 'text', text }] }] };
    const time = (fn: () => unknown) => {
      for (let i = 0; i < 200; i++) fn();
      const t0 = performance.now();
      for (let i = 0; i < 1000; i++) fn();
      return (performance.now() - t0) / 1000;
    };
    const guardMs = time(() => runGuardrails(DEFAULT_GUARDRAILS, [{ role: 'user', text }], new Set()));
    const compressMs = time(() => applyPipeline(req, pipelineOf('standard'), DEFAULT_COMPRESSION));
    const after = applyPipeline(req, pipelineOf('standard'), DEFAULT_COMPRESSION).request.messages[0]!.content[0]!;
    report('in process: guardrails / standard compression per request', `${fmt(guardMs, 3)} / ${fmt(compressMs, 3)}`);
    report('prompt characters before / after standard compression', `${text.length} / ${after.type === 'text' ? after.text.length : 0}`);
  } finally {
    await d.stop();
    await up.close();
  }
}
