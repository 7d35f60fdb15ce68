import { isIP } from 'node:net';
import { normalizeIp } from '../http/client-ip.js';

/**
 * Counter keys. The original keys a counter by `METHOD:pattern:ip`; ctl serves several APIs whose
 * paths collide (`/api/...`), so the server name is part of the key too:
 * `<prefix>:<server>:<METHOD>:<pattern>:<client bucket>`.
 */

/** The bucket of a client that cannot be resolved (the unix socket, a missing peer address). */
export const UNKNOWN_CLIENT = '0.0.0.0';

/** `post` → `POST`, as the original's `strtoupper(trim())`; empty → GET. */
export function normalizeMethod(method: string): string {
  const m = method.trim().toUpperCase();
  return m === '' ? 'GET' : m;
}

/**
 * Route patterns may be written `/posts/{id}` (the original's style) or `/posts/:id` (the kit's
 * find-my-way style); both become `/posts/:id`. An empty pattern is `/`.
 */
export function normalizePattern(pattern: string): string {
  const p = pattern.trim().replace(/\{([^{}/]+)\}/g, ':$1');
  return p === '' ? '/' : p;
}

/**
 * The bucket a client address counts in: IPv4 as is, IPv6 by its network of `ipv6Prefix` bits
 * (a host that rotates through its /64 stays one client), anything unresolvable `0.0.0.0`.
 */
export function clientBucket(ip: string, ipv6Prefix: number): string {
  const addr = normalizeIp(ip.trim());
  const family = isIP(addr);
  if (family === 4) return addr;
  if (family !== 6) return UNKNOWN_CLIENT;
  return ipv6Network(addr, ipv6Prefix);
}

/** `2001:db8:1:2:3:4:5:6`, 64 → `2001:db8:1:2::/64` (128 gives the address itself without a suffix). */
export function ipv6Network(addr: string, prefix: number): string {
  const groups = parseIpv6(addr);
  if (!groups) return UNKNOWN_CLIENT;
  for (let i = 0; i < 8; i++) {
    const keep = Math.max(0, Math.min(16, prefix - i * 16));
    groups[i] = keep === 0 ? 0 : groups[i]! & ((0xffff << (16 - keep)) & 0xffff);
  }
  const text = formatIpv6(groups);
  return prefix >= 128 ? text : `${text}/${prefix}`;
}

/** Eight 16-bit groups of an IPv6 address (zone id dropped, embedded IPv4 understood), or null. */
export function parseIpv6(input: string): number[] | null {
  let addr = input.split('%')[0]!.toLowerCase();
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(addr);
  if (v4) {
    const o = v4[1]!.split('.').map(Number);
    if (o.some((n) => n > 255)) return null;
    addr = addr.slice(0, -v4[1]!.length) + `${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
  }
  const halves = addr.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const parts = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  const groups: number[] = [];
  for (const p of parts) {
    if (!/^[0-9a-f]{1,4}$/.test(p)) return null;
    groups.push(parseInt(p, 16));
  }
  return groups;
}

/** RFC 5952 text: lower case, no leading zeros, the longest run (≥ 2) of zero groups as `::`. */
export function formatIpv6(groups: readonly number[]): string {
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/** Everything of a counter key but the client bucket; the guard precomputes it per route. */
export function routeKeyPrefix(prefix: string, server: string, method: string, pattern: string): string {
  const p = prefix === '' || prefix.endsWith(':') ? prefix : `${prefix}:`;
  return `${p}${server}:${normalizeMethod(method)}:${normalizePattern(pattern)}:`;
}

/** The whole counter key. */
export function counterKey(prefix: string, server: string, method: string, pattern: string, bucket: string): string {
  return routeKeyPrefix(prefix, server, method, pattern) + bucket;
}

/** True when `rest` (what follows a route prefix in a stored key) is a client bucket, not more route. */
export function isBucket(rest: string): boolean {
  if (isIP(rest) !== 0) return true;
  const slash = rest.lastIndexOf('/');
  return slash > 0 && isIP(rest.slice(0, slash)) === 6 && /^\d{1,3}$/.test(rest.slice(slash + 1));
}

const BUCKET_RE = String.raw`(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9a-f]*:[0-9a-f:]*(?:\/\d{1,3})?)`;
const COUNTER_WITH_SERVER = new RegExp(String.raw`^[^:\s]+:[A-Z]+:\/\S*:${BUCKET_RE}$`);
const COUNTER_WITHOUT_SERVER = new RegExp(String.raw`^[A-Z]+:\/\S*:${BUCKET_RE}$`);

/**
 * True when `rest` (a stored key without the store prefix, and without `<server>:` when `withServer`
 * is false) has the shape of a counter key. Resets that sweep by prefix check it, so an empty or
 * shared Redis prefix never lets `ctl ratelimit reset` delete keys that are not counters.
 */
export function isCounterRest(rest: string, withServer: boolean): boolean {
  return (withServer ? COUNTER_WITH_SERVER : COUNTER_WITHOUT_SERVER).test(rest);
}
