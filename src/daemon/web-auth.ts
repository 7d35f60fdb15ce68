/**
 * What a web config asks of every request on its listener, before any routing (exporter-toolkit's
 * webHandler): its response headers, the client certificate rules TLS alone does not enforce, and
 * HTTP basic authentication against bcrypt hashes. A refusal is Alertmanager's: 401 `Unauthorized`
 * with `WWW-Authenticate: Basic`. Beyond Alertmanager: bcrypt runs on worker threads (bcrypt-pool.ts),
 * an unknown user costs as much as a known one, and an address that keeps failing is answered 429
 * (auth-failures.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { discardBody } from '../http/body-budget.js';
import type { WebConfig } from './web-config.js';
import type { AuthFailures } from './auth-failures.js';
import type { BcryptPool } from './bcrypt-pool.js';

/** Successful checks kept, so a client's every request does not pay bcrypt (exporter-toolkit caches too). */
const CACHE_LIMIT = 100;

/** Why a request is not served: a status, and for 429/503 the seconds to wait. */
export type Refusal = { status: 401 | 403 } | { status: 429 | 503; retryAfterSeconds: number };

const REASONS: Record<Refusal['status'], string> = { 401: 'Unauthorized', 403: 'Forbidden', 429: 'Too Many Requests', 503: 'Service Unavailable' };

/** The response headers of a refusal (besides the web config's own). */
function refusalHeaders(r: Refusal): Record<string, string> {
  if (r.status === 401) return { 'WWW-Authenticate': 'Basic' };
  if (r.status === 429 || r.status === 503) return { 'Retry-After': String(r.retryAfterSeconds) };
  return {};
}

export class WebAuth {
  private readonly verified = new Map<string, true>();
  /** Checks running, by cache key: the same credentials sent again while one runs wait for it. */
  private readonly running = new Map<string, Promise<boolean>>();
  /** Compared when the user is unknown: the cost of the configured hashes, so both take as long. */
  private readonly dummyHash: string;

  constructor(
    readonly config: WebConfig,
    private readonly pool: BcryptPool,
    private readonly failures: AuthFailures,
  ) {
    this.dummyHash = dummyHash(config.users);
  }

  /**
   * Resolves true when the request may go on; otherwise the refusal (401, 403 for a client
   * certificate the rules refuse, 429 or 503 with Retry-After) has been sent.
   */
  async admit(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    for (const [k, v] of Object.entries(this.config.headers)) res.setHeader(k, v);
    const refusal = await this.refusal(req);
    if (refusal === undefined) return true;
    for (const [k, v] of Object.entries(refusalHeaders(refusal))) res.setHeader(k, v);
    // Read what the client is still sending first: answering and closing on unread data resets the connection.
    await discardBody(req);
    const body = `${REASONS[refusal.status]}\n`;
    res.writeHead(refusal.status, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
    return false;
  }

  /** The raw HTTP answer refusing an upgrade request. */
  static upgradeRefusal(r: Refusal): string {
    const extra = Object.entries(refusalHeaders(r))
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    return `HTTP/1.1 ${r.status} ${REASONS[r.status]}\r\n${extra}Connection: close\r\nContent-Length: 0\r\n\r\n`;
  }

  /** undefined when the request may go on, else why not. */
  async refusal(req: IncomingMessage): Promise<Refusal | undefined> {
    if (!this.certificateAccepted(req)) return { status: 403 };
    if (this.config.users.size === 0) return undefined;
    const address = req.socket.remoteAddress ?? '';
    // A blocked address gets no answer about its credentials at all, cached or not.
    const blocked = this.failures.reserve(address);
    if (blocked) return { status: 429, ...blocked };
    // Only a password that was checked and found wrong is a failure: no credentials, a malformed
    // header or a full pool cost no bcrypt and reveal nothing.
    let failed = false;
    try {
      const creds = basicCredentials(req.headers.authorization);
      if (!creds) return { status: 401 };
      const result = this.check(creds.user, creds.password);
      if (result === 'busy') return { status: 503, retryAfterSeconds: 1 };
      failed = !(await result);
      return failed ? { status: 401 } : undefined;
    } finally {
      this.failures.done(address, !failed);
    }
  }

  private check(user: string, password: string): Promise<boolean> | 'busy' {
    const hash = this.config.users.get(user);
    const key = createHash('sha256').update(`${user}\0${hash ?? ''}\0${password}`).digest('base64');
    if (this.verified.has(key)) return Promise.resolve(true);
    const same = this.running.get(key);
    if (same) return same;
    if (this.pool.busy) return 'busy';
    const check = this.pool.compare(password, hash ?? this.dummyHash).then((ok) => {
      if (!ok || hash === undefined) return false;
      if (this.verified.size >= CACHE_LIMIT) this.verified.clear();
      this.verified.set(key, true);
      return true;
    });
    this.running.set(key, check);
    const forget = () => this.running.delete(key);
    check.then(forget, forget);
    return check;
  }

  /** The client-certificate modes OpenSSL does not enforce by itself, and client_allowed_sans. */
  private certificateAccepted(req: IncomingMessage): boolean {
    const tls = this.config.tls;
    if (!tls || tls.clientAuth === 'NoClientCert') return true;
    const socket = req.socket as TLSSocket;
    const cert = typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate() : undefined;
    const presented = cert !== undefined && Object.keys(cert).length > 0;
    if (tls.clientAuth === 'RequireAnyClientCert' && !presented) return false;
    if (tls.clientAuth === 'VerifyClientCertIfGiven' && presented && !socket.authorized) return false;
    if (tls.allowedSans.length > 0 && presented) {
      const sans = (cert.subjectaltname ?? '').split(/,\s*/).map((s) => s.replace(/^(DNS|email|IP Address|URI):/, ''));
      if (!sans.some((s) => tls.allowedSans.includes(s))) return false;
    }
    return true;
  }
}

/**
 * A hash no password matches, at the highest cost among `users` (bcrypt's time doubles per cost step,
 * so a dummy at another cost would tell unknown users from known ones). Salt and digest are random:
 * only the cost decides how long a comparison takes.
 */
export function dummyHash(users: Map<string, string>): string {
  let cost = 10;
  if (users.size > 0) cost = Math.max(...[...users.values()].map((h) => Number(h.slice(4, 6))));
  const alphabet = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  // The salt's last character carries 2 bits: bcrypt only accepts the characters whose low 4 bits are 0.
  const chars = [...randomBytes(53)].map((b, i) => (i === 21 ? '.Oeu'[b & 3]! : alphabet[b & 63]!));
  return `$2b$${String(cost).padStart(2, '0')}$${chars.join('')}`;
}

/** `Authorization: Basic base64(user:password)`; undefined for anything else. */
export function basicCredentials(header: string | undefined): { user: string; password: string } | undefined {
  if (!header) return undefined;
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m) return undefined;
  const text = Buffer.from(m[1]!, 'base64').toString('utf8');
  const i = text.indexOf(':');
  if (i < 0) return undefined;
  return { user: text.slice(0, i), password: text.slice(i + 1) };
}
