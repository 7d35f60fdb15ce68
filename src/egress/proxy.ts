/**
 * Outbound proxies for the egress layer: HTTP and HTTPS proxies (CONNECT tunnels through undici's
 * ProxyAgent) and SOCKS5 (the `socks` library). The connection to the proxy itself passes ctl's
 * policy (address map, loopback-only under test); the destination is the proxy's to reach.
 */
import { lookup } from 'node:dns/promises';
import { isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { createRequire } from 'node:module';
import type { Dispatcher, buildConnector } from 'undici';

export type ProxyProtocol = 'http:' | 'https:' | 'socks5:' | 'socks5h:';

export interface ProxySpec {
  protocol: ProxyProtocol;
  host: string;
  port: number;
  username?: string;
  password?: string;
}

const DEFAULT_PORTS: Record<ProxyProtocol, number> = { 'http:': 80, 'https:': 443, 'socks5:': 1080, 'socks5h:': 1080 };

/** Parse `http://`, `https://`, `socks5://` or `socks5h://` `[user:pass@]host[:port]`; throws with a readable reason. */
export function parseProxyUrl(text: string): ProxySpec {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new Error(`not a proxy URL: ${JSON.stringify(text)}`);
  }
  const protocol = (u.protocol === 'socks:' ? 'socks5:' : u.protocol) as ProxyProtocol;
  if (!(protocol in DEFAULT_PORTS)) throw new Error(`unsupported proxy scheme ${u.protocol} (http, https, socks5, socks5h)`);
  if (!u.hostname) throw new Error(`proxy URL ${JSON.stringify(text)} has no host`);
  if ((u.pathname && u.pathname !== '/') || u.search || u.hash) throw new Error('a proxy URL is scheme://[user:pass@]host:port, nothing after the port');
  return {
    protocol,
    host: u.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: u.port ? Number(u.port) : DEFAULT_PORTS[protocol],
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
  };
}

/** The URL of a spec, credentials included (for the dispatcher; never for display). */
export function proxyUrlOf(p: ProxySpec): string {
  const auth = p.username !== undefined ? `${encodeURIComponent(p.username)}${p.password !== undefined ? `:${encodeURIComponent(p.password)}` : ''}@` : '';
  const host = isIP(p.host) === 6 ? `[${p.host}]` : p.host;
  return `${p.protocol}//${auth}${host}:${p.port}`;
}

/** The URL without credentials. */
export function proxyDisplayUrl(p: ProxySpec): string {
  const host = isIP(p.host) === 6 ? `[${p.host}]` : p.host;
  return `${p.protocol}//${p.username !== undefined ? `${encodeURIComponent(p.username)}:***@` : ''}${host}:${p.port}`;
}

type Socks = typeof import('socks');
let socksModule: Socks | undefined;
const socks = (): Socks => (socksModule ??= createRequire(import.meta.url)('socks') as Socks);

export interface SocksConnectorOptions {
  spec: ProxySpec;
  /** Where to connect for the proxy's host and port: ctl's policy (map, resolve, check). */
  resolveProxy: (host: string, port: number) => Promise<{ host: string; port: number }>;
  timeoutMs: number;
  /** TLS options for https destinations (a CA, a client certificate). */
  tls?: ConnectionOptions;
}

/**
 * An undici connect function that opens every connection through a SOCKS5 proxy; https destinations
 * get TLS over the tunnel (SNI and certificate checks against the destination's name).
 * `socks5:` resolves the destination here, `socks5h:` lets the proxy resolve it (as curl does).
 */
export function socksConnector(o: SocksConnectorOptions): buildConnector.connector {
  return (options, callback) => {
    const https = options.protocol === 'https:';
    const port = Number(options.port) || (https ? 443 : 80);
    const host = options.hostname.replace(/^\[(.*)\]$/, '$1');
    void (async (): Promise<Socket> => {
      const proxy = await o.resolveProxy(o.spec.host, o.spec.port);
      const destination = o.spec.protocol === 'socks5:' && isIP(host) === 0 ? (await lookup(host)).address : host;
      const { socket } = await socks().SocksClient.createConnection({
        proxy: { host: proxy.host, port: proxy.port, type: 5, ...(o.spec.username !== undefined ? { userId: o.spec.username, password: o.spec.password ?? '' } : {}) },
        destination: { host: destination, port },
        command: 'connect',
        timeout: o.timeoutMs,
      });
      if (!https) return socket;
      return await new Promise<Socket>((resolve, reject) => {
        const servername = options.servername ?? (isIP(host) === 0 ? host : undefined);
        const t = tlsConnect({ ...o.tls, socket, ...(servername ? { servername } : {}), ALPNProtocols: ['http/1.1'] });
        t.once('secureConnect', () => {
          t.off('error', reject);
          resolve(t);
        });
        t.once('error', reject);
      });
    })().then(
      (s) => callback(null, s),
      (err: Error) => callback(err, null),
    );
  };
}

/**
 * An interceptor refusing destinations outside loopback before anything is sent (loopback-only mode:
 * a proxy must not carry traffic a direct call could not make). `refuse` returns the error or undefined.
 */
export function destinationGuard(refuse: (host: string) => Error | undefined): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (opts, handler) => {
    const origin = typeof opts.origin === 'string' ? new URL(opts.origin) : opts.origin;
    const err = origin ? refuse(origin.hostname.replace(/^\[(.*)\]$/, '$1')) : undefined;
    if (err) throw err;
    return dispatch(opts, handler);
  };
}
