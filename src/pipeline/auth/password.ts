/**
 * Owner password hashing with scrypt (node:crypto). Format: `scrypt$N$r$p$<salt b64>$<hash b64>`.
 * The clear password is hashed once at start-up and never stored.
 */
import { randomBytes, scrypt, scryptSync, timingSafeEqual } from 'node:crypto';

const N = 16384;
const R = 8;
const P = 1;
const KEY_LEN = 32;
const FORMAT = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/;

export function hashPassword(password: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(password.normalize('NFC'), salt, KEY_LEN, { N, r: R, p: P });
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export function isPasswordHash(text: string): boolean {
  const m = FORMAT.exec(text);
  if (!m) return false;
  const n = Number(m[1]);
  // Bound the cost parameters so a hand-edited hash cannot stall logins.
  return n >= 1024 && n <= 1 << 20 && (n & (n - 1)) === 0 && Number(m[2]) <= 32 && Number(m[3]) <= 16;
}

/** Constant-time check of `password` against a stored hash (async: scrypt runs off the event loop). */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = FORMAT.exec(stored);
  if (!m) return false;
  const [, n, r, p, saltB64, hashB64] = m;
  const expected = Buffer.from(hashB64!, 'base64');
  const salt = Buffer.from(saltB64!, 'base64');
  const got = await new Promise<Buffer>((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, expected.length, { N: Number(n), r: Number(r), p: Number(p), maxmem: 256 << 20 }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
  return got.length === expected.length && timingSafeEqual(got, expected);
}
