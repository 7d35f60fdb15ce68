/**
 * Sealing OAuth tokens at rest: AES-256-GCM with a random 12-byte IV per value, the key (32 random
 * bytes) in DIR/secrets/gateway-oauth.key, mode 0600, made on first use. A sealed value is
 * `v1.<iv>.<tag>.<ciphertext>` in base64url; one that does not open (another key, tampering) throws.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export class Vault {
  private key: Buffer | undefined;

  constructor(private readonly secretsDir: string) {}

  get keyPath(): string {
    return join(this.secretsDir, 'gateway-oauth.key');
  }

  private keyBytes(): Buffer {
    if (this.key) return this.key;
    const path = this.keyPath;
    if (existsSync(path)) {
      const k = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
      if (k.length !== 32) throw new Error(`${path}: not a 32-byte key; tokens sealed with it cannot be opened`);
      return (this.key = k);
    }
    mkdirSync(this.secretsDir, { recursive: true, mode: 0o700 });
    const k = randomBytes(32);
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, `${k.toString('base64')}\n`, { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, path);
    return (this.key = k);
  }

  seal(value: unknown): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.keyBytes(), iv);
    const data = Buffer.concat([c.update(JSON.stringify(value), 'utf8'), c.final()]);
    return ['v1', iv.toString('base64url'), c.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
  }

  open<T>(sealed: string): T {
    const [v, iv, tag, data] = sealed.split('.');
    if (v !== 'v1' || !iv || !tag || data === undefined) throw new Error('not a sealed value');
    const d = createDecipheriv('aes-256-gcm', this.keyBytes(), Buffer.from(iv, 'base64url'));
    d.setAuthTag(Buffer.from(tag, 'base64url'));
    return JSON.parse(Buffer.concat([d.update(Buffer.from(data, 'base64url')), d.final()]).toString('utf8')) as T;
  }
}
