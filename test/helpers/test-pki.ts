/**
 * A throwaway certificate authority for tests: a CA, server certificates it signs for the names a
 * test needs (DNS names and IP addresses), and client certificates, all ECDSA P-256, PEM-encoded.
 */
import { webcrypto } from 'node:crypto';
import 'reflect-metadata'; // @peculiar/x509 resolves its services through tsyringe, which needs it
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

export interface Issued {
  cert: string;
  key: string;
}

export interface TestCa {
  /** The CA certificate (PEM). */
  ca: string;
  /** A server certificate for these names (`127.0.0.1`, `::1` become IP SANs). */
  server(names: string[]): Promise<Issued>;
  /** A client certificate with this common name. */
  client(commonName: string): Promise<Issued>;
}

const pemKey = async (k: CryptoKey) =>
  `-----BEGIN PRIVATE KEY-----\n${Buffer.from(await webcrypto.subtle.exportKey('pkcs8', k)).toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END PRIVATE KEY-----\n`;

const keyPair = async () => (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;

export async function createTestCa(name = 'ctl test CA'): Promise<TestCa> {
  const caKeys = await keyPair();
  const validity = { notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 86_400_000) };
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: `CN=${name}`,
    ...validity,
    keys: caKeys,
    signingAlgorithm: alg,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true)],
  });
  let serial = 1;
  const issue = async (subject: string, extensions: x509.Extension[]): Promise<Issued> => {
    const keys = await keyPair();
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: (++serial).toString(16).padStart(2, '0'),
      subject,
      issuer: ca.subject,
      ...validity,
      signingKey: caKeys.privateKey,
      publicKey: keys.publicKey,
      signingAlgorithm: alg,
      extensions,
    });
    return { cert: cert.toString('pem') + '\n', key: await pemKey(keys.privateKey) };
  };
  return {
    ca: ca.toString('pem') + '\n',
    server: (names) =>
      issue(`CN=${names[0] ?? 'server'}`, [
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension(names.map((n) => (/^[\d.]+$|:/.test(n) ? { type: 'ip' as const, value: n } : { type: 'dns' as const, value: n }))),
      ]),
    client: (cn) => issue(`CN=${cn}`, [new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true), new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth])]),
  };
}
