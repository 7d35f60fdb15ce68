/**
 * email_configs: SMTP with nodemailer's connection, the conversation and the message as 0.25 has
 * them. The smarthost is reached through the egress layer; port 465 is TLS from the start (and
 * then, as in 0.25, `require_tls` still asks the server for STARTTLS, which such a server does not
 * advertise: it fails unless `require_tls: false`); otherwise `require_tls` (default true) demands
 * STARTTLS and `false` sends in the clear without trying it. `tls_config` (ca_file, cert_file and
 * key_file, server_name, insecure_skip_verify, min/max_version) applies to both; the name checked
 * is `server_name`, else the smarthost's host. EHLO names `hello` (default localhost).
 * Authentication is attempted when `auth_username` is set and the server offers AUTH: the first
 * mechanism of the server's list that has its credential (CRAM-MD5 with `auth_secret`, PLAIN with
 * the password and `auth_identity` as the authorization identity, which Go allows only over TLS
 * or to localhost, LOGIN with the password); the password is the bytes of `auth_password_file`
 * when set, else `auth_password`. MAIL FROM carries `BODY=8BITMIME` and `SMTPUTF8` when the server
 * offers them, as Go's net/smtp sends them. The message is go-mail.ts's.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { isIP, type Socket } from 'node:net';
import { checkServerIdentity } from 'node:tls';
import type SMTPConnectionType from 'nodemailer/lib/smtp-connection';
import type addressparserType from 'nodemailer/lib/addressparser';
import type { Egress } from '../../egress/index.js';
import { lazyRequire } from '../../http/lazy.js';
import { composeGoMail } from './go-mail.js';
import { tlsOptions } from './http.js';
import { expander } from './template-text.js';
import { DELIVERED, failed, type Attempt, type Integration, type Notification, timeLeft } from './types.js';

type Obj = Record<string, any>;

// nodemailer is loaded on the first email sent: an alert manager without email_configs (most of
// them) does not keep its modules (the SMTP client, the address parser, their helpers) in memory.
const SMTPConnection = lazyRequire<typeof SMTPConnectionType>('nodemailer/lib/smtp-connection');
const addressparser = lazyRequire<typeof addressparserType>('nodemailer/lib/addressparser');

/** What nodemailer keeps of the session and ctl reads (the EHLO lines, the socket state). */
interface ConnectionState {
  _ehloLines?: string[];
  _sendCommand(str: string, logStr?: string): void;
  secure: boolean;
}

/** Addresses in a header value (`Name <a@b>, c@d`): mail.ParseAddressList. */
function addresses(text: string): string[] {
  const out: string[] = [];
  const walk = (list: ReturnType<typeof addressparserType>) => {
    for (const a of list) {
      if ('group' in a && a.group) walk(a.group);
      else if ('address' in a && a.address) out.push(a.address);
    }
  };
  walk(addressparser()(text));
  return out;
}

/** The EHLO answer's extensions as Go's client keeps them: keyword -> parameters. */
function extensions(state: ConnectionState): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of state._ehloLines ?? []) {
    const [key, ...rest] = line.split(' ');
    out.set(key!, rest.join(' '));
  }
  return out;
}

/** 0.25's choice of mechanism from the server's list; undefined: no username (send without auth). */
function mechanism(c: Obj, offered: string[]): { method: string; user: string; pass: string } | string | undefined {
  if (!c.auth_username) return undefined;
  // As 0.25 reads it: the file first, its bytes as they are (a trailing newline is part of the password).
  const password = (): string | Error => {
    if (!c.auth_password_file) return c.auth_password ?? '';
    try {
      return readFileSync(c.auth_password_file, 'utf8');
    } catch (e) {
      return new Error(`could not read ${c.auth_password_file}: ${(e as Error).message}`);
    }
  };
  const errors: string[] = [];
  for (const m of offered) {
    if (m === 'CRAM-MD5') {
      if (!c.auth_secret) errors.push('missing secret for CRAM-MD5 auth mechanism');
      else return { method: m, user: c.auth_username, pass: c.auth_secret };
    } else if (m === 'PLAIN' || m === 'LOGIN') {
      const pass = password();
      if (pass instanceof Error) errors.push(pass.message);
      else if (!pass) errors.push(`missing password for ${m} auth mechanism`);
      else return { method: m, user: c.auth_username, pass };
    }
  }
  return errors.length > 0 ? errors.join('; ') : `unknown auth mechanism: ${offered.join(' ')}`;
}

const LOCALHOST = new Set(['localhost', '127.0.0.1', '::1']);

/**
 * AUTH PLAIN as Go's smtp.PlainAuth sends it: `identity NUL user NUL password` in the initial
 * response (nodemailer's own PLAIN has no identity), refused on a clear connection to another host.
 */
function plainAuth(identity: string, host: string, secure: () => boolean) {
  return async (ctx: { auth: { credentials: { user: string; pass: string } }; sendCommand(cmd: string): Promise<{ status: number; response: string }> }) => {
    if (!secure() && !LOCALHOST.has(host)) throw new Error('*smtp.plainAuth auth: unencrypted connection');
    const { user, pass } = ctx.auth.credentials;
    const r = await ctx.sendCommand(`AUTH PLAIN ${Buffer.from(`${identity}\u0000${user}\u0000${pass}`).toString('base64')}`);
    if (r.status !== 235) throw new Error(`*smtp.plainAuth auth: ${r.response}`);
  };
}

