/**
 * Per-request CPU work in the gateway must not hold the event loop every API shares: crafted chat
 * text for the guardrails (their old JWT and private-key patterns backtracked for seconds), long
 * texts to count tokens of (the tokenizer's merging grows faster than linearly with a word), sent
 * four at once, while another API is probed. The probe's slowest answer stays well under 100 ms.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { probeWhile } from '../helpers/loop-probe.js';

/**
 * The slowest answer another API may give while the hostile requests run. Before the detectors ran
 * in linear time and off the loop, one such request held the loop 3.4 s (four at once: 11.5 s). Now
 * the probe's worst answer is 66–94 ms on a quiet machine and 130–175 ms with the full suite and
 * other work running beside it: what is left is reading and parsing four ~2 MB bodies on the loop
 * (a wall-clock probe also counts descheduling). The bound sits far below the old stalls and clear
 * of a loaded machine's noise.
 */
const STALL_BOUND_MS = 400;

let d: TestDaemon;
beforeAll(async () => {
  d = await startDaemon();
  // A provider to resolve models against (count_tokens resolves the model first); nothing is sent to it.
  const p = await d.request('gateway', 'POST', '/api/providers', { id: 'up', kind: 'anthropic', base_url: 'http://127.0.0.1:9/', api_key: 'sk-up', models: ['m1'] });
  expect(p.status, p.text).toBe(201);
}, 30_000);
afterAll(async () => {
  await d?.stop();
});

function chat(content: string) {
  return d.request('gateway', 'POST', '/v1/chat/completions', { model: 'nowhere/none', messages: [{ role: 'user', content }] });
}

describe('guardrails on crafted text keep the loop free', () => {
  const shapes: [string, string][] = [
    ['1.9 MB of -eyJ (the JWT pattern)', '-eyJ'.repeat(475_000)],
    ['unterminated private-key headers', '-----BEGIN RSA PRIVATE KEY-----\nMIIE'.repeat(45_000)],
    ['a dense run of digits and separators (cards, phones, SSNs)', '4111 1111-'.repeat(190_000)],
    ['override verbs followed by long gaps', `${'ignore \t'.repeat(200_000)}previous instructions`],
  ];
  it.each(shapes)('%s, four at once: another API answers within the bound, the requests get 4xx', async (_name, text) => {
    const { result, probe } = await probeWhile(d.socket, 'alertmanager', '/api/v2/status', Promise.all([chat(text), chat(text), chat(text), chat(text)]));
    for (const r of result) {
      expect(r.status, r.text.slice(0, 200)).toBeGreaterThanOrEqual(400);
      expect(r.status, r.text.slice(0, 200)).toBeLessThan(500);
    }
    expect(probe.probes).toBeGreaterThan(0);
    expect(probe.worstMs, `slowest probe ${probe.worstMs.toFixed(1)} ms over ${probe.probes} probes`).toBeLessThan(STALL_BOUND_MS);
  }, 120_000);
});

describe('token counting of long texts keeps the loop free', () => {
  const shapes: [string, string][] = [
    ['200,000 letters without a space', 'ab'.repeat(100_000)],
    ['2 MB of prose', 'The quick brown fox jumps over the lazy dog. '.repeat(45_000)],
  ];
  beforeAll(async () => {
    // The tokenizer's tables load on first use (a one-time module load, not per-request work).
    expect((await d.request('gateway', 'POST', '/v1/messages/count_tokens', { model: 'up/m1', max_tokens: 1, messages: [{ role: 'user', content: 'warm' }] })).status).toBe(200);
  }, 60_000);
  it.each(shapes)('%s, four at once: another API answers within the bound; the counts come back', async (_name, text) => {
    const count = () => d.request('gateway', 'POST', '/v1/messages/count_tokens', { model: 'up/m1', max_tokens: 1, messages: [{ role: 'user', content: text }] });
    const { result, probe } = await probeWhile(d.socket, 'alertmanager', '/api/v2/status', Promise.all([count(), count(), count(), count()]));
    for (const r of result) {
      expect(r.status, r.text.slice(0, 200)).toBe(200);
      expect(r.json.input_tokens).toBeGreaterThan(text.length / 20);
    }
    expect(probe.worstMs, `slowest probe ${probe.worstMs.toFixed(1)} ms over ${probe.probes} probes`).toBeLessThan(STALL_BOUND_MS);
  }, 300_000);
});
