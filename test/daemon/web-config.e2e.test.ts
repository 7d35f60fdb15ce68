import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { webcrypto } from 'node:crypto';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import bcrypt from 'bcryptjs';
import { loadWebConfig } from '../../src/daemon/web-config.js';
import { generateSelfSigned } from '../../src/daemon/certificates.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { alertmanagerBinary, amtoolBinary, startRealAlertmanager, type RealAlertmanager } from '../alertmanager/real-alertmanager.js';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);
const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const pemKey = async (k: CryptoKey) => `-----BEGIN PRIVATE KEY-----\n${Buffer.from(await webcrypto.subtle.exportKey('pkcs8', k)).toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END PRIVATE KEY-----\n`;

/** A CA and a client certificate it signed. */
async function clientPki(): Promise<{ ca: string; cert: string; key: string }> {
  const caKeys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=test CA',
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 86_400_000),
    keys: caKeys,
    signingAlgorithm: alg,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
  });
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: '02',
    subject: 'CN=client',
    issuer: ca.subject,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 86_400_000),
    signingKey: caKeys.privateKey,
    publicKey: keys.publicKey,
    signingAlgorithm: alg,
    extensions: [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth])],
  });
  return { ca: ca.toString('pem'), cert: cert.toString('pem'), key: await pemKey(keys.privateKey) };
}

const dir = mkdtempSync(join(tmpdir(), 'ctl-webcfg-'));
const HASH = bcrypt.hashSync('s3cret', 4);
const basic = (user: string, pw: string) => `Basic ${Buffer.from(`${user}:${pw}`).toString('base64')}`;