export function emailIntegration(c: Obj, index: number, egress: Egress): Integration {
  const headers: Record<string, string> = { ...(c.headers ?? {}) };
  if (!('Subject' in headers)) headers.Subject = '{{ template "email.default.subject" . }}';
  if (!('To' in headers)) headers.To = c.to;
  if (!('From' in headers)) headers.From = c.from;
  const smarthost = c.smarthost as { host: string; port: string };
  return {
    kind: 'email',
    index,
    sendResolved: c.send_resolved === true,
    async send(n: Notification): Promise<Attempt> {
      const t = expander(n);
      const rendered: Record<string, string> = {};
      for (const [k, v] of Object.entries(headers)) rendered[k] = t(v);
      const from = addresses(t(c.from));
      const to = addresses(t(c.to));
      // A part is written when its template is configured, even if it renders nothing.
      const text = c.text ? t(c.text) : undefined;
      const h = expander(n, { html: true });
      const html = c.html ? h(c.html) : undefined;
      if (h.error) return failed(h.error, false);
      if (t.error) return failed(t.error, false);
      if (from.length !== 1) return failed(`must be exactly one 'from' address (got: ${from.length})`, false);
      if (to.length === 0) return failed(`parse 'to' addresses: ${t(c.to)}`, false);
      const port = Number(smarthost.port);
      let tls;
      try {
        tls = { ...tlsOptions(c.tls_config) };
      } catch (e) {
        return failed(`parse TLS configuration: ${(e as Error).message}`, false);
      }
      let socket: Socket;
      try {
        socket = await egress.connect(smarthost.host, port);
      } catch (e) {
        return failed(`establish connection to server: ${(e as Error).message}`, true);
      }
      const requireTls = c.require_tls !== false;
      const implicitTls = port === 465;
      // The name the certificate must carry (SNI only for a name, never an address).
      const checkName = c.tls_config?.server_name || smarthost.host;
      if (!isIP(checkName)) tls.servername = checkName;
      else tls.checkServerIdentity = (_host, cert) => checkServerIdentity(checkName, cert);
      const SMTP = SMTPConnection();
      const conn = new SMTP({
        connection: socket,
        host: smarthost.host,
        port,
        secure: implicitTls,
        // STARTTLS when the server offers it and require_tls asks for it; a server that does not
        // offer it is refused below, after EHLO, without trying (as Go's client does).
        requireTLS: false,
        ignoreTLS: !requireTls || implicitTls,
        name: c.hello || 'localhost',
        socketTimeout: Math.max(1000, timeLeft(n)),
        greetingTimeout: Math.max(1000, timeLeft(n)),
        tls,
        customAuth: { PLAIN: plainAuth(c.auth_identity ?? '', smarthost.host, () => session.secure) },
      } as ConstructorParameters<typeof SMTPConnectionType>[0]);
      const session = conn as unknown as ConnectionState;
      // MAIL FROM as Go's client words it: BODY=8BITMIME and SMTPUTF8 whenever the server offers them
      // (nodemailer adds SMTPUTF8 only for non-ASCII addresses, and in the other order).
      const sendCommand = session._sendCommand.bind(conn);
      session._sendCommand = (str: string, logStr?: string) => {
        const m = /^MAIL FROM:(<[^>]*>)/.exec(str);
        if (!m) return sendCommand(str, logStr);
        const ext = extensions(session);
        return sendCommand(`MAIL FROM:${m[1]}${ext.has('8BITMIME') ? ' BODY=8BITMIME' : ''}${ext.has('SMTPUTF8') ? ' SMTPUTF8' : ''}`);
      };
      const step = <T>(fn: (cb: (err: Error | null, v?: T) => void) => void) =>
        new Promise<T>((resolve, reject) => fn((err, v) => (err ? reject(err) : resolve(v as T))));
      // Errors before the handshake ends (no STARTTLS where it is required, a TLS failure) come as
      // events, not through connect's callback.
      let connectFailed: ((e: Error) => void) | undefined;
      conn.on('error', (e: Error) => connectFailed?.(e));
      try {
        await new Promise<void>((resolve, reject) => {
          connectFailed = reject;
          conn.connect(() => resolve());
        });
        connectFailed = undefined;
        const ext = extensions(session);
        // A server without STARTTLS fails require_tls; 0.25 asks for it after TLS at once (port 465)
        // too, where servers do not offer it.
        if (requireTls && (implicitTls ? !ext.has('STARTTLS') : !session.secure)) {
          conn.quit();
          return failed(`'require_tls' is true (default) but "${smarthost.host}:${smarthost.port}" does not advertise the STARTTLS extension`, true);
        }
        if (c.auth_username && ext.has('AUTH')) {
          const auth = mechanism(c, ext.get('AUTH')!.split(' '));
          if (typeof auth === 'string') {
            conn.quit();
            return failed(`find auth mechanism: ${auth}`, true);
          }
          if (auth) await step<void>((cb) => conn.login(auth, (err) => cb(err ?? null)));
        }
        const raw = composeGoMail({ headers: rendered, text, html, hostname: hostname() });
        await step((cb) => conn.send({ from: from[0]!, to }, raw, cb));
        conn.quit();
        return DELIVERED;
      } catch (e) {
        conn.close();
        return failed((e as Error).message, true);
      }
    },
  };
}
