/**
 * Who a member is: its name (a host-name-like label, as microcluster wants) and its certificate,
 * known by the SHA-256 of the DER bytes in lowercase hex (microcluster's fingerprint).
 */
import { createHash, X509Certificate } from 'node:crypto';

const NAME = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

export function isMemberName(name: unknown): name is string {
  return typeof name === 'string' && NAME.test(name);
}

/** Fingerprint of a PEM certificate or of DER bytes. */
export function fingerprint(cert: string | Buffer): string {
  const der = typeof cert === 'string' ? new X509Certificate(cert).raw : cert;
  return createHash('sha256').update(der).digest('hex');
}

/** True when `pem` holds a certificate Node can read. */
export function isCertificate(pem: unknown): pem is string {
  if (typeof pem !== 'string' || !pem.includes('BEGIN CERTIFICATE')) return false;
  try {
    new X509Certificate(pem);
    return true;
  } catch {
    return false;
  }
}
