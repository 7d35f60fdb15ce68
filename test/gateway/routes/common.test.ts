/** src/gateway/routes/common.ts: asBadRequest turns a validator's plain Error into a 400, and leaves errors that have their own answer alone. */
import { describe, expect, it } from 'vitest';
import { asBadRequest } from '../../../src/gateway/routes/common.js';
import { GatewayError } from '../../../src/gateway/errors.js';
import { HttpError } from '../../../src/http/errors.js';

const thrown = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
};

describe('asBadRequest', () => {
  it('answers a plain Error 400 invalid_request', () => {
    expect(thrown(() => asBadRequest(() => { throw new Error('bad id'); }))).toMatchObject({ status: 400, code: 'invalid_request', message: 'bad id' });
  });

  it('passes a domain error and an HttpError through unchanged (a not-found stays a 404)', () => {
    const domain = new GatewayError('not-found', 'no such thing', { code: 'not_found' });
    const http = new HttpError(409, 'taken');
    expect(thrown(() => asBadRequest(() => { throw domain; }))).toBe(domain);
    expect(thrown(() => asBadRequest(() => { throw http; }))).toBe(http);
  });
});
