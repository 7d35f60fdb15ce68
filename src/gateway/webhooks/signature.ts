/**
 * Standard Webhooks signing (standardwebhooks.com): the headers `webhook-id`, `webhook-timestamp`
 * (seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed by
 * the bytes of the secret after its `whsec_` prefix (base64).
 */
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

/** A secret as the API takes it: `whsec_` and base64 of 16 to 64 bytes. */
export function validSecret(s: string): boolean {
  if (!s.startsWith(SECRET_PREFIX)) return false;
  const b64 = s.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return false;
  const n = Buffer.from(b64, 'base64').length;
  return n >= 16 && n <= 64;
}

export function signatureHeaders(secret: string, id: string, timestampS: number, body: string): Record<string, string> {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  const sig = createHmac('sha256', key).update(`${id}.${timestampS}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampS), 'webhook-signature': `v1,${sig}` };
}

/** The secret as lists show it: its prefix and a few characters, then dots. */
export function maskSecret(s: string): string {
  return `${s.slice(0, SECRET_PREFIX.length + 4)}••••••••`;
}
