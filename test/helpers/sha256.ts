/** SHA-256 (and HMAC) as @smithy/signature-v4 takes it, over node:crypto: tests check SigV4 signatures with the AWS SDK's own signer. */
import { createHash, createHmac } from 'node:crypto';

export class Sha256 {
  private readonly h;
  constructor(secret?: string | Uint8Array) {
    this.h = secret === undefined ? createHash('sha256') : createHmac('sha256', secret);
  }
  update(data: string | Uint8Array): void {
    this.h.update(data);
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.h.digest());
  }
}
