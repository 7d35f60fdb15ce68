import { describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { randomBytes } from 'node:crypto';
import { ManualClock } from '../../src/http/clock.js';
import { TOKEN_TTL_SECONDS, TokenIssuer, passwordFingerprint } from '../../src/pipeline/auth/tokens.js';

const HASH = 'scrypt$16384$8$1$c2FsdA==$aGFzaA==';

describe('pipeline tokens', () => {
  const key = new Uint8Array(randomBytes(32));
  const clock = new ManualClock(Date.UTC(2030, 0, 1));
  const issuer = new TokenIssuer(key, clock);
  const now = () => Math.floor(clock.now() / 1000);
  /** A token signed with the right key, claims chosen by the test. */
  const forged = (claims: { exp?: number; iat?: number }) => {
    let jwt = new SignJWT({ pv: passwordFingerprint(HASH) }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuer('ctl-pipeline').setSubject('owner');
    if (claims.iat !== undefined) jwt = jwt.setIssuedAt(claims.iat);
    if (claims.exp !== undefined) jwt = jwt.setExpirationTime(claims.exp);
    return jwt.sign(key);
  };

  it('accepts what it issued, until it expires', async () => {
    const t = await issuer.issue(HASH);
    expect(await issuer.check(t, HASH)).toBeNull();
    clock.advance((TOKEN_TTL_SECONDS + 1) * 1000);
    expect(await issuer.check(t, HASH)).toBe('token expired');
  });

  it('refuses a correctly signed token without exp (it would never expire), or without iat', async () => {
    expect(await issuer.check(await forged({ iat: now() }), HASH)).toBe('invalid token');
    expect(await issuer.check(await forged({ exp: now() + 60 }), HASH)).toBe('invalid token');
    expect(await issuer.check(await forged({ iat: now(), exp: now() + 60 }), HASH)).toBeNull();
  });

  it('refuses a token older than the lifetime it issues, whatever its exp says', async () => {
    const t = await forged({ iat: now() - TOKEN_TTL_SECONDS - 10, exp: now() + 10 * 365 * 86_400 });
    expect(await issuer.check(t, HASH)).not.toBeNull();
  });
});
