/**
 * A small MIME reader for tests: header fields (unfolded, names lower-cased, RFC 2047 words
 * decoded) and the leaf parts of a multipart message with their transfer encoding undone.
 */
export interface ParsedMail {
  headers: Record<string, string>;
  parts: { type: string; body: string }[];
}

function decodeWords(v: string): string {
  return v.replace(/=\?([^?]+)\?([bBqQ])\?([^?]*)\?=\s*/g, (_, _cs: string, enc: string, text: string) =>
    enc.toUpperCase() === 'B' ? Buffer.from(text, 'base64').toString('utf8') : Buffer.from(text.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8'),
  );
}

function split(raw: string): { headers: Record<string, string>; body: string } {
  const i = raw.search(/\r?\n\r?\n/);
  const head = i === -1 ? raw : raw.slice(0, i);
  const body = i === -1 ? '' : raw.slice(i).replace(/^\r?\n\r?\n/, '');
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const c = line.indexOf(':');
    if (c > 0) headers[line.slice(0, c).trim().toLowerCase()] = decodeWords(line.slice(c + 1).trim());
  }
  return { headers, body };
}

function decodeBody(body: string, encoding: string | undefined): string {
  const e = (encoding ?? '7bit').toLowerCase();
  if (e === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (e === 'quoted-printable') {
    const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8').replace(/\r\n/g, '\n');
  }
  return body.replace(/\r\n/g, '\n');
}

export function parseMail(raw: string): ParsedMail {
  const top = split(raw);
  const parts: ParsedMail['parts'] = [];
  const walk = (headers: Record<string, string>, body: string) => {
    const type = headers['content-type'] ?? 'text/plain';
    const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
    if (/^multipart\//i.test(type) && boundary) {
      const chunks = body.split(`--${boundary}`).slice(1);
      for (const chunk of chunks) {
        if (chunk.startsWith('--')) break;
        const p = split(chunk.replace(/^\r?\n/, ''));
        walk(p.headers, p.body.replace(/\r?\n$/, ''));
      }
    } else parts.push({ type: type.split(';')[0]!.trim().toLowerCase(), body: decodeBody(body, headers['content-transfer-encoding']).replace(/\n$/, '') });
  };
  walk(top.headers, top.body);
  return { headers: top.headers, parts };
}
