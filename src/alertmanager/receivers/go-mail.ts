/**
 * The e-mail message exactly as 0.25 writes it with Go's standard library: each header line
 * `Name: value` with the value Q-encoded as mime.QEncoding does (only when it holds a byte outside
 * printable ASCII and tab, in encoded-words of at most 75 characters separated by a space, never
 * folded), then Message-Id (unless configured), Date (time.RFC1123Z, local time), `Content-Type:
 * multipart/alternative;  boundary=…` (two spaces, as 0.25 prints it), MIME-Version, and a
 * multipart body as mime/multipart writes it: a quoted-printable text part when `text` is
 * configured and an HTML part when `html` is, each present even when it renders empty.
 *
 * nodemailer's MIME composer cannot write this (it folds and encodes headers its own way, names
 * Message-ID differently, wraps quoted-printable at other points and leaves empty parts out), so
 * the message is built here and handed to its SMTP connection as it is.
 */
import { randomBytes } from 'node:crypto';

const HEX = '0123456789ABCDEF';
const hex = (b: number) => '=' + HEX[b >> 4]! + HEX[b & 15]!;

/** mime.QEncoding.Encode("utf-8", s). */
export function goQEncode(s: string): string {
  const needs = [...s].some((ch) => (ch < ' ' || ch > '~') && ch !== '\t');
  if (!needs) return s;
  // An encoded word holds 75 characters: `=?utf-8?q?` + at most 63 + `?=` (Go counts the prefix as
  // `=?UTF-8?q?`, 10 bytes either way); a character is never split across words.
  const maxContent = 75 - '=?UTF-8?q?'.length - '?='.length;
  const words: string[] = [];
  let word = '';
  let len = 0;
  for (const ch of s) {
    const bytes = Buffer.from(ch);
    const plain = bytes.length === 1 && bytes[0]! >= 0x20 && bytes[0]! <= 0x7e && ch !== '=' && ch !== '?' && ch !== '_';
    const encLen = plain ? 1 : 3 * bytes.length;
    if (len + encLen > maxContent) {
      words.push(word);
      word = '';
      len = 0;
    }
    if (ch === ' ') word += '_';
    else if (plain) word += ch;
    else for (const b of bytes) word += hex(b);
    len += encLen;
  }
  words.push(word);
  return words.map((w) => `=?utf-8?q?${w}?=`).join(' ');
}

/** mime/quotedprintable.Writer (text mode: CR, LF and CRLF end lines; lines of at most 76 with the soft break). */
export function goQuotedPrintable(text: string): string {
  const LINE_MAX = 76;
  let out = '';
  let line = '';
  let cr = false;
  const flush = () => {
    out += line;
    line = '';
  };
  const crlf = () => {
    line += '\r\n';
    flush();
  };
  const softBreak = () => {
    line += '=';
    crlf();
  };
  const encode = (b: number) => {
    if (LINE_MAX - 1 - line.length < 3) softBreak();
    line += hex(b);
  };
  const isSpace = (b: number) => b === 0x20 || b === 0x09;
  // A space or tab ending a line is encoded, as it would otherwise be lost in transport.
  const checkLastByte = () => {
    if (line.length === 0) return;
    const last = line.charCodeAt(line.length - 1);
    if (isSpace(last)) {
      line = line.slice(0, -1);
      encode(last);
    }
  };
  for (const b of Buffer.from(text, 'utf8')) {
    const literal = (b >= 0x21 && b <= 0x7e && b !== 0x3d) || isSpace(b) || b === 0x0a || b === 0x0d;
    if (!literal) {
      // As Go's writer: an encoded byte leaves the pending-CR state alone.
      encode(b);
      continue;
    }
    if (b === 0x0a || b === 0x0d) {
      if (cr && b === 0x0a) {
        cr = false;
        continue;
      }
      cr = b === 0x0d;
      checkLastByte();
      crlf();
      continue;
    }
    if (line.length === LINE_MAX - 1) softBreak();
    line += String.fromCharCode(b);
    cr = false;
  }
  checkLastByte();
  flush();
  return out;
}

/** time.RFC1123Z in the process's local time zone, as time.Now().Format writes it. */
export function rfc1123z(d: Date): string {
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const p = (n: number) => String(n).padStart(2, '0');
  const off = -d.getTimezoneOffset();
  const zone = `${off < 0 ? '-' : '+'}${p(Math.floor(Math.abs(off) / 60))}${p(Math.abs(off) % 60)}`;
  return `${days[d.getDay()]}, ${p(d.getDate())} ${months[d.getMonth()]} ${d.getFullYear()} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())} ${zone}`;
}

export interface GoMail {
  /** Rendered header values by name (Subject, To, From and the configured ones). */
  headers: Record<string, string>;
  /** The rendered text part, or undefined when `text` is not configured. */
  text?: string;
  /** The rendered HTML part, or undefined when `html` is not configured. */
  html?: string;
  hostname: string;
  now?: Date;
}

/** The whole message, CRLF line ends, as 0.25 writes it after DATA. */
export function composeGoMail(m: GoMail): Buffer {
  const now = m.now ?? new Date();
  // 0.25 writes the header map in Go's (random) map order; ctl writes it sorted by name.
  let head = '';
  for (const name of Object.keys(m.headers).sort()) head += `${name}: ${goQEncode(m.headers[name]!)}\r\n`;
  if (!('Message-Id' in m.headers)) {
    const unixNano = BigInt(now.getTime()) * 1_000_000n + (process.hrtime.bigint() % 1_000_000n);
    head += `Message-Id: <${unixNano}.${randomBytes(8).readBigUInt64BE()}@${m.hostname}>\r\n`;
  }
  const boundary = randomBytes(30).toString('hex');
  head += `Date: ${rfc1123z(now)}\r\n`;
  head += `Content-Type: multipart/alternative;  boundary=${boundary}\r\n`;
  head += 'MIME-Version: 1.0\r\n\r\n';
  let body = '';
  const part = (type: string, content: string) => {
    body += `${body === '' ? '' : '\r\n'}--${boundary}\r\n`;
    body += `Content-Transfer-Encoding: quoted-printable\r\nContent-Type: ${type}; charset=UTF-8\r\n\r\n`;
    body += goQuotedPrintable(content);
  };
  if (m.text !== undefined) part('text/plain', m.text);
  // The preferred alternative last (RFC 2046 5.1.4).
  if (m.html !== undefined) part('text/html', m.html);
  body += `\r\n--${boundary}--\r\n`;
  return Buffer.from(head + body, 'utf8');
}
