/** src/gateway/plugins/package.ts: a broken manifest is a domain error ('invalid'), answered 400 by the route table. */
import { describe, expect, it } from 'vitest';
import { checkManifest } from '../../../src/gateway/plugins/package.js';
import { GatewayError } from '../../../src/gateway/errors.js';
import { gatewayHttpError } from '../../../src/gateway/routes/errors.js';

describe('checkManifest', () => {
  it.each<[string, unknown, RegExp]>([
    ['not an object', [], /must be a JSON object/],
    ['a bad name', { name: 'Bad Name', version: '1.0.0', hooks: ['request'] }, /name must be lower-case/],
    ['a bad version', { name: 'p', version: 'one', hooks: ['request'] }, /version must be semantic/],
    ['no hooks', { name: 'p', version: '1.0.0', hooks: [] }, /hooks must list/],
  ])('refuses %s as invalid, without a status of its own', (_what, raw, message) => {
    let err: unknown;
    try {
      checkManifest(raw);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ kind: 'invalid', message: expect.stringMatching(message) });
    expect(err).not.toHaveProperty('status');
    expect(gatewayHttpError(err).status).toBe(400);
  });
});
