import { lookup } from 'node:dns/promises';
import { isIP, connect as netConnect, type Socket } from 'node:net';
import { createRequire } from 'node:module';
import type { ConnectionOptions } from 'node:tls';
import type { Dispatcher, RequestInit, Response, buildConnector } from 'undici';
import { AllowList } from './allow-list.js';
import { destinationGuard, parseProxyUrl, socksConnector } from './proxy.js';

// undici is loaded on first outbound use, not at daemon start (it is one of the heaviest imports).
type Undici = typeof import('undici');
let undiciModule: Undici | undefined;
const undici = (): Undici => (undiciModule ??= createRequire(import.meta.url)('undici') as Undici);

/**
 * The only way ctl opens outbound connections.
 *  - `addressMap` redirects a destination (`host:port` or `host`) to another `host:port`; the URL and
 *    the Host header stay as the caller wrote them, only the TCP connection goes elsewhere. Tests map
 *    public-looking addresses (203.0.113.7:30003) to loopback fakes this way.
 *  - `loopbackOnly` refuses, with an error, any connection whose final address is not loopback.
 *    It is on under test (NODE_ENV=test) so a missed redirect fails the test instead of leaving the machine.
 */
export interface EgressOptions {
  addressMap?: Record<string, string>;
  /** ctl.yaml `egress.allow`: non-public destinations user-supplied URLs may reach (allow-list.ts). */
  allow?: readonly string[];
  loopbackOnly?: boolean;
  /** Connect timeout in ms (default 10 s). */
  connectTimeout?: number;
}

export class EgressRefusedError extends Error {
  readonly code = 'EGRESS_REFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'EgressRefusedError';
  }
}

export interface Target {
  host: string;
  port: number;
}

export function isLoopback(ip: string): boolean {
  if (isIP(ip) === 4) return ip.startsWith('127.');
  if (isIP(ip) === 6) {
    const lower = ip.toLowerCase();
    return lower === '::1' || lower === '0:0:0:0:0:0:0:1' || (lower.startsWith('::ffff:') && lower.slice(7).startsWith('127.'));
  }
  return false;
}

/** True when the environment asks for loopback-only egress (under test). */
export function loopbackOnlyFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.CTL_EGRESS_LOOPBACK_ONLY !== undefined) return /^(1|true|yes|on)$/i.test(env.CTL_EGRESS_LOOPBACK_ONLY);
  return env.NODE_ENV === 'test';
}

/** Parse an address map value or key: `host:port`, `[v6]:port` or `host`. */
export function parseHostPort(text: string, defaultPort?: number): Target {
  const t = text.trim();
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(t);
  if (v6) return { host: v6[1]!, port: v6[2] ? Number(v6[2]) : (defaultPort ?? NaN) };
  const i = t.lastIndexOf(':');
  if (i > 0 && t.indexOf(':') === i) return { host: t.slice(0, i), port: Number(t.slice(i + 1)) };
  return { host: t, port: defaultPort ?? NaN };
}

export class Egress {
  readonly loopbackOnly: boolean;
  private allowList: AllowList;
  private map = new Map<string, Target>();
  private readonly connectTimeout: number;
  private agent?: Dispatcher;

  constructor(opts: EgressOptions = {}) {
    this.loopbackOnly = opts.loopbackOnly ?? loopbackOnlyFromEnv();
    this.allowList = new AllowList(opts.allow);
    this.connectTimeout = opts.connectTimeout ?? 10_000;
    for (const [from, to] of Object.entries(opts.addressMap ?? {})) this.addMapping(from, to);
  }

  /** ctl.yaml `egress.allow` as last loaded. */
  get allow(): AllowList {
    return this.allowList;
  }

  /**
   * SIGHUP: take a re-read ctl.yaml's `egress.allow` and `egress.address-map` in place, so every
   * component holding this object sees them from the next connection on. Both are checked before
   * either is applied: a bad entry throws and the running settings stay. `loopback-only` is not
   * reloaded (it is the test-mode guard; it changes with a restart).
   */
  reconfigure(opts: Pick<EgressOptions, 'allow' | 'addressMap'>): void {
    const allow = new AllowList(opts.allow);
    const map = new Map<string, Target>();
    for (const [from, to] of Object.entries(opts.addressMap ?? {})) map.set(...mapping(from, to));
    this.allowList = allow;
    this.map = map;
  }

