/**
 * The one SSRF policy for URLs a user hands ctl (gateway media items, pipeline feed sources): only
 * public destinations (every spelling of every address judged by what it reaches, see
 * public-address.ts) or what ctl.yaml `egress.allow` names; the address checked is the one connected
 * to (no second DNS answer); every redirect is checked again; and every refusal or failure to reach
 * reads the same, so the answers cannot map a private network. Connections go through Egress as all
 * others do (address map, loopback-only under test).
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Dispatcher } from 'undici';
import { createRequire } from 'node:module';
import type { Egress } from './index.js';
import { isPublicAddress } from './public-address.js';

type Undici = typeof import('undici');
let undiciModule: Undici | undefined;
const undici = (): Undici => (undiciModule ??= createRequire(import.meta.url)('undici') as Undici);

/**
 * How every refusal starts. A URL the policy refuses (a private address, a bad scheme) goes on to say
 * why, and for an address how to allow it; a URL that cannot be reached (a name that does not resolve,
 * a port that does not answer) says only this, so the answers cannot map what is behind them.
 */
export const URL_REFUSED = 'URL is not allowed or not reachable';

export class UrlRefusedError extends Error {
  readonly code = 'URL_REFUSED';
  /** `why` is logged; `told` (when the policy refused) is added to the message the user sees. */
  constructor(readonly why: string, told?: string) {
    super(told ? `${URL_REFUSED}: ${told}` : URL_REFUSED);
    this.name = 'UrlRefusedError';
  }
}

/** The refusal of a non-public address, naming it and the ctl.yaml key that allows it. */
export function privateAddressRefusal(ip: string, host?: string): UrlRefusedError {
  const what = host && host !== ip ? `${host} resolves to private address ${ip}` : `private address ${ip}`;
  const entry = host && host !== ip ? `${host} or ${ip}` : ip;
  return new UrlRefusedError(what, `${what} is not in egress.allow (to allow it, add ${entry} to egress.allow in ctl.yaml and reload with SIGHUP)`);
}

/** A refusal by the policy whose reason is told to the user (it says nothing about the network). */
function told(why: string): UrlRefusedError {
  return new UrlRefusedError(why, why);
}

export interface UserUrlOptions {
  /** Accept http as well as https (default false). */
  allowHttp?: boolean;
  /** Redirects followed, each checked again (default 3). */
  maxRedirects?: number;
  method?: string;
  headers?: Record<string, string>;
  /** A request body (sent on the first hop only: a redirect is followed with GET, as browsers do for 301-303). */
  body?: string | Buffer;
  signal?: AbortSignal;
  /** Connect and header timeout in ms (default 10 s). */
  timeoutMs?: number;
}

export interface UserUrlResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'];
  /** The URL finally answered (after redirects). */
  url: string;
}

/**
 * The URL's form: http(s) (http only when allowed), no credentials, a host that is not a literal
 * private address. Checked when a URL is stored (a source) and again on every fetch.
 */
export function checkUserUrl(url: string, egress: Egress, opts: Pick<UserUrlOptions, 'allowHttp'> = {}): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw told('not a URL');
  }
  if (u.protocol !== 'https:' && !(opts.allowHttp && u.protocol === 'http:')) throw told(`scheme ${u.protocol} is not ${opts.allowHttp ? 'http or https' : 'https'}`);
  if (u.username || u.password) throw told('credentials in the URL');
  // WHATWG parsing already turned 2130706433, 0x7f.1, 0177.0.0.1 and 127.1 into 127.0.0.1.
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) !== 0 && !allowed(egress, host, portOf(u), host)) throw privateAddressRefusal(host);
  return u;
}

function portOf(u: URL): number {
  return Number(u.port) || (u.protocol === 'https:' ? 443 : 80);
}

function allowed(egress: Egress, host: string, port: number, ip: string): boolean {
  return isPublicAddress(ip) || egress.allow.allowsName(host, port) || egress.allow.allowsAddress(ip);
}

/** Resolve the host and check every address it has; the first is the one connected to. */
async function checkedAddress(egress: Egress, u: URL): Promise<string> {
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = portOf(u);
  if (isIP(host) !== 0) {
    if (!allowed(egress, host, port, host)) throw privateAddressRefusal(host);
    return host;
  }
  let addrs: { address: string }[];
  try {
    addrs = await lookup(host, { all: true });
  } catch {
    throw new UrlRefusedError(`${host} does not resolve`);
  }
  if (addrs.length === 0) throw new UrlRefusedError(`${host} does not resolve`);
  const bad = addrs.find((a) => !allowed(egress, host, port, a.address));
  if (bad) throw privateAddressRefusal(bad.address, host);
  return addrs[0]!.address;
}

/** A one-connection agent that connects to `ip` whatever name the URL has (TLS still checks the name). */
function pinnedAgent(egress: Egress, ip: string, servername: string | undefined, timeoutMs: number): Dispatcher {
  const tls = undici().buildConnector({ timeout: timeoutMs });
  return new (undici().Agent)({
    connections: 1,
    connect: (options, callback) => {
      const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
      egress.resolve(ip, port).then(
        (t) => tls({ ...options, hostname: t.host, port: String(t.port), servername }, callback),
        (err: Error) => callback(err, null),
      );
    },
  });
}

/**
 * GET (or `method`) a user-supplied URL under the policy. Resolves with the answer of the last hop,
 * whatever its status; throws UrlRefusedError (one text) when a hop is refused or cannot be reached,
 * and lets an abort of `signal` through as it is.
 */
export async function fetchUserUrl(egress: Egress, url: string, opts: UserUrlOptions = {}): Promise<UserUrlResponse> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  let current = url;
  for (let hop = 0; hop <= (opts.maxRedirects ?? 3); hop++) {
    const u = checkUserUrl(current, egress, opts);
    const ip = await checkedAddress(egress, u);
    const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
    const agent = pinnedAgent(egress, ip, isIP(host) ? undefined : host, timeoutMs);
    let res: Dispatcher.ResponseData;
    try {
      const first = hop === 0;
      res = await undici().request(u, {
        method: (first ? (opts.method ?? 'GET') : 'GET') as Dispatcher.HttpMethod,
        ...(first && opts.body !== undefined ? { body: opts.body } : {}),
        dispatcher: agent,
        headers: opts.headers,
        signal: opts.signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
    } catch (e) {
      void agent.close();
      if (opts.signal?.aborted) throw e;
      throw new UrlRefusedError(`connecting: ${(e as Error).message}`);
    }
    const location = res.headers.location;
    if (res.statusCode >= 300 && res.statusCode < 400 && location) {
      await res.body.dump().catch(() => undefined);
      void agent.close();
      try {
        current = new URL(String(location), u).toString();
      } catch {
        throw told('bad redirect');
      }
      continue;
    }
    // The agent closes once the caller has read or dropped the body.
    res.body.once('close', () => void agent.close());
    return { status: res.statusCode, headers: res.headers, body: res.body, url: u.toString() };
  }
  throw told('too many redirects');
}
