/**
 * email_configs: SMTP with nodemailer's connection and MIME composer, as 0.25 sends mail. The
 * smarthost is reached through the egress layer; port 465 is TLS from the start, otherwise
 * `require_tls` (default true) demands STARTTLS and `false` sends in the clear. Authentication is
 * attempted when `auth_username` is set and the server offers AUTH: the first mechanism the
 * server lists that has its credential (CRAM-MD5 with `auth_secret`, PLAIN with `auth_password`
 * and `auth_identity`, LOGIN with `auth_password`). Headers (Subject, To, From by default and any
 * configured) are templates; the body is multipart/alternative with the text and HTML parts that
 * are not empty; Date and Message-Id are set as Go's mailer sets them.
 */
import { randomInt } from 'node:crypto';
import { hostname } from 'node:os';
import type { Socket } from 'node:net';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import MailComposer from 'nodemailer/lib/mail-composer';
import addressparser from 'nodemailer/lib/addressparser';
import type { Egress } from '../../egress/index.js';
import { secretOf } from './http.js';
import { expander } from './template-text.js';
import { DELIVERED, failed, type Attempt, type Integration, type Notification, timeLeft } from './types.js';

type Obj = Record<string, any>;

/** Addresses in a header value (`Name <a@b>, c@d`): mail.ParseAddressList. */
function addresses(text: string): string[] {
  const out: string[] = [];
  const walk = (list: ReturnType<typeof addressparser>) => {
    for (const a of list) {
      if ('group' in a && a.group) walk(a.group);
      else if ('address' in a && a.address) out.push(a.address);
    }
  };
  walk(addressparser(text));
  return out;
}

/** time.RFC1123Z, as the Date header is written. */
function rfc1123z(d: Date): string {
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const p = (n: number) => String(n).padStart(2, '0');
  return `${days[d.getUTCDay()]}, ${p(d.getUTCDate())} ${months[d.getUTCMonth()]} ${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
}

/** 0.25's choice of mechanism from the server's list; undefined: no usable one (send without auth). */
function mechanism(c: Obj, offered: string[]): { method: string; user: string; pass: string } | string | undefined {
  if (!c.auth_username) return undefined;
  const password = () => secretOf(c.auth_password, c.auth_password_file);
  const errors: string[] = [];
  for (const m of offered) {
    if (m === 'CRAM-MD5') {
      if (!c.auth_secret) errors.push('missing secret for CRAM-MD5 auth mechanism');
      else return { method: m, user: c.auth_username, pass: c.auth_secret };
    } else if (m === 'PLAIN' || m === 'LOGIN') {
      const pass = password();
      if (!pass) errors.push(`missing password for ${m} auth mechanism`);
      else return { method: m, user: c.auth_username, pass };
    }
  }
  return errors.length > 0 ? errors.join('; ') : `unknown auth mechanism: ${offered.join(' ')}`;
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
      const text = t(c.text);
      // The HTML part is rendered as html/template renders it: every value escaped.
      const h = expander(n, { html: true });
      const html = h(c.html);
      if (h.error) return failed(h.error, false);
      if (t.error) return failed(t.error, false);
      if (from.length !== 1) return failed(`parse 'from' addresses: ${t(c.from)}`, false);
      if (to.length === 0) return failed(`parse 'to' addresses: ${t(c.to)}`, false);
      const port = Number(smarthost.port);
      let socket: Socket;
      try {
        socket = await egress.connect(smarthost.host, port);
      } catch (e) {
        return failed(`establish connection to server: ${(e as Error).message}`, true);
      }
      const requireTls = c.require_tls !== false;
      const conn = new SMTPConnection({
        connection: socket,
        host: smarthost.host,
        port,
        secure: port === 465,
        requireTLS: requireTls && port !== 465,
        ignoreTLS: !requireTls,
        name: c.hello || 'localhost',
        socketTimeout: Math.max(1000, timeLeft(n)),
        greetingTimeout: Math.max(1000, timeLeft(n)),
        tls: {
          servername: c.tls_config?.server_name || smarthost.host,
          rejectUnauthorized: !c.tls_config?.insecure_skip_verify,
        },
      } as ConstructorParameters<typeof SMTPConnection>[0]);
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
        const offered = ((conn as unknown as { _supportedAuth: string[] })._supportedAuth ?? []).map((m) => m.toUpperCase());
        if (c.auth_username && offered.length > 0) {
          const auth = mechanism(c, offered);
          if (typeof auth === 'string') return failed(`find auth mechanism: ${auth}`, false);
          if (auth) await step<void>((cb) => conn.login(auth, (err) => cb(err ?? null)));
        }
        const message = new MailComposer({
          headers: Object.entries(rendered).map(([key, value]) => ({ key, value })),
          date: new Date(),
          messageId: `<${randomInt(2 ** 47)}.${process.hrtime.bigint()}@${hostname()}>`,
          text: text || undefined,
          html: html || undefined,
          textEncoding: 'quoted-printable',
        } as ConstructorParameters<typeof MailComposer>[0]).compile();
        message.setHeader('Date', rfc1123z(new Date()));
        const raw = await step<Buffer>((cb) => message.build(cb));
        await step((cb) => conn.send({ from: from[0]!, to }, raw, cb));
        conn.quit();
        return DELIVERED;
      } catch (e) {
        conn.close();
        const msg = (e as Error).message;
        // 0.25's words for a server that cannot do what require_tls asks.
        if (requireTls && port !== 465 && /STARTTLS/i.test(msg) && /\b5\d\d\b/.test(msg)) {
          return failed(`'require_tls' is true (default) but "${smarthost.host}:${smarthost.port}" does not advertise the STARTTLS extension`, true);
        }
        return failed(msg, true);
      }
    },
  };
}
