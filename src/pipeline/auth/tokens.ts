/**
 * Bearer tokens: HS256 JWTs (jose) signed with a random key kept in the state dir
 * (`DIR/secrets/pipeline-jwt.key`, mode 0600), so tokens survive restarts. Times come from the
 * injected clock. A `pv` claim fingerprints the password hash: changing the password revokes old tokens.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { lazyRequire } from '../../http/lazy.js';
import type { Clock } from '../../http/clock.js';

const jose = lazyRequire<typeof import('jose')>('jose');

export const TOKEN_TTL_SECONDS = 86_400;
const ISSUER = 'ctl-pipeline';
const SUBJECT = 'owner';

export function loadOrCreateKey(stateDir: string): Uint8Array {
  const dir = join(stateDir, 'secrets');
  const path = join(dir, 'pipeline-jwt.key');
  if (existsSync(path)) {
    const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
    if (key.length >= 32) return new Uint8Array(key);
    throw new Error(`${path}: key shorter than 32 bytes; delete it to have a new one made (this logs everyone out)`);
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, key.toString('base64') + '\n', { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
  return new Uint8Array(key);
}

export function passwordFingerprint(hash: string): string {
  return createHash('sha256').update(hash).digest('base64url').slice(0, 16);
}

export class TokenIssuer {
  constructor(
    private readonly key: Uint8Array,
    private readonly clock: Clock,
  ) {}

  async issue(passwordHash: string): Promise<string> {
    const now = Math.floor(this.clock.now() / 1000);
    return await new (jose().SignJWT)({ pv: passwordFingerprint(passwordHash) })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setSubject(SUBJECT)
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + TOKEN_TTL_SECONDS)
      .setJti(randomUUID())
      .sign(this.key);
  }

  /** The reason a token is refused, or null when it is valid for the current password. */
  async check(token: string, passwordHash: string | null): Promise<string | null> {
    try {
      const { payload } = await jose().jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        issuer: ISSUER,
        subject: SUBJECT,
        currentDate: new Date(this.clock.now()),
        // A correctly signed token without an expiry would be valid forever: every token needs one,
        // and none is accepted past the lifetime this issuer gives (whatever its `exp` says).
        requiredClaims: ['exp', 'iat'],
        maxTokenAge: TOKEN_TTL_SECONDS,
      });
      if (passwordHash === null || payload.pv !== passwordFingerprint(passwordHash)) return 'token was issued for another password';
      return null;
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === 'ERR_JWT_EXPIRED') return 'token expired';
      return 'invalid token';
    }
  }
}
