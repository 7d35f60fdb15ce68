import { BlockList, isIP } from 'node:net';

/**
 * ctl.yaml `egress.allow`: destinations a user-supplied URL may reach although they are not public
 * (an intranet feed, a local image store). Entries: an address or CIDR range (`10.1.2.0/24`,
 * `fd00::/8`, `127.0.0.1`), or a host name with or without a port (`feeds.intranet`,
 * `feeds.intranet:8443`), matched against the URL's host as written.
 */
export class AllowList {
  private readonly nets = new BlockList();
  private readonly names = new Set<string>();
  readonly size: number;

  constructor(entries: readonly string[] = []) {
    for (const raw of entries) {
      const e = raw.trim().toLowerCase();
      const [addr, bits] = e.split('/');
      const family = isIP(addr!.replace(/^\[(.*)\]$/, '$1'));
      if (family !== 0) {
        const a = addr!.replace(/^\[(.*)\]$/, '$1');
        const type = family === 4 ? 'ipv4' : 'ipv6';
        if (bits === undefined) this.nets.addAddress(a, type);
        else {
          const n = Number(bits);
          if (!Number.isInteger(n) || n < 0 || n > (family === 4 ? 32 : 128)) throw new Error(`egress.allow: bad prefix length in ${raw}`);
          this.nets.addSubnet(a, n, type);
        }
      } else if (/^[a-z0-9.-]+(:\d{1,5})?$/.test(e)) {
        this.names.add(e);
      } else {
        throw new Error(`egress.allow: ${JSON.stringify(raw)} is not an address, a CIDR range, a host or host:port`);
      }
    }
    this.size = entries.length;
  }

  /** The URL host as written (lower case, no brackets) and port. */
  allowsName(host: string, port: number): boolean {
    return this.names.has(host) || this.names.has(`${host}:${port}`);
  }

  allowsAddress(ip: string): boolean {
    const family = isIP(ip);
    if (family === 0) return false;
    return this.nets.check(ip, family === 4 ? 'ipv4' : 'ipv6');
  }
}
