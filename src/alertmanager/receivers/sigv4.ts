/**
 * AWS Signature Version 4 for one request (the SNS receiver's Publish calls): the canonical
 * request, the string to sign and the derived key, as AWS documents them.
 */
import { createHash, createHmac } from 'node:crypto';

export interface SigV4Credentials {
  accessKey: string;
  secretKey: string;
  sessionToken?: string;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const hmac = (key: Buffer | string, s: string) => createHmac('sha256', key).update(s).digest();

/** RFC 3986 escaping, as SigV4 wants it in canonical query strings and paths. */
const uriEscape = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());

/**
 * The headers to add (X-Amz-Date, X-Amz-Content-Sha256 is not needed for SNS, X-Amz-Security-Token
 * with a session token, Authorization) for `method url` with `headers` and `body`, at `now`.
 */
export function signV4(
  method: string,
  url: URL,
  headers: Record<string, string>,
  body: string,
  region: string,
  service: string,
  creds: SigV4Credentials,
  now: Date = new Date(),
): Record<string, string> {
  const amzDate = now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const all: Record<string, string> = { ...headers, host: url.host, 'x-amz-date': amzDate };
  if (creds.sessionToken) all['x-amz-security-token'] = creds.sessionToken;
  const names = Object.keys(all)
    .map((k) => k.toLowerCase())
    .sort();
  const lower: Record<string, string> = {};
  for (const [k, v] of Object.entries(all)) lower[k.toLowerCase()] = v.trim().replace(/\s+/g, ' ');
  const query = [...url.searchParams.entries()]
    .map(([k, v]) => [uriEscape(k), uriEscape(v)])
    .sort((a, b) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : a[1]! < b[1]! ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const path = url.pathname.split('/').map((p) => uriEscape(decodeURIComponent(p))).join('/') || '/';
  const canonical = [method, path, query, names.map((n) => `${n}:${lower[n]}\n`).join(''), names.join(';'), sha256(body)].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${creds.secretKey}`, day), region), service), 'aws4_request');
  const signature = createHmac('sha256', key).update(toSign).digest('hex');
  const out: Record<string, string> = {
    'X-Amz-Date': amzDate,
    Authorization: `AWS4-HMAC-SHA256 Credential=${creds.accessKey}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`,
  };
  if (creds.sessionToken) out['X-Amz-Security-Token'] = creds.sessionToken;
  return out;
}
