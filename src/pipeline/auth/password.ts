/**
 * Owner password hashing with scrypt (node:crypto). Format: `scrypt$N$r$p$<salt b64>$<hash b64>`.
 * A clear password from the configuration is hashed once and the hash kept in the state dir (never
 * the password), so tokens, which name the hash, stay valid across restarts.
 */
import { randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { scryptOnLane } from './scrypt-lane.js';

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

/**
 * The hash for a clear password: the one kept at `path` when it still matches the password (so it is
 * the same across restarts), else a new one, written there (0600) for the next start.
 */
export function stableHashForPassword(password: string, path: string): string {
  if (existsSync(path)) {
    const kept = readFileSync(path, 'utf8').trim();
    if (isPasswordHash(kept) && checkSync(password, kept)) return kept;
  }
  const hash = hashPassword(password);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, hash + '\n', { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
  return hash;
}

function checkSync(password: string, stored: string): boolean {
  const m = FORMAT.exec(stored)!;
  const expected = Buffer.from(m[5]!, 'base64');
  const got = scryptSync(password.normalize('NFC'), Buffer.from(m[4]!, 'base64'), expected.length, { N: Number(m[1]), r: Number(m[2]), p: Number(m[3]), maxmem: 256 << 20 });
  return got.length === expected.length && timingSafeEqual(got, expected);
}

/** Constant-time check of `password` against a stored hash (scrypt runs on the login thread, off the event loop). */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = FORMAT.exec(stored);
  if (!m) return false;
  const [, n, r, p, saltB64, hashB64] = m;
  const expected = Buffer.from(hashB64!, 'base64');
  const got = await scryptOnLane(password.normalize('NFC'), Buffer.from(saltB64!, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: 256 << 20,
  });
  return got.length === expected.length && timingSafeEqual(got, expected);
}
