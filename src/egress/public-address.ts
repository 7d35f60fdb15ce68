import { BlockList, isIP } from 'node:net';

/**
 * IPv4 ranges that are never a public internet host: this network, RFC 1918, CGNAT, loopback, link
 * local, IETF protocol assignments, multicast, reserved and broadcast. The documentation ranges
 * (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24) are not in it on purpose: tests use them as
 * public-looking addresses that the egress address map sends to loopback fakes.
 */
const NON_PUBLIC_V4: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];
/** RFC 2544 benchmarking range: not public, but the node monitor's bench uses it for 5,000 fake nodes. */
const BENCHMARK_V4 = ['198.18.0.0', 15] as const;

function blockList(ranges: readonly (readonly [string, number])[]): BlockList {
  const list = new BlockList();
  for (const [net, bits] of ranges) list.addSubnet(net, bits, 'ipv4');
  return list;
}

const nonPublic = blockList([...NON_PUBLIC_V4, BENCHMARK_V4]);
const nonPublicExceptBenchmark = blockList(NON_PUBLIC_V4);

export interface PublicAddressOptions {
  /** Accept 198.18.0.0/15 (default false). */
  allowBenchmarkRange?: boolean;
}

/** True for a dotted IPv4 address in a public network. */
export function isPublicIPv4(ip: string, opts: PublicAddressOptions = {}): boolean {
  if (isIP(ip) !== 4) return false;
  return !(opts.allowBenchmarkRange ? nonPublicExceptBenchmark : nonPublic).check(ip, 'ipv4');
}

/**
 * The 16 bytes of an IPv6 address in any spelling (`::ffff:127.0.0.1`, `::ffff:7f00:1`,
 * `0:0:0:0:0:ffff:7f00:1`, with or without brackets or a zone); null when it is not one.
 */
export function ipv6Bytes(text: string): Uint8Array | null {
  let t = text.replace(/^\[(.*)\]$/, '$1');
  const zone = t.indexOf('%');
  if (zone !== -1) t = t.slice(0, zone);
  if (isIP(t) !== 6) return null;
  let tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(t);
  if (dotted) {
    tail = dotted[1]!.split('.').map(Number);
    t = t.slice(0, -dotted[1]!.length) + '0:0';
  }
  const [head, rest] = t.includes('::') ? t.split('::') : [t, undefined];
  const parts = (x: string | undefined) => (x ? x.split(':').filter((p) => p !== '') : []);
  const h = parts(head);
  const r = parts(rest);
  const groups = rest === undefined ? h : [...h, ...new Array<string>(8 - h.length - r.length).fill('0'), ...r];
  if (groups.length !== 8) return null;
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    const v = parseInt(g, 16);
    out[2 * i] = v >> 8;
    out[2 * i + 1] = v & 0xff;
  });
  if (tail.length === 4) out.set(tail, 12);
  return out;
}

const v4 = (b: Uint8Array, at: number) => `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;
const zeroes = (b: Uint8Array, from: number, to: number) => b.subarray(from, to).every((x) => x === 0);

/**
 * The IPv4 address an IPv6 address carries and would reach: IPv4-mapped (::ffff:0:0/96),
 * IPv4-compatible (::/96), NAT64 (64:ff9b::/96) and 6to4 (2002::/16). null when it carries none.
 */
function embeddedIPv4(b: Uint8Array): string | null {
  if (zeroes(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return v4(b, 12);
  if (zeroes(b, 0, 12)) return v4(b, 12);
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeroes(b, 4, 12)) return v4(b, 12);
  if (b[0] === 0x20 && b[1] === 0x02) return v4(b, 2);
  return null;
}

/** True for an IPv4 or IPv6 address reachable on the public internet (the SSRF check of user URLs). */
export function isPublicAddress(ip: string, opts: PublicAddressOptions = {}): boolean {
  if (isIP(ip) === 4) return isPublicIPv4(ip, opts);
  const b = ipv6Bytes(ip);
  if (!b) return false;
  // Every address that carries an IPv4 one is judged by it (::ffff:7f00:1 is 127.0.0.1); :: and ::1 too.
  const inner = embeddedIPv4(b);
  if (inner !== null) return isPublicIPv4(inner, opts);
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b) return false; // 64:ff9b:1::/48 local NAT64
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x00 && b[3] === 0x00) return false; // Teredo 2001::/32: tunnels to a hidden IPv4
  // 2001:db8::/32 (documentation) stays public-looking, as the IPv4 documentation ranges do: tests map them to fakes.
  if (b[0] === 0x01 && b[1] === 0x00 && zeroes(b, 2, 8)) return false; // discard 100::/64
  if ((b[0]! & 0xfe) === 0xfc) return false; // unique local fc00::/7
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return false; // link local fe80::/10
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0xc0) return false; // site local fec0::/10 (deprecated, still routed inside sites)
  if (b[0] === 0xff) return false; // multicast
  return true;
}
