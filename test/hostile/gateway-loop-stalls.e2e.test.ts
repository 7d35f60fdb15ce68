/**
 * Per-request CPU work in the gateway must not hold the event loop every API shares: crafted chat
 * text for the guardrails (their old JWT and private-key patterns backtracked for seconds), sent
 * four at once, while another API is probed. The probe's slowest answer stays well under 100 ms.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { probeWhile } from '../helpers/loop-probe.js';

/** The slowest answer another API may give while the hostile requests run. */
const STALL_BOUND_MS = 60;

let d: TestDaemon;
beforeAll(async () => {
  d = await startDaemon();
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
