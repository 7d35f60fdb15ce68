/** src/gateway/routing/classify.ts: what a failed attempt means for fallback. */
import { describe, expect, it } from 'vitest';
import { classify } from '../../../src/gateway/routing/classify.js';
import { UpstreamError } from '../../../src/gateway/providers/index.js';
import { GatewayError } from '../../../src/gateway/errors.js';
import { HttpError } from '../../../src/http/errors.js';

describe('classification', () => {
  const http = (status: number, msg = 'x') => new UpstreamError('http', msg, { status, upstreamMessage: msg });
  it('follows the table', () => {
    expect(classify(http(400, 'messages must be non-empty'))).toMatchObject({ fallback: false });
    expect(classify(http(400, 'maximum context length exceeded'))).toMatchObject({ fallback: true });
    expect(classify(http(400, 'Rate limit reached for requests'))).toMatchObject({ fallback: true, rateLimited: true, scope: 'account' });
    expect(classify(http(401))).toMatchObject({ fallback: true, scope: 'account' });
    expect(classify(http(404))).toMatchObject({ fallback: true, scope: 'target' });
    expect(classify(http(429))).toMatchObject({ fallback: true, rateLimited: true, providerFault: false });
    expect(classify(http(503))).toMatchObject({ fallback: true, providerFault: true });
    expect(classify(http(418))).toMatchObject({ fallback: true });
    expect(classify(new UpstreamError('aborted', 'gone'))).toMatchObject({ stop: true, fallback: false });
    expect(classify(new UpstreamError('empty-stream', 'nothing'))).toMatchObject({ fallback: true, status: 502 });
    expect(classify(new UpstreamError('connection', 'refused'))).toMatchObject({ fallback: true, providerFault: true });
  });

  it('answers a domain error the gateway raised as the HttpError it replaced would be: 4xx as it is, others by fallback', () => {
    expect(classify(new GatewayError('invalid', 'plugin says no', { code: 'plugin_blocked' }))).toMatchObject({ fallback: false, stop: false, status: 400, message: 'plugin says no' });
    expect(classify(new HttpError(400, 'plugin says no'))).toMatchObject({ fallback: false, stop: false, status: 400, message: 'plugin says no' });
    expect(classify(new GatewayError('forbidden', 'policy'))).toMatchObject({ fallback: false, status: 403 });
    expect(classify(new GatewayError('remote', 'tracker down'))).toEqual(classify(new HttpError(502, 'tracker down')));
    expect(classify(new GatewayError('remote', 'tracker down'))).toMatchObject({ fallback: true, status: 502, message: 'gateway error: tracker down' });
  });
});

const classified = (status: number, message = `upstream ${status}`, retryAfterMs?: number) =>
  classify(new UpstreamError('http', message, { status, upstreamMessage: message, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) }));

describe('classification feeds the right mechanism', () => {
  it('counts 408, 5xx and connection failures for the breaker, not 429 or client errors', () => {
    expect(classified(408).providerFault).toBe(true);
    expect(classified(500).providerFault).toBe(true);
    expect(classified(503).providerFault).toBe(true);
    expect(classify(new UpstreamError('connection', 'ECONNREFUSED')).providerFault).toBe(true);
    expect(classify(new UpstreamError('timeout', 'no headers')).providerFault).toBe(true);
    expect(classified(429).providerFault).toBe(false);
    expect(classified(404).providerFault).toBe(false);
    expect(classified(401).providerFault).toBe(false);
    expect(classify(new UpstreamError('aborted', 'client left')).providerFault).toBe(false);
  });
});
