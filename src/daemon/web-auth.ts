/**
 * What a web config asks of every request on its listener, before any routing (exporter-toolkit's
 * webHandler): its response headers, the client certificate rules TLS alone does not enforce, and
 * HTTP basic authentication against bcrypt hashes. A refusal is Alertmanager's: 401 `Unauthorized`
 * with `WWW-Authenticate: Basic`.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { lazyRequire } from '../http/lazy.js';
import { discardBody } from '../http/body-budget.js';
import type { WebConfig } from './web-config.js';

const bcrypt = lazyRequire<{ compare(s: string, hash: string): Promise<boolean> }>('bcryptjs');

/** Compared when the user is unknown, so the answer takes as long as for a known one. */
const DUMMY_HASH = '$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi';
/** Successful checks kept, so a client's every request does not pay bcrypt (exporter-toolkit caches too). */
const CACHE_LIMIT = 100;

export class WebAuth {
  private readonly verified = new Map<string, true>();

  constructor(readonly config: WebConfig) {}

  /**
   * Resolves true when the request may go on; otherwise the answer (401, 403 for a client
   * certificate the rules refuse) has been sent.
   */
  async admit(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    for (const [k, v] of Object.entries(this.config.headers)) res.setHeader(k, v);
    const refusal = await this.refusal(req);
    if (refusal === undefined) return true;
    if (refusal === 401) res.setHeader('WWW-Authenticate', 'Basic');
    // Read what the client is still sending first: answering and closing on unread data resets the connection.
    await discardBody(req);
    const body = refusal === 401 ? 'Unauthorized\n' : 'Forbidden\n';
    res.writeHead(refusal, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
    return false;
  }

  /** undefined when the request may go on, else the status that refuses it. */
  async refusal(req: IncomingMessage): Promise<401 | 403 | undefined> {
    if (!this.certificateAccepted(req)) return 403;
    if (this.config.users.size === 0) return undefined;
    const creds = basicCredentials(req.headers.authorization);
    if (creds && (await this.check(creds.user, creds.password))) return undefined;
    return 401;
  }

  private async check(user: string, password: string): Promise<boolean> {
    const hash = this.config.users.get(user);
    const key = createHash('sha256').update(`${user}\0${hash ?? ''}\0${password}`).digest('base64');
    if (this.verified.has(key)) return true;
    const ok = await bcrypt().compare(password, hash ?? DUMMY_HASH);
    if (!ok || hash === undefined) return false;
    if (this.verified.size >= CACHE_LIMIT) this.verified.clear();
    this.verified.set(key, true);
    return true;
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
