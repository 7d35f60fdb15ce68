import { isIP } from 'node:net';
import { isPublicIPv4 as isPublicV4 } from '../egress/public-address.js';

/**
 * Address rules for nodes. A node address must be a dotted IPv4 address in a public network: the
 * origin refuses 10/8, 127/8, 172.16/12, 192.168/16 and 169.254/16; we also refuse the obviously
 * unroutable ranges (src/egress/public-address.ts). The documentation ranges (RFC 5737) and the
 * benchmarking range 198.18.0.0/15 (RFC 2544) are accepted on purpose: tests and benchmarks use them
 * with the egress address map, so they never reach a real host.
 */
export type AddressClass = 'invalid' | 'ipv6' | 'private' | 'public';

export function classifyAddress(text: string): AddressClass {
  const family = isIP(text);
  if (family === 0) return 'invalid';
  if (family === 6) return 'ipv6';
  return isPublicV4(text, { allowBenchmarkRange: true }) ? 'public' : 'private';
}

export function isPublicIPv4(text: string): boolean {
  return classifyAddress(text) === 'public';
}

/** True for a dotted IPv4 address (no leading zeros), whatever its range. */
export function isIPv4(text: string): boolean {
  return isIP(text) === 4;
}

/** Node names: letters, digits and underscore, at most 32 characters (empty means "generate one"). */
export const NAME_RE = /^[A-Za-z0-9_]{1,32}$/;
/** Names given per line in a bulk add (`IP , name`) may also hold a hyphen. */
export const LINE_NAME_RE = /^[A-Za-z0-9_-]{1,32}$/;
const LINE_RE = /^([^,\s]+)\s*,\s*(\S+)$/;

export interface AddressEntry {
  ip: string;
  name?: string;
}

/**
 * Split a bulk `Ip` value. Precedence as the origin: a comma (with line breaks and every line
 * `IP , name`: per-line names), else line breaks, else spaces; no delimiter → null (code 13).
 * Empty entries (a trailing comma, blank lines, double spaces) are ignored.
 */
export function splitAddressList(raw: string): AddressEntry[] | null {
  const text = raw.trim();
  let parts: AddressEntry[];
  if (text.includes(',')) {
    const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '');
    const named = lines.length > 1 && lines.map((l) => LINE_RE.exec(l));
    if (named && named.every((m) => m !== null && LINE_NAME_RE.test(m[2]!))) {
      parts = named.map((m) => ({ ip: m![1]!, name: m![2]! }));
    } else {
      // Lines without names: commas and line breaks both separate addresses.
      parts = text.split(/,|\r?\n|\r/).map((s) => ({ ip: s.trim() }));
    }
  } else if (/[\r\n]/.test(text)) {
    parts = text.split(/\r?\n|\r/).map((s) => ({ ip: s.trim() }));
  } else if (/[ \t]/.test(text)) {
    parts = text.split(/[ \t]+/).map((s) => ({ ip: s.trim() }));
  } else {
    return null;
  }
  return parts.filter((p) => p.ip !== '');
}
