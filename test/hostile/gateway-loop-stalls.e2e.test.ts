/**
 * Per-request CPU work in the gateway must not hold the event loop every API shares: crafted chat
 * text for the guardrails (their old JWT and private-key patterns backtracked for seconds), long
 * texts to count tokens of (the tokenizer's merging grows faster than linearly with a word), the
 * tokenizer's first load, multi-MB bodies to read and parse, sent four at once, while another API
 * is probed. Two measures: inside the daemon, the CPU time its main thread used in one turn of the
 * loop (held the loop; immune to descheduling on a loaded machine), and the probe's wall-clock latency.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { probeWhile } from '../helpers/loop-probe.js';
import { loopHoldEnv, maxHold } from '../helpers/daemon-loop-hold.js';

/**
 * The most CPU time one turn of the daemon's loop may use while the hostile requests run. Measured
 * (load 15-23 on two cores): 4-18 ms per case now. Before the bodies were parsed in pieces and token
 * counts moved to a thread, the same cases held it 15-66 ms (four 1.9 MB bodies decoded, depth-
 * scanned and parsed in one go each; token counting slices of four requests in one turn) and the
 * tokenizer's first load 139-189 ms: with this bound the old code failed the dense-digits, first-
 * count and (one run in two) prose cases. Before the detectors ran in linear time off the loop, 3.4 s.
 * In a loaded run beside other test files a case reached 40.5-41.1 ms once (a collection landing in
 * the turn), so the bound is 50: still well under what each regression held.
 */
const HOLD_BOUND_MS = 50;
/**
 * The slowest answer the probe may get, wall clock: it also counts the descheduling of the probe and
 * the daemon on a loaded machine (an idle daemon answered 100-290 ms late at load 15), so this one
 * is coarse; the hold bound above is the tight check.
 */
const PROBE_BOUND_MS = 400;

const hold = loopHoldEnv(5);

let d: TestDaemon;
/** The longest loop turn while the daemon's first management request (a body validated by a JSON Schema) ran. */
let firstValidation = { heldMs: 0, seen: '' };
beforeAll(async () => {
  d = await startDaemon({ env: hold.env });
  // A provider to resolve models against (count_tokens resolves the model first); nothing is sent to it.
  // It is the daemon's first schema-validated body: that used to load Ajv and compile the schema on the loop.
  await settled();
  const from = Date.now();
  const p = await d.request('gateway', 'POST', '/api/providers', { id: 'up', kind: 'anthropic', base_url: 'http://127.0.0.1:9/', api_key: 'sk-up', models: ['m1'] });
  expect(p.status, p.text).toBe(201);
  const heldMs = maxHold(hold, from, Date.now());
  firstValidation = { heldMs, seen: `loop held up to ${heldMs.toFixed(1)} ms of CPU in one turn` };
}, 60_000);
afterAll(async () => {
  await d?.stop();
});

function chat(content: string) {
  const body = JSON.stringify({ model: 'nowhere/none', messages: [{ role: 'user', content }] });
  return () => d.request('gateway', 'POST', '/v1/chat/completions', body);
}

function count(content: string) {
  const body = JSON.stringify({ model: 'up/m1', max_tokens: 1, messages: [{ role: 'user', content }] });
  return () => d.request('gateway', 'POST', '/v1/messages/count_tokens', body);
}

/** Wait until the daemon's loop has had no long turn for 500 ms (start-up work done), at most 15 s. */
async function settled(): Promise<void> {
  const until = Date.now() + 15_000;
  while (Date.now() < until && maxHold(hold, Date.now() - 500, Date.now()) > 0) await new Promise((r) => setTimeout(r, 100));
}

/** Run `send` `times` at once while probing the alert manager; the answers, the probe's worst latency and the longest loop turn. */
async function hostile<T>(send: () => Promise<T>, times: number, bound = HOLD_BOUND_MS) {
  await settled();
  const from = Date.now();
  const { result, probe } = await probeWhile(d.socket, 'alertmanager', '/api/v2/status', Promise.all(Array.from({ length: times }, send)));
  const heldMs = maxHold(hold, from, Date.now());
  const seen = `loop held up to ${heldMs.toFixed(1)} ms of CPU in one turn; slowest probe ${probe.worstMs.toFixed(1)} ms over ${probe.probes} probes`;
  expect(probe.probes, seen).toBeGreaterThan(0);
  expect(heldMs, seen).toBeLessThan(bound);
  expect(probe.worstMs, seen).toBeLessThan(PROBE_BOUND_MS);
  return result;
}

