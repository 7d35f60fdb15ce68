import { BlockList, isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';

/**
 * Resolves the client address of a request. The socket peer is the truth; X-Forwarded-For and
 * X-Real-IP are believed only when the peer is a configured trusted proxy (unlike the PHP original,
 * which trusts them from anyone). With a chain of proxies, the right-most untrusted hop is the client.
 */
export class ClientIpResolver {
  private readonly trusted = new BlockList();
  private readonly any: boolean;

  constructor(trustedProxies: readonly string[] = []) {
    for (const cidr of trustedProxies) addCidr(this.trusted, cidr);
    this.any = trustedProxies.length > 0;
  }

  isTrusted(ip: string): boolean {
    if (!this.any || !ip) return false;
    const family = isIP(ip);
    return family !== 0 && this.trusted.check(ip, family === 6 ? 'ipv6' : 'ipv4');
  }

  /** '' when the peer is not an IP (unix socket). */
  resolve(req: IncomingMessage): string {
    const peer = normalizeIp(req.socket.remoteAddress ?? '');
    if (!peer || !this.isTrusted(peer)) return peer;
    const xff = headerValue(req.headers['x-forwarded-for']);
    if (xff) {
      const hops = xff.split(',').map((s) => normalizeIp(s.trim())).filter((s) => isIP(s) !== 0);
      for (let i = hops.length - 1; i >= 0; i--) if (!this.isTrusted(hops[i]!)) return hops[i]!;
      if (hops.length > 0) return hops[0]!;
    }
    const real = normalizeIp(headerValue(req.headers['x-real-ip']).trim());
    if (isIP(real)) return real;
    return peer;
  }
}

function headerValue(v: string | string[] | undefined): string {
  return Array.isArray(v) ? v.join(',') : (v ?? '');
}

/** Strip the IPv4-mapped IPv6 prefix so `::ffff:127.0.0.1` and `127.0.0.1` are one client. */
export function normalizeIp(ip: string): string {
  if (ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4) return ip.slice(7);
  return ip;
}

export function addCidr(list: BlockList, cidr: string): void {
  const [addr, bits] = cidr.trim().split('/');
  const family = isIP(addr ?? '');
  if (!addr || family === 0) throw new Error(`invalid CIDR or address: ${cidr}`);
  const type = family === 6 ? 'ipv6' : 'ipv4';
  if (bits === undefined) {
    list.addAddress(addr, type);
    return;
  }
  const prefix = Number(bits);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32)) {
    throw new Error(`invalid CIDR prefix: ${cidr}`);
  }
  list.addSubnet(addr, prefix, type);
}
