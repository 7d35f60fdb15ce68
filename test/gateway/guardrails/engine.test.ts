/** src/gateway/guardrails/engine.ts: a block is a domain error ('invalid', guardrail_blocked), answered 400. */
import { describe, expect, it } from 'vitest';
import { GuardrailBlocked } from '../../../src/gateway/guardrails/engine.js';
import { GatewayError } from '../../../src/gateway/errors.js';
import { gatewayHttpError } from '../../../src/gateway/routes/errors.js';

describe('GuardrailBlocked', () => {
  it('names the guardrail and the kinds found, as an invalid request', () => {
    const e = new GuardrailBlocked('pii', 'email, phone');
    expect(e).toBeInstanceOf(GatewayError);
    expect(e).toMatchObject({ kind: 'invalid', code: 'guardrail_blocked', guardrail: 'pii', message: 'request blocked by guardrail pii (email, phone)' });
    const http = gatewayHttpError(e);
    expect([http.status, http.code, http.message]).toEqual([400, 'guardrail_blocked', 'request blocked by guardrail pii (email, phone)']);
  });
});
