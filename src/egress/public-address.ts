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

/** True for an IPv4 or IPv6 address reachable on the public internet (the SSRF check of user URLs). */
export function isPublicAddress(ip: string, opts: PublicAddressOptions = {}): boolean {
  if (isIP(ip) === 4) return isPublicIPv4(ip, opts);
  if (isIP(ip) !== 6) return false;
  const l = ip.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(l);
  if (mapped) return isPublicIPv4(mapped[1]!, opts);
  if (l === '::' || l === '::1') return false;
  const first = parseInt(l.split(':')[0] || '0', 16);
  if ((first & 0xfe00) === 0xfc00) return false; // unique local fc00::/7
  if ((first & 0xffc0) === 0xfe80) return false; // link local fe80::/10
  if ((first & 0xff00) === 0xff00) return false; // multicast ff00::/8
  return true;
}
