/**
 * The gateway's domain error (src/gateway/errors.ts) and where it gets its status
 * (src/gateway/routes/errors.ts): one row per kind.
 */
import { describe, expect, it } from 'vitest';
import { HttpError } from '../../src/http/errors.js';
import { GatewayError, type GatewayErrorKind } from '../../src/gateway/errors.js';
import { domainHttpError, gatewayHttpError, STATUS_OF_KIND } from '../../src/gateway/routes/errors.js';

describe('gatewayHttpError', () => {
  it.each<[GatewayErrorKind, number]>([
    ['invalid', 400],
    ['not-found', 404],
    ['forbidden', 403],
    ['conflict', 409],
    ['limited', 429],
    ['not-configured', 503],
    ['unavailable', 503],
    ['remote', 502],
  ])('%s is answered %i, with its code and message', (kind, status) => {
    const err = gatewayHttpError(new GatewayError(kind, 'what happened', { code: 'some_code' }));
    expect(err).toBeInstanceOf(HttpError);
    expect([err.status, err.code, err.message]).toEqual([status, 'some_code', 'what happened']);
  });

  it('sends Retry-After with a limited answer, and no code where the service gave none', () => {
    const err = gatewayHttpError(new GatewayError('limited', 'slow down', { code: 'rate_limit_exceeded', retryAfterS: 42 }));
    expect([err.status, err.code, err.headers]).toEqual([429, 'rate_limit_exceeded', { 'Retry-After': '42' }]);
    const bare = gatewayHttpError(new GatewayError('invalid', 'bad'));
    expect([bare.status, bare.code, bare.headers]).toEqual([400, undefined, undefined]);
  });

  it('has a status for every kind, and leaves other errors to the kit', () => {
    expect(Object.keys(STATUS_OF_KIND).sort()).toEqual(['conflict', 'forbidden', 'invalid', 'limited', 'not-configured', 'not-found', 'remote', 'unavailable']);
    const http = new HttpError(418, 'teapot');
    expect(domainHttpError(http)).toBeUndefined();
    expect(gatewayHttpError(http)).toBe(http);
    expect(gatewayHttpError(new Error('bug')).status).toBe(500);
  });
});