describe('guardrails on crafted text keep the loop free', () => {
  const shapes: [string, string][] = [
    ['1.9 MB of -eyJ (the JWT pattern)', '-eyJ'.repeat(475_000)],
    ['unterminated private-key headers', '-----BEGIN RSA PRIVATE KEY-----\nMIIE'.repeat(45_000)],
    ['a dense run of digits and separators (cards, phones, SSNs)', '4111 1111-'.repeat(190_000)],
    ['override verbs followed by long gaps', `${'ignore \t'.repeat(200_000)}previous instructions`],
  ];
  it.each(shapes)('%s, four at once: the loop is never held long, the requests get 4xx', async (_name, text) => {
    for (const r of await hostile(chat(text), 4)) {
      expect(r.status, r.text.slice(0, 200)).toBeGreaterThanOrEqual(400);
      expect(r.status, r.text.slice(0, 200)).toBeLessThan(500);
    }
  }, 120_000);
});

describe('token counting of long texts keeps the loop free', () => {
  const shapes: [string, string][] = [
    ['200,000 letters without a space', 'ab'.repeat(100_000)],
    ['2 MB of prose', 'The quick brown fox jumps over the lazy dog. '.repeat(45_000)],
  ];
  it('the first count, which loads the tokenizer, does not hold the loop', async () => {
    const [r] = await hostile(count('warm'), 1);
    expect(r!.status, r!.text).toBe(200);
  }, 60_000);
  it.each(shapes)('%s, four at once: the loop is never held long; the counts come back', async (_name, text) => {
    for (const r of await hostile(count(text), 4)) {
      expect(r.status, r.text.slice(0, 200)).toBe(200);
      expect(r.json.input_tokens).toBeGreaterThan(text.length / 20);
    }
  }, 300_000);
});


describe('request schemas are never compiled on the loop', () => {
  // Measured (load 15): 163-219 ms in one turn when Ajv was loaded and the provider schema compiled
  // on the first POST /api/providers; 12-22 ms with the build's precompiled validators.
  it('the first POST /api/providers does not hold the loop', () => {
    expect(firstValidation.heldMs, firstValidation.seen).toBeLessThan(HOLD_BOUND_MS);
  });
});

describe('a chat of 60,000 messages keeps the loop free', () => {
  const messages = Array.from({ length: 60_000 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `m ${i}` }));
  const body = JSON.stringify({ model: 'up/m1', max_tokens: 5, messages });
  const send = () => d.request('gateway', 'POST', '/v1/chat/completions', body);
  // Measured (load 15-20): 80-190 ms in one turn (the parse, the guardrail slots cloned to their
  // thread and back, the upstream body encoded and stringified, in one or two turns); now 25-55 ms,
  // each stage in a turn of its own, the largest the parse and the encoding (about 20 ms each on a
  // loaded machine, with the garbage collection of 60,000 messages' objects on top); 84.6 ms once
  // beside another test file. The aim is the 50 ms of the other cases; until the parse and the
  // encoding are done in pieces too, the bound is 100 (the old code: 193 ms).
  const CHAT_HOLD_BOUND_MS = 100;
  it('parse, guardrails, limits and the upstream body: the loop is never held long', async () => {
    // The first call to an upstream loads the HTTP client (once per daemon): not this test's subject.
    const warm = await d.request('gateway', 'POST', '/v1/chat/completions', { model: 'up/m1', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    expect(warm.status, warm.text).toBe(502);
    for (const r of await hostile(send, 1, CHAT_HOLD_BOUND_MS)) {
      // The upstream (port 9) refuses: a 502 once everything before the call went through.
      expect(r.status, r.text.slice(0, 200)).toBe(502);
    }
  }, 120_000);
});
