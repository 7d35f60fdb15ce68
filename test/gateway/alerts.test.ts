/** The gateway's internal alerts: an open circuit breaker fires GatewayCircuitOpen until it closes. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { ManualClock } from '../../src/http/clock.js';
import { ComponentAlerts, type AlertSink } from '../../src/daemon/internal-alerts.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

let mock: MockUpstream;
let gw: GatewayHarness;
let alerts: ComponentAlerts;
const posted: Parameters<AlertSink['post']>[0][] = [];
const clock = new ManualClock(Date.parse('2030-01-01T12:00:00Z'));

beforeAll(async () => {
  mock = await startLlmUpstream();
  alerts = new ComponentAlerts('gateway', true, () => ({ post: (a) => (posted.push(a), []) }), () => 'http://127.0.0.1:20128', clock, pino({ level: 'silent' }));
  gw = await startGateway({
    yaml: `providers:\n  - {id: lo, kind: openai, base_url: "${mock.baseUrl('openai')}", models: [m1]}\n  - {id: qa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: kq, models: [m2]}\n`,
    clock,
    alerts,
  });
});
afterAll(async () => {
  await gw.close();
  await mock.close();
});

const check = () => (gw.instance.handle as { checkAlerts(): void }).checkAlerts();
const chat = { model: 'lo/m1', messages: [{ role: 'user', content: 'hi' }] };

describe('gateway alerts', () => {
  it('a provider whose breaker opens fires GatewayCircuitOpen; closing the breaker resolves it', async () => {
    check();
    expect(alerts.firing()).toEqual([]);
    mock.enqueue({ status: 500 });
    mock.enqueue({ status: 502 });
    await gw.req('POST', '/v1/chat/completions', chat);
    await gw.req('POST', '/v1/chat/completions', chat);
    check();
    expect(alerts.firing()).toEqual([
      { alertname: 'GatewayCircuitOpen', labels: { provider: 'lo' }, annotations: { summary: expect.stringMatching(/^circuit breaker of provider lo is OPEN after 2 failures/) }, path: '/api/resilience' },
    ]);
    expect(posted.at(-1)![0]).toMatchObject({ labels: { alertname: 'GatewayCircuitOpen', component: 'gateway', provider: 'lo' }, generatorURL: 'http://127.0.0.1:20128/api/resilience' });
    expect((await gw.req('POST', '/api/resilience/reset', {})).status).toBe(200);
    check();
    expect(alerts.firing()).toEqual([]);
    expect(posted.at(-1)![0]).toMatchObject({ labels: { alertname: 'GatewayCircuitOpen', provider: 'lo' }, endsAt: clock.now() });
  });
});

describe('gateway alerts: accounts', () => {
  it('an account out of quota fires GatewayAccountCoolingDown until its cool-down ends', async () => {
    mock.enqueue({ status: 402, errorMessage: 'insufficient_quota: out of credits' });
    await gw.req('POST', '/v1/chat/completions', { model: 'qa/m2', messages: [{ role: 'user', content: 'hi' }] });
    check();
    const cooling = alerts.firing().filter((a) => a.alertname === 'GatewayAccountCoolingDown');
    expect(cooling).toEqual([expect.objectContaining({ labels: { provider: 'qa', account: expect.any(String) }, path: '/api/rate-limits' })]);
    expect(cooling[0]!.annotations!.summary).toMatch(/of provider qa is out of quota; skipped until /);
    clock.advance(24 * 3600_000);
    check();
    expect(alerts.firing().filter((a) => a.alertname === 'GatewayAccountCoolingDown')).toEqual([]);
  });
});

describe('gateway metrics', () => {
  it('GET /metrics counts requests by provider, model and status, with the breaker states', async () => {
    mock.enqueue({ status: 200, json: { id: 'x', object: 'chat.completion', created: 1, model: 'm1', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } } });
    expect((await gw.req('POST', '/v1/chat/completions', chat)).status).toBe(200);
    for (const tcp of [false, true]) {
      const r = await gw.req('GET', '/metrics', undefined, {}, { tcp });
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(r.text).toMatch(/^ctl_gateway_requests_total\{provider="lo",model="m1",status="200"\} 1$/m);
      expect(r.text).toMatch(/^ctl_gateway_tokens_total\{provider="lo",model="m1",type="in"\} [1-9]\d*$/m);
      expect(r.text).toMatch(/^ctl_gateway_circuit_breaker_state\{provider="lo",state="CLOSED"\} 1$/m);
      expect(r.text).toMatch(/^ctl_gateway_request_duration_seconds_count\{provider="lo"\} \d+$/m);
      expect(r.text).toMatch(/^process_resident_memory_bytes \d+/m);
    }
  });
});
