import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { webcrypto } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import 'reflect-metadata'; // @peculiar/x509 resolves its services through tsyringe, which needs it
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export interface KeyPair {
  cert: string;
  key: string;
}

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

/** A self-signed ECDSA P-384 certificate (as microcluster/LXD generate), valid ten years. */
export async function generateSelfSigned(commonName: string): Promise<KeyPair> {
  const alg = { name: 'ECDSA', namedCurve: 'P-384', hash: 'SHA-384' } as const;
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
  const now = new Date();
  const host = hostname();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(16))).toString('hex').replace(/^[89a-f]/, '1'),
    name: `CN=${commonName.replace(/[,=+<>#;\\"]/g, '_')}, O=ctl`,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + 10 * 365 * 24 * 3600 * 1000),
    keys,
    signingAlgorithm: alg,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
      new x509.SubjectAlternativeNameExtension([
        { type: 'dns', value: host },
        { type: 'dns', value: 'localhost' },
        { type: 'ip', value: '127.0.0.1' },
        { type: 'ip', value: '::1' },
      ]),
    ],
  });
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return { cert: cert.toString('pem') + '\n', key: pem('PRIVATE KEY', pkcs8) };
}

/**
 * The key pair for a listener: an operator-placed `certificates/<name>.crt/.key` is used as is;
 * otherwise, when `generate` is set (dedicated certificate), one is created and written there.
 * Returns null when the listener should serve plain HTTP.
 */
export async function listenerCertificate(certDir: string, name: string, generate: boolean): Promise<KeyPair | null> {
  const crt = join(certDir, `${name}.crt`);
  const key = join(certDir, `${name}.key`);
  if (existsSync(crt) && existsSync(key)) return { cert: readFileSync(crt, 'utf8'), key: readFileSync(key, 'utf8') };
  if (!generate) return null;
  const pair = await generateSelfSigned(name);
  writeFileSync(key, pair.key, { mode: 0o600 });
  writeFileSync(crt, pair.cert, { mode: 0o644 });
  return pair;
}
