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
    ['conflict', 409],
    ['not-configured', 503],
    ['unavailable', 503],
    ['remote', 502],
  ])('%s is answered %i, with its code and message', (kind, status) => {
    const err = gatewayHttpError(new GatewayError(kind, 'what happened', { code: 'some_code' }));
    expect(err).toBeInstanceOf(HttpError);
    expect([err.status, err.code, err.message]).toEqual([status, 'some_code', 'what happened']);
  });

  it('has a status for every kind, and leaves other errors to the kit', () => {
    expect(Object.keys(STATUS_OF_KIND).sort()).toEqual(['conflict', 'invalid', 'not-configured', 'not-found', 'remote', 'unavailable']);
    const http = new HttpError(418, 'teapot');
    expect(domainHttpError(http)).toBeUndefined();
    expect(gatewayHttpError(http)).toBe(http);
    expect(gatewayHttpError(new Error('bug')).status).toBe(500);
  });
});