  /** undici dispatcher for SDKs and fetch calls: every connection passes the policy. */
  get dispatcher(): Dispatcher {
    return (this.agent ??= this.newAgent());
  }

  /**
   * A dispatcher that opens at most `connections` connections per destination and reuses them: for
   * bursts of many requests to one host (a thousand notifications at once to one webhook would
   * otherwise open a thousand connections, past the receiver's listen backlog).
   */
  pooled(connections: number, tlsOptions?: ConnectionOptions): Dispatcher {
    // A TLS configuration (a receiver's own CA, client certificate, ...) gets a pool of its own.
    const key = tlsOptions ? `${connections}:${this.tlsKeys.get(tlsOptions) ?? this.tlsKeys.set(tlsOptions, this.tlsKeys.size + 1).get(tlsOptions)}` : String(connections);
    let agent = this.pools.get(key);
    if (!agent) this.pools.set(key, (agent = this.newAgent(connections, tlsOptions)));
    return agent;
  }

  private readonly pools = new Map<string, Dispatcher>();
  private readonly tlsKeys = new Map<ConnectionOptions, number>();

  private newAgent(connections?: number, tlsOptions?: ConnectionOptions): Dispatcher {
    const { Agent } = undici();
    return new Agent({ ...(connections ? { connections } : {}), connect: this.connector(tlsOptions) });
  }

  /** An undici connect function whose every connection passes the policy (map, resolve, check, pin). */
  private connector(tlsOptions?: ConnectionOptions): buildConnector.connector {
    const { buildConnector } = undici();
    const tls = buildConnector({ timeout: this.connectTimeout, ...(tlsOptions as object) } as buildConnector.BuildOptions);
    return (options, callback) => {
      const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
      this.resolve(options.hostname, port).then(
        (target) =>
          tls(
            // Connect to the checked address; keep the original name for TLS SNI and certificate checks.
            { ...options, hostname: target.host, port: String(target.port), servername: options.servername ?? sniName(options.hostname) },
            callback,
          ),
        (err: Error) => callback(err, null),
      );
    };
  }

  /**
   * A dispatcher that goes through the proxy at `proxyUrl`: HTTP or HTTPS (CONNECT tunnels) or SOCKS5
   * (`socks5://`, `socks5h://`), for senders configured with a proxy (a receiver's `proxy_url`, a
   * provider's assigned proxy). The connection to the proxy passes the policy; the destination is the
   * proxy's to reach, except in loopback-only mode, where a non-loopback destination is refused.
   * `tlsOptions` apply to the destination's TLS. Dispatchers are kept per proxy URL until `forget`.
   */
  proxied(proxyUrl: string, connections: number, tlsOptions?: ConnectionOptions): Dispatcher {
    const key = `proxy:${proxyUrl}:${connections}:${tlsOptions ? (this.tlsKeys.get(tlsOptions) ?? this.tlsKeys.set(tlsOptions, this.tlsKeys.size + 1).get(tlsOptions)) : ''}`;
    let agent = this.pools.get(key);
    if (!agent) {
      const spec = parseProxyUrl(proxyUrl);
      const { ProxyAgent, Pool, Agent } = undici();
      agent =
        spec.protocol === 'socks5:' || spec.protocol === 'socks5h:'
          ? new Agent({ connections, connect: socksConnector({ spec, resolveProxy: (h, p) => this.resolve(h, p), timeoutMs: this.connectTimeout, ...(tlsOptions ? { tls: tlsOptions } : {}) }) })
          : new ProxyAgent({
              uri: proxyUrl,
              connections,
              ...(tlsOptions ? { requestTls: tlsOptions as never } : {}),
              clientFactory: (origin: URL, opts: object) => new Pool(origin, { ...opts, connect: this.connector() }),
            });
      if (this.loopbackOnly) agent = agent.compose(destinationGuard((host) => this.refusedDestination(host)));
      this.pools.set(key, agent);
    }
    return agent;
  }

