/**
 * Join tokens as microcluster makes them: base64 of JSON `{secret, fingerprint, join_addresses}`,
 * where `fingerprint` pins the cluster certificate the joiner must find at one of the addresses.
 */
export interface JoinToken {
  secret: string;
  fingerprint: string;
  join_addresses: string[];
}

export function encodeToken(t: JoinToken): string {
  return Buffer.from(JSON.stringify(t)).toString('base64');
}

/** The token's fields, or an error message naming what is wrong. */
export function decodeToken(text: string): JoinToken | string {
  let o: unknown;
  try {
    o = JSON.parse(Buffer.from(text.trim(), 'base64').toString('utf8'));
  } catch {
    return 'Invalid join token: not base64-encoded JSON';
  }
  const t = o as Partial<JoinToken> | null;
  if (!t || typeof t !== 'object') return 'Invalid join token: not an object';
  if (typeof t.secret !== 'string' || !t.secret) return 'Invalid join token: no secret';
  if (typeof t.fingerprint !== 'string' || !/^[0-9a-f]{64}$/.test(t.fingerprint)) return 'Invalid join token: no certificate fingerprint';
  if (!Array.isArray(t.join_addresses) || t.join_addresses.length === 0 || t.join_addresses.some((a) => typeof a !== 'string')) {
    return 'Invalid join token: no join addresses';
  }
  return { secret: t.secret, fingerprint: t.fingerprint, join_addresses: t.join_addresses };
}
