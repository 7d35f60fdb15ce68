/**
 * The HTTP side of a receiver: prometheus/common's http_config (basic auth, authorization, bearer
 * token, their `_file` forms read at send time, oauth2 client credentials, tls_config, proxy_url,
 * follow_redirects) applied to requests sent through the
 * egress layer on a pooled connection set, and 0.25's reading of the answer (notify.Retrier: 2xx
 * delivered, 5xx and the receiver's retry codes worth another attempt, anything else final).
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import type { Dispatcher } from 'undici';
import type { Egress } from '../../egress/index.js';
import { OAuth2TokenSource } from './oauth2.js';
import { failed, DELIVERED, USER_AGENT, type Attempt } from './types.js';

export { GO_USER_AGENT, USER_AGENT } from './types.js';
/** Connections to one receiver host at most; more notifications wait for one (keep-alive reuse). */
const CONNECTIONS = 32;
/** follow_redirects (default true): at most 10 hops, as Go's client; each hop passes the egress policy. */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 10;

type Obj = Record<string, any>;

export interface HttpAnswer {
  status: number;
  text: string;
}

const fileText = (path: string) => readFileSync(path, 'utf8').trim();

/** prometheus/common's tls_config as Node TLS options (files read now). */
export function tlsOptions(tls: Obj | undefined): ConnectionOptions | undefined {
  if (!tls) return undefined;
  const out: ConnectionOptions = {};
  if (tls.ca_file) out.ca = readFileSync(tls.ca_file);
  if (tls.cert_file) out.cert = readFileSync(tls.cert_file);
  if (tls.key_file) out.key = readFileSync(tls.key_file);
  if (tls.server_name) out.servername = tls.server_name;
  if (tls.insecure_skip_verify) out.rejectUnauthorized = false;
  const version = { TLS10: 'TLSv1', TLS11: 'TLSv1.1', TLS12: 'TLSv1.2', TLS13: 'TLSv1.3' } as const;
  if (tls.min_version) out.minVersion = version[tls.min_version as keyof typeof version];
  if (tls.max_version) out.maxVersion = version[tls.max_version as keyof typeof version];
  return Object.keys(out).length > 0 ? out : undefined;
}

export class HttpClient {
  private dispatcher?: Dispatcher;
  private readonly oauth2?: OAuth2TokenSource;

  constructor(
    private readonly egress: Egress,
    private readonly config: Obj | undefined,
  ) {
    if (config?.oauth2) this.oauth2 = new OAuth2TokenSource(egress, config.oauth2, () => this.tokenPool());
  }

  /** The token endpoint's own connection set (its proxy and TLS settings are oauth2's). */
  private tokenPool(): Dispatcher {
    const o = this.config!.oauth2 as Obj;
    const proxy = urlOf(o.proxy_url);
    const tls = tlsOptions(o.tls_config);
    return proxy ? this.egress.proxied(proxy, CONNECTIONS, tls) : this.egress.pooled(CONNECTIONS, tls);
  }

  /** The Authorization header http_config asks for (files read now: they may be rotated). */
  private authorization(): string | undefined {
    const c = this.config;
    if (!c) return undefined;
    if (c.basic_auth) {
      const pass = c.basic_auth.password_file ? fileText(c.basic_auth.password_file) : (c.basic_auth.password ?? '');
      return 'Basic ' + Buffer.from(`${c.basic_auth.username ?? ''}:${pass}`).toString('base64');
    }
    if (c.authorization) {
      const cred = c.authorization.credentials_file ? fileText(c.authorization.credentials_file) : c.authorization.credentials;
      if (cred) return `${c.authorization.type || 'Bearer'} ${cred}`;
    }
    if (c.bearer_token) return `Bearer ${c.bearer_token}`;
    if (c.bearer_token_file) return `Bearer ${fileText(c.bearer_token_file)}`;
    return undefined;
  }

  private pool(): Dispatcher {
    if (this.dispatcher) return this.dispatcher;
    const proxy = urlOf(this.config?.proxy_url);
    const tls = tlsOptions(this.config?.tls_config);
    this.dispatcher = proxy ? this.egress.proxied(proxy, CONNECTIONS, tls) : this.egress.pooled(CONNECTIONS, tls);
    return this.dispatcher;
  }

  /** `discard`: the caller reads only the status; the answer's body is drained, not decoded (`text` is ''). */
  async request(method: 'GET' | 'POST' | 'PUT', url: string, body: string | undefined, headers: Record<string, string>, timeoutMs: number, discard = false): Promise<HttpAnswer> {
    const auth = this.oauth2 ? `Bearer ${await this.oauth2.bearer(timeoutMs)}` : this.authorization();
    const follow = this.config?.follow_redirects !== false;
    for (let hop = 0; ; hop++) {
      const res = await this.egress.request(
        url,
        {
          method,
          headers: { 'User-Agent': USER_AGENT, ...(auth ? { Authorization: auth } : {}), ...headers },
          body,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        },
        this.pool(),
      );
      const location = res.headers.location;
      if (follow && REDIRECTS.has(res.statusCode) && typeof location === 'string' && hop < MAX_REDIRECTS) {
        // As Go's client: 307/308 repeat the request; 301/302/303 turn it into a GET without a body.
        await res.body.dump().catch(() => undefined);
        url = new URL(location, url).href;
        if (res.statusCode !== 307 && res.statusCode !== 308 && method !== 'GET') {
          method = 'GET';
          body = undefined;
        }
        continue;
      }
      if (discard) {
        // Drained for the connection's reuse, without an async iterator and a string per answer.
        await res.body.dump();
        return { status: res.statusCode, text: '' };
      }
      // Receivers answer with a few bytes; a large answer is read no further than needed for a message.
      let text = '';
      for await (const chunk of res.body) {
        if (text.length < 4096) text += (chunk as Buffer).toString('utf8');
      }
      return { status: res.statusCode, text: text.slice(0, 4096) };
    }
  }

  postJson(url: string, body: string, timeoutMs: number, headers: Record<string, string> = {}, discard = false): Promise<HttpAnswer> {
    return this.request('POST', url, body, { 'Content-Type': 'application/json', ...headers }, timeoutMs, discard);
  }
}

/** notify.Retrier.Check: 2xx delivered; 5xx and `retryCodes` retried; the answer's text in the error. */
export function checkAnswer(a: HttpAnswer, retryCodes: readonly number[] = [], details = true): Attempt {
  if (a.status >= 200 && a.status < 300) return DELIVERED;
  const retry = Math.floor(a.status / 100) === 5 || retryCodes.includes(a.status);
  const body = details ? a.text.trim() : '';
  return failed(`unexpected status code ${a.status}${body ? `: ${body}` : ''}`, retry);
}

/** A send that threw (connection refused, timeout, egress refusal): worth another attempt. */
export function sendError(e: unknown): Attempt {
  return failed((e as Error).message, !(e as { code?: string }).code?.startsWith('EGRESS_REFUSED'));
}

/** The text of a secret that may come inline or from a file (`api_key` / `api_key_file`). */
export function secretOf(inline: string | undefined, file: string | undefined): string {
  if (inline) return inline;
  return file ? fileText(file) : '';
}

/** A URL option as the decoded configuration holds it (a URL value, or a plain string). */
export function urlOf(v: unknown): string {
  if (!v) return '';
  return typeof v === 'string' ? v : String((v as { href?: string }).href ?? '');
}