  /** Close and drop the dispatchers of a proxy URL (its assignment or settings changed). */
  async forgetProxy(proxyUrl: string): Promise<void> {
    const prefix = `proxy:${proxyUrl}:`;
    const gone: Dispatcher[] = [];
    for (const [k, a] of this.pools) {
      if (k.startsWith(prefix)) {
        gone.push(a);
        this.pools.delete(k);
      }
    }
    await Promise.all(gone.map((a) => a.close().catch(() => undefined)));
  }

  /** In loopback-only mode, the reason a destination reached through a proxy is refused. */
  private refusedDestination(host: string): Error | undefined {
    const h = this.mapped(host, 0).host;
    if (h === 'localhost' || isLoopback(h)) return undefined;
    return new EgressRefusedError(`egress refused: ${host} through a proxy is not loopback (loopback-only mode)`);
  }

  /**
   * Load the HTTP client now, while nothing waits for it (a sender that knows it will send soon, e.g.
   * the alert manager when a group starts its group_wait), instead of on the first request.
   */
  warm(): void {
    undici();
  }

  /** Add or replace one redirect (`203.0.113.7:30003` → `127.0.0.1:41000`). */
  addMapping(from: string, to: string): void {
    this.map.set(...mapping(from, to));
  }

  removeMapping(from: string): void {
    this.map.delete(from.trim().toLowerCase());
  }

  /** Apply the address map only. */
  mapped(host: string, port: number): Target {
    const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
    return this.map.get(`${h}:${port}`) ?? this.map.get(h) ?? { host: h, port };
  }

  /**
   * Map, resolve and check a destination; the returned host is an IP literal to connect to
   * (pinned: the checked address is the one used).
   */
  async resolve(host: string, port: number): Promise<Target> {
    const t = this.mapped(host, port);
    let ip = t.host;
    if (isIP(ip) === 0) {
      const addrs = await lookup(ip, { all: true });
      if (addrs.length === 0) throw new Error(`cannot resolve ${ip}`);
      if (this.loopbackOnly) {
        const bad = addrs.find((a) => !isLoopback(a.address));
        if (bad) throw new EgressRefusedError(`egress refused: ${host}:${port} resolves to non-loopback ${bad.address} (loopback-only mode)`);
      }
      ip = addrs[0]!.address;
    }
    if (this.loopbackOnly && !isLoopback(ip)) {
      throw new EgressRefusedError(`egress refused: ${host}:${port} is not loopback (loopback-only mode; add an address map entry)`);
    }
    return { host: ip, port: t.port };
  }

  /** fetch through the policy. */
  fetch(url: string | URL, init: RequestInit = {}): Promise<Response> {
    return undici().fetch(url, { ...init, dispatcher: this.dispatcher });
  }

  /**
   * undici's request through the policy: several times cheaper than fetch (no WHATWG streams or
   * Response objects), for senders of many small requests (alert notifications).
   */
  request(
    url: string | URL,
    opts: Omit<Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> & { method: Dispatcher.HttpMethod },
    dispatcher: Dispatcher = this.dispatcher,
  ): Promise<Dispatcher.ResponseData> {
    return undici().request(url, { ...opts, dispatcher });
  }

  /** A raw TCP connection through the policy (for protocols other than HTTP). */
  async connect(host: string, port: number): Promise<Socket> {
    const t = await this.resolve(host, port);
    return await new Promise<Socket>((resolve, reject) => {
      const s = netConnect({ host: t.host, port: t.port, timeout: this.connectTimeout });
      s.once('connect', () => {
        s.setTimeout(0);
        resolve(s);
      });
      s.once('timeout', () => s.destroy(new Error(`connect timeout to ${host}:${port}`)));
      s.once('error', reject);
    });
  }

  async close(): Promise<void> {
    await Promise.all([this.agent?.close(), ...[...this.pools.values()].map((a) => a.close())]);
  }
}

/** One address map entry, checked: the normalised key and its target. */
function mapping(from: string, to: string): [string, Target] {
  const target = parseHostPort(to);
  if (!target.host || !Number.isInteger(target.port)) throw new Error(`egress address map: bad target ${to} for ${from}`);
  return [from.trim().toLowerCase().replace(/^\[(.*)\]/, '$1'), target];
}

function sniName(host: string): string | undefined {
  return isIP(host) === 0 ? host : undefined;
}
