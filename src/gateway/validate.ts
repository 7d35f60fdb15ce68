/** Small checks shared by gateway.yaml loading and the management API. */
import { randomBytes } from 'node:crypto';

const PROVIDER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,127}$/;

/** Provider ids are the `<provider>` of `<provider>/<model>`: no slash, short, URL-safe. */
export function checkProviderId(id: string, where = 'id'): void {
  if (!PROVIDER_ID.test(id)) {
    throw new Error(`${where}: provider id must be 1-64 letters, digits, '.', '_' or '-' and start with a letter or digit`);
  }
}

/** Combo names and aliases are bare model ids: no slash. */
export function checkComboName(name: string, where = 'name'): void {
  if (!NAME.test(name)) {
    throw new Error(`${where}: must be 1-128 letters, digits or . _ : @ + - (no '/'), starting with a letter or digit`);
  }
}

/** A model reference: `<provider>/<model>` or a bare alias / combo name; no control characters. */
export function checkModelRef(ref: string, where = 'model'): void {
  if (ref.length === 0 || ref.length > 512) throw new Error(`${where}: model id must be 1-512 characters`);
  if (/[\u0000-\u001f\u007f]/.test(ref)) throw new Error(`${where}: model id contains control characters`);
  if (ref.startsWith('/') || ref.endsWith('/')) throw new Error(`${where}: model id ${JSON.stringify(ref)} is malformed`);
}

/** http(s) base URL without a trailing slash. */
export function normalizeBaseUrl(raw: string, where = 'base_url'): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new Error(`${where}: base_url ${JSON.stringify(raw)} is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`${where}: base_url must be http or https`);
  if (u.username || u.password) throw new Error(`${where}: put credentials in api_key, not in base_url`);
  if (u.search || u.hash) throw new Error(`${where}: base_url must not have a query or fragment`);
  return u.toString().replace(/\/+$/, '');
}

/** A new gateway API key: `sk-gw-` + 32 URL-safe random characters (192 bits). */
export function generateKey(): string {
  return `sk-gw-${randomBytes(24).toString('base64url')}`;
}

/** The recognisable start of a raw key, e.g. `sk-gw-ab12`. */
export function keyPrefix(raw: string): string {
  return raw.slice(0, Math.min(10, Math.max(0, raw.length - 6)));
}

/** A secret for display: never whole. Long secrets keep 4 characters at each end. */
export function maskSecret(secret: string): string {
  if (!secret) return '';
  if (secret.length < 12) return '•'.repeat(8);
  return `${secret.slice(0, 4)}…${secret.slice(-4)}`;
}

/** Glob (`*` any run, `?` one character) to an anchored RE2-compatible pattern. */
export function globToRegexSource(glob: string): string {
  let out = '^';
  for (const ch of glob) {
    if (ch === '*') out += '.*';
    else if (ch === '?') out += '.';
    else out += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return out + '$';
}
