/**
 * The gateway's request counters keep each provider and model's cells from the first request on
 * (no label objects or keys per request): what /metrics shows must be what counting every request
 * afresh showed — the same series, in the same order, with the same sums, and no series at 0 for
 * a token type or a cost that never came.
 */
import { describe, expect, it } from 'vitest';
import { GatewayMetrics } from '../../src/gateway/metrics/index.js';
import type { GatewayServices } from '../../src/gateway/services.js';
import type { RequestLogEntry } from '../../src/gateway/request-log/store.js';

const svc = { clock: { now: () => 0 }, state: { catalog: { ordered: [] }, db: {} }, budgets: { list: () => [] } } as unknown as GatewayServices;

function entry(over: Partial<RequestLogEntry>): RequestLogEntry {
  return {
    requestId: 'r',
    ts: 0,
    endpoint: 'chat',
    requestedModel: 'p/m',
    provider: 'p',
    model: 'm',
    status: 200,
    stream: false,
    tokensIn: 0,
    tokensOut: 0,
    tokensCached: 0,
    tokensReasoning: 0,
    tokensCacheWrite: 0,
    cost: 0,
    latencyMs: 20,
    fallbackAttempts: 0,
    attempts: [],
    clientAborted: false,
    ...over,
  } as RequestLogEntry;
}

const series = (text: string, name: string) => text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));

describe('gateway request metrics', () => {
  it('sums each series across requests, per provider, model and status, and adds no empty series', async () => {
    const m = new GatewayMetrics(() => svc);
    m.record(entry({ tokensIn: 10, tokensOut: 5, cost: 0.5 }));
    m.record(entry({ tokensIn: 3, tokensOut: 2, cost: 0.25, cache: 'miss' }));
    m.record(entry({ status: 502, provider: 'q', model: 'n', requestedModel: 'q/n', latencyMs: 3000 }));
    m.record(entry({ tokensIn: 1, tokensReasoning: 7 }));
    m.record(entry({ provider: undefined, model: undefined, requestedModel: 'nowhere', status: 404 }));
    const { text } = await m.endpoint.render();
    expect(series(text, 'ctl_gateway_requests_total')).toEqual([
      'ctl_gateway_requests_total{provider="p",model="m",status="200"} 3',
      'ctl_gateway_requests_total{provider="q",model="n",status="502"} 1',
      'ctl_gateway_requests_total{provider="",model="nowhere",status="404"} 1',
    ]);
    expect(series(text, 'ctl_gateway_tokens_total')).toEqual([
      'ctl_gateway_tokens_total{provider="p",model="m",type="in"} 14',
      'ctl_gateway_tokens_total{provider="p",model="m",type="out"} 7',
      'ctl_gateway_tokens_total{provider="p",model="m",type="reasoning"} 7',
    ]);
    expect(series(text, 'ctl_gateway_cost_usd_total')).toEqual(['ctl_gateway_cost_usd_total{provider="p",model="m"} 0.75']);
    expect(series(text, 'ctl_gateway_cache_total')).toEqual(['ctl_gateway_cache_total{result="miss"} 1']);
    expect(series(text, 'ctl_gateway_request_duration_seconds_count')).toEqual([
      'ctl_gateway_request_duration_seconds_count{provider="p"} 3',
      'ctl_gateway_request_duration_seconds_count{provider="q"} 1',
      'ctl_gateway_request_duration_seconds_count{provider=""} 1',
    ]);
  });

  it('counts a status it has not seen for a model it has', async () => {
    const m = new GatewayMetrics(() => svc);
    m.record(entry({}));
    m.record(entry({ status: 429 }));
    m.record(entry({}));
    const { text } = await m.endpoint.render();
    expect(series(text, 'ctl_gateway_requests_total')).toEqual([
      'ctl_gateway_requests_total{provider="p",model="m",status="200"} 2',
      'ctl_gateway_requests_total{provider="p",model="m",status="429"} 1',
    ]);
  });
});
