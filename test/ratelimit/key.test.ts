import { describe, expect, it } from 'vitest';
import { clientBucket, counterKey, formatIpv6, ipv6Network, isBucket, isCounterRest, normalizeMethod, normalizePattern, parseIpv6 } from '../../src/ratelimit/key.js';

describe('counter keys', () => {
  it('normalises method and pattern as the original (upper case, trimmed, / and GET fallbacks)', () => {
    expect(normalizeMethod(' post ')).toBe('POST');
    expect(normalizeMethod('')).toBe('GET');
    expect(normalizePattern(' /api/posts ')).toBe('/api/posts');
    expect(normalizePattern('')).toBe('/');
    expect(counterKey('rl', 'srv', 'post', ' /api/posts ', '127.0.0.1')).toBe('rl:srv:POST:/api/posts:127.0.0.1');
    expect(counterKey('rl:', 'srv', 'get', '', clientBucket('', 64))).toBe('rl:srv:GET:/:0.0.0.0');
  });

  it('writes {param} patterns the way the kit router does (:param), so both spellings are one bucket', () => {
    expect(normalizePattern('/posts/{id}')).toBe('/posts/:id');
    expect(normalizePattern('/a/{x}/b/{y}')).toBe('/a/:x/b/:y');
    expect(normalizePattern('/posts/:id')).toBe('/posts/:id');
  });

  it('falls back to 0.0.0.0 for anything that is not an address', () => {
    for (const ip of ['', 'unix', 'not-an-ip', '1.2.3', '::gg']) expect(clientBucket(ip, 64)).toBe('0.0.0.0');
  });

  it('maps IPv4-mapped IPv6 back to IPv4 and keeps IPv4 whole', () => {
    expect(clientBucket('::ffff:10.1.2.3', 64)).toBe('10.1.2.3');
    expect(clientBucket('10.1.2.3', 64)).toBe('10.1.2.3');
  });

  it('buckets IPv6 clients by their /64 (configurable)', () => {
    expect(clientBucket('2001:db8:1:2:3:4:5:6', 64)).toBe('2001:db8:1:2::/64');
    expect(clientBucket('2001:db8:1:2:ffff::1', 64)).toBe('2001:db8:1:2::/64');
    expect(clientBucket('2001:db8:1:3::1', 64)).toBe('2001:db8:1:3::/64');
    expect(clientBucket('2001:db8:1:2:3:4:5:6', 56)).toBe('2001:db8:1::/56');
    expect(clientBucket('2001:DB8::1', 128)).toBe('2001:db8::1');
    expect(clientBucket('::1', 64)).toBe('::/64');
    expect(clientBucket('fe80::1%eth0', 64)).toBe('fe80::/64');
    expect(ipv6Network('2001:db8:abcd:12ff::1', 60)).toBe('2001:db8:abcd:12f0::/60');
  });

  it('parses and prints IPv6 per RFC 5952', () => {
    expect(parseIpv6('::')).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIpv6('64:ff9b::192.0.2.33')).toEqual([0x64, 0xff9b, 0, 0, 0, 0, 0xc000, 0x221]);
    expect(parseIpv6('1:2:3:4:5:6:7:8:9')).toBeNull();
    expect(parseIpv6('1::2::3')).toBeNull();
    expect(formatIpv6([0x2001, 0xdb8, 0, 0, 1, 0, 0, 1])).toBe('2001:db8::1:0:0:1');
    expect(formatIpv6([0x2001, 0xdb8, 0, 1, 1, 1, 1, 1])).toBe('2001:db8:0:1:1:1:1:1');
  });

  it('recognises counter keys (so a reset never sweeps foreign keys under a shared prefix)', () => {
    expect(isCounterRest('pipeline:POST:/api/auth/login:203.0.113.9', true)).toBe(true);
    expect(isCounterRest('srv:GET:/posts/:id:2001:db8:1:2::/64', true)).toBe(true);
    expect(isCounterRest('srv:GET:/:0.0.0.0', true)).toBe(true);
    expect(isCounterRest('GET:/posts/:id:::/64', false)).toBe(true);
    expect(isCounterRest('session:abc123', true)).toBe(false);
    expect(isCounterRest('user:42:name', true)).toBe(false);
    expect(isCounterRest('srv:GET:/x:127.0.0.1', false)).toBe(false);
  });

  it('tells a client bucket from more route text', () => {
    expect(isBucket('127.0.0.1')).toBe(true);
    expect(isBucket('2001:db8::/64')).toBe(true);
    expect(isBucket('0.0.0.0')).toBe(true);
    expect(isBucket('x/127.0.0.1')).toBe(false);
    expect(isBucket('/sub:127.0.0.1')).toBe(false);
  });
});
