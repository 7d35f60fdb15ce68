import { describe, expect, it } from 'vitest';
import bcrypt from 'bcryptjs';
import { AuthFailures, FAILURE_LIMIT, FAILURE_WINDOW_MS, addressKey } from '../../src/daemon/auth-failures.js';
import { BcryptPool } from '../../src/daemon/bcrypt-pool.js';
import { dummyHash } from '../../src/daemon/web-auth.js';

describe('basic-auth failures per client address', () => {
  it('refuses an address after FAILURE_LIMIT failures until the oldest leaves the window', () => {
    let now = 1_000_000;
    const f = new AuthFailures(() => now);
    for (let i = 0; i < FAILURE_LIMIT; i++) {
      expect(f.reserve('192.0.2.1')).toBeUndefined();
      f.done('192.0.2.1', false);
      now += 1000;
    }
    expect(f.reserve('192.0.2.1')).toEqual({ retryAfterSeconds: (FAILURE_WINDOW_MS - FAILURE_LIMIT * 1000) / 1000 });
    expect(f.reserve('192.0.2.2')).toBeUndefined();
    now += FAILURE_WINDOW_MS - FAILURE_LIMIT * 1000 + 1;
    expect(f.reserve('192.0.2.1')).toBeUndefined();
  });

  it('counts checks still running, and successes not at all', () => {
    const f = new AuthFailures(() => 0);
    for (let i = 0; i < FAILURE_LIMIT; i++) expect(f.reserve('192.0.2.9')).toBeUndefined();
    expect(f.reserve('192.0.2.9')).toEqual({ retryAfterSeconds: 1 });
    for (let i = 0; i < FAILURE_LIMIT; i++) f.done('192.0.2.9', true);
    expect(f.reserve('192.0.2.9')).toBeUndefined();
  });

  it('counts IPv4-mapped addresses as IPv4 and IPv6 per /64', () => {
    expect(addressKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(addressKey('2001:db8:0:1::5')).toBe(addressKey('2001:db8:0:1:ffff:1:2:3'));
    expect(addressKey('2001:db8:0:1::5')).not.toBe(addressKey('2001:db8:0:2::5'));
  });
});

describe('bcrypt off the main thread', () => {
  it('compares on the pool like bcryptjs does', async () => {
    const pool = new BcryptPool(2);
    try {
      const hash = bcrypt.hashSync('pw', 4);
      expect(await Promise.all([pool.compare('pw', hash), pool.compare('nope', hash), pool.compare('pw', 'not a hash')])).toEqual([true, false, false]);
    } finally {
      await pool.close();
    }
  });

  it('the dummy hash has the cost of the configured hashes and matches no password', async () => {
    const users = new Map([['a', bcrypt.hashSync('x', 5)], ['b', bcrypt.hashSync('y', 7)]]);
    const dummy = dummyHash(users);
    expect(bcrypt.getRounds(dummy)).toBe(7);
    expect(dummy).toHaveLength(60);
    expect(await bcrypt.compare('x', dummy)).toBe(false);
    expect(await bcrypt.compare('', dummy)).toBe(false);
  });
});