describe('web config files (Alertmanager format) on TCP listeners', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is read strictly, as exporter-toolkit reads it', () => {
    const w = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    expect(loadWebConfig(w('ok.yml', `basic_auth_users:\n  admin: ${HASH}\nhttp_server_config:\n  headers:\n    x-frame-options: deny\n`))).toMatchObject({ headers: { 'X-Frame-Options': 'deny' } });
    expect(() => loadWebConfig(w('unknown.yml', 'basic_auth_user: {}\n'))).toThrow(/field basic_auth_user not found in type web.Config/);
    expect(() => loadWebConfig(w('hash.yml', 'basic_auth_users:\n  admin: plain\n'))).toThrow(/basic_auth_users.admin is not a bcrypt hash/);
    expect(() => loadWebConfig(w('header.yml', 'http_server_config:\n  headers:\n    Server: x\n'))).toThrow(/can not be configured/);
    expect(() => loadWebConfig(w('tls.yml', 'tls_server_config:\n  cert_file: nope.crt\n  key_file: nope.key\n'))).toThrow(/cert_file nope.crt/);
    expect(() => loadWebConfig(w('auth.yml', 'tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: Sometimes\n'))).toThrow(/Invalid ClientAuth: Sometimes/);
  });

  describe('basic auth on the alert manager listener', () => {
    let d: TestDaemon;
    let base: string;
    beforeAll(async () => {
      writeFileSync(join(dir, 'web.yml'), `basic_auth_users:\n  admin: ${HASH}\n`);
      d = await startDaemon({ ctlYaml: { servers: { alertmanager: { 'web-config-file': join(dir, 'web.yml') } } } });
      base = await d.baseUrl('alertmanager');
    });
    afterAll(async () => {
      await d?.cleanup();
    });

    it('answers 401 without or with wrong credentials, as Alertmanager does, and serves with them', async () => {
      for (const headers of [{}, { authorization: basic('admin', 'wrong') }, { authorization: basic('nobody', 's3cret') }, { authorization: 'Bearer x' }]) {
        const r = await fetch(`${base}/api/v2/status`, { headers });
        expect(r.status).toBe(401);
        expect(r.headers.get('www-authenticate')).toBe('Basic');
        expect(await r.text()).toBe('Unauthorized\n');
      }
      const ok = await fetch(`${base}/api/v2/status`, { headers: { authorization: basic('admin', 's3cret') } });
      expect(ok.status).toBe(200);
      // The control socket is trusted by its file permissions, as before.
      expect((await d.request('alertmanager', 'GET', '/api/v2/status')).status).toBe(200);
    });

    it.skipIf(!amtoolBinary())('amtool works with the credentials in its URL', () => {
      const u = new URL(base);
      const r = spawnSync(amtoolBinary()!, ['--alertmanager.url', `http://admin:s3cret@${u.host}`, 'silence', 'query'], { encoding: 'utf8', timeout: 20_000 });
      expect(r.status, r.stderr).toBe(0);
      const bad = spawnSync(amtoolBinary()!, ['--alertmanager.url', `http://admin:nope@${u.host}`, 'silence', 'query'], { encoding: 'utf8', timeout: 20_000 });
      expect(bad.status).not.toBe(0);
    });

    it.skipIf(!alertmanagerBinary())('refuses exactly as the real Alertmanager 0.25 does with the same file', async () => {
      let real: RealAlertmanager | undefined;
      try {
        real = await startRealAlertmanager('route: {receiver: x}\nreceivers: [{name: x}]\n', [`--web.config.file=${join(dir, 'web.yml')}`], { authorization: basic('admin', 's3cret') });
        for (const headers of [{}, { authorization: basic('admin', 'wrong') }]) {
          const [a, b] = await Promise.all([fetch(`${real.url}/api/v2/status`, { headers }), fetch(`${base}/api/v2/status`, { headers })]);
          expect(b.status).toBe(a.status);
          for (const h of ['www-authenticate', 'content-type', 'x-content-type-options']) expect(b.headers.get(h), h).toBe(a.headers.get(h));
          expect(await b.text()).toBe(await a.text());
        }
      } finally {
        await real?.stop();
      }
    });

    it('a reload with a changed file takes the new users; a bad file keeps the old ones', async () => {
      const other = bcrypt.hashSync('n3w', 4);
      writeFileSync(join(dir, 'web.yml'), `basic_auth_users:\n  ops: ${other}\n`);
      let from = d.log.length;
      d.signal('SIGHUP');
      await d.waitLog(/configuration reloaded/, 5000, from);
      expect((await fetch(`${base}/api/v2/status`, { headers: { authorization: basic('ops', 'n3w') } })).status).toBe(200);
      expect((await fetch(`${base}/api/v2/status`, { headers: { authorization: basic('admin', 's3cret') } })).status).toBe(401);
      writeFileSync(join(dir, 'web.yml'), 'basic_auth_users: [nope]\n');
      from = d.log.length;
      d.signal('SIGHUP');
      await d.waitLog(/web config of alertmanager not reloaded; keeping the previous one/, 5000, from);
      expect((await fetch(`${base}/api/v2/status`, { headers: { authorization: basic('ops', 'n3w') } })).status).toBe(200);
    });
  });

  describe('TLS with client certificates on the node monitor listener', () => {
    let d: TestDaemon;
    let port: number;
    let client: { ca: string; cert: string; key: string };
    beforeAll(async () => {
      const server = await generateSelfSigned('localhost');
      client = await clientPki();
      writeFileSync(join(dir, 'srv.crt'), server.cert);
      writeFileSync(join(dir, 'srv.key'), server.key);
      writeFileSync(join(dir, 'ca.crt'), client.ca);
      writeFileSync(join(dir, 'tls.yml'), 'tls_server_config:\n  cert_file: srv.crt\n  key_file: srv.key\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n');
      d = await startDaemon({ ctlYaml: { servers: { nodes: { 'web-config-file': join(dir, 'tls.yml') } } } });
      port = Number(new URL(await d.baseUrl('nodes')).port);
    });
    afterAll(async () => {
      await d?.cleanup();
    });

    const post = (opts: { cert?: string; key?: string }) =>
      new Promise<number>((resolve, reject) => {
        const req = httpsRequest({ host: '127.0.0.1', port, path: '/api', method: 'POST', rejectUnauthorized: false, headers: { 'content-type': 'application/json' }, ...opts }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end('{"Method":"getdaemon"}');
      });

    it('serves HTTPS with the configured certificate and needs a client certificate signed by the CA', async () => {
      expect(await post({ cert: client.cert, key: client.key })).toBe(200);
      await expect(post({})).rejects.toThrow();
      const stranger = await generateSelfSigned('stranger');
      await expect(post({ cert: stranger.cert, key: stranger.key })).rejects.toThrow();
    });
  });
});
