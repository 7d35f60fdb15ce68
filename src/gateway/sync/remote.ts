/**
 * Where the sync document lives, from ctl.yaml `gateway.sync`: an HTTP endpoint (`url`: GET reads it,
 * PUT writes it, `Authorization: Bearer <token>`), or an object in an S3-compatible bucket (`s3:
 * {endpoint, bucket, key, region, access_key_id, secret_access_key}`, requests signed with SigV4 by
 * @smithy/signature-v4, path-style addressing). Every call goes through the egress layer.
 */
import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import type { Egress } from '../../egress/index.js';

export type SyncRemote =
  | { kind: 'http'; url: string; token?: string }
  | { kind: 's3'; endpoint: string; bucket: string; key: string; region: string; accessKeyId: string; secretAccessKey: string };

export interface SyncConfig {
  remote: SyncRemote;
  includeSecrets: boolean;
}

const str = (o: Record<string, unknown>, k: string, env: NodeJS.ProcessEnv, where: string, required = true): string | undefined => {
  const v = typeof o[k] === 'string' ? (o[k] as string) : typeof o[`${k}_env`] === 'string' ? env[o[`${k}_env`] as string] : undefined;
  if (required && !v) throw new Error(`${where}.${k} (or ${k}_env) is required`);
  return v;
};

/** ctl.yaml `gateway.sync`; undefined when absent (the sync routes then say so). */
export function syncConfig(config: Record<string, unknown>, env: NodeJS.ProcessEnv): SyncConfig | undefined {
  const s = config.sync;
  if (s === undefined || s === null) return undefined;
  if (typeof s !== 'object' || Array.isArray(s)) throw new Error('ctl.yaml gateway.sync must be a mapping');
  const o = s as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!['url', 'token', 'token_env', 's3', 'include_secrets'].includes(k)) throw new Error(`ctl.yaml gateway.sync: unknown field ${k}`);
  const includeSecrets = o.include_secrets === true;
  if (o.url !== undefined && o.s3 !== undefined) throw new Error('ctl.yaml gateway.sync: give url or s3, not both');
  if (typeof o.url === 'string') {
    if (!/^https?:\/\/[^/]/.test(o.url)) throw new Error('ctl.yaml gateway.sync.url must be an http(s) URL');
    const token = str(o, 'token', env, 'ctl.yaml gateway.sync', false);
    return { remote: { kind: 'http', url: o.url, ...(token ? { token } : {}) }, includeSecrets };
  }
  if (typeof o.s3 === 'object' && o.s3 !== null) {
    const b = o.s3 as Record<string, unknown>;
    const w = 'ctl.yaml gateway.sync.s3';
    for (const k of Object.keys(b)) if (!['endpoint', 'bucket', 'key', 'region', 'access_key_id', 'access_key_id_env', 'secret_access_key', 'secret_access_key_env'].includes(k)) throw new Error(`${w}: unknown field ${k}`);
    const endpoint = str(b, 'endpoint', env, w)!;
    if (!/^https?:\/\/[^/]/.test(endpoint)) throw new Error(`${w}.endpoint must be an http(s) URL`);
    return {
      remote: { kind: 's3', endpoint: endpoint.replace(/\/+$/, ''), bucket: str(b, 'bucket', env, w)!, key: str(b, 'key', env, w)!, region: str(b, 'region', env, w, false) ?? 'us-east-1', accessKeyId: str(b, 'access_key_id', env, w)!, secretAccessKey: str(b, 'secret_access_key', env, w)! },
      includeSecrets,
    };
  }
  throw new Error('ctl.yaml gateway.sync needs url or s3');
}

/** SHA-256 for the signer (its Checksum interface over node:crypto). */
type Source = string | ArrayBuffer | ArrayBufferView;
const bytes = (d: Source): string | Uint8Array => (typeof d === 'string' ? d : d instanceof ArrayBuffer ? new Uint8Array(d) : new Uint8Array(d.buffer, d.byteOffset, d.byteLength));

class Sha256 {
  private readonly h;
  constructor(secret?: Source) {
    this.h = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: Source): void {
    this.h.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.h.digest());
  }
}

export function describeRemote(r: SyncRemote): string {
  return r.kind === 'http' ? r.url : `s3://${r.bucket}/${r.key} at ${r.endpoint}`;
}

async function s3Request(egress: Egress, r: Extract<SyncRemote, { kind: 's3' }>, method: 'GET' | 'PUT', body?: string): Promise<{ status: number; text: string; etag?: string }> {
  const url = new URL(`${r.endpoint}/${encodeURIComponent(r.bucket)}/${r.key.split('/').map(encodeURIComponent).join('/')}`);
  const payloadHash = createHash('sha256').update(body ?? '').digest('hex');
  const headers: Record<string, string> = { host: url.host, 'x-amz-content-sha256': payloadHash, ...(body !== undefined ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : {}) };
  const signer = new SignatureV4({ service: 's3', region: r.region, credentials: { accessKeyId: r.accessKeyId, secretAccessKey: r.secretAccessKey }, sha256: Sha256, uriEscapePath: false, applyChecksum: false });
  const signed = await signer.sign({ method, protocol: url.protocol, hostname: url.hostname, port: url.port ? Number(url.port) : undefined, path: url.pathname, headers, ...(body !== undefined ? { body } : {}) });
  const res = await egress.request(url, { method, headers: signed.headers, ...(body !== undefined ? { body } : {}), headersTimeout: 30_000, bodyTimeout: 30_000 });
  const etag = res.headers.etag;
  return { status: res.statusCode, text: await res.body.text(), ...(typeof etag === 'string' ? { etag } : {}) };
}

async function httpRequest(egress: Egress, r: Extract<SyncRemote, { kind: 'http' }>, method: 'GET' | 'PUT', body?: string): Promise<{ status: number; text: string; etag?: string }> {
  const res = await egress.request(r.url, {
    method,
    headers: { accept: 'application/json', ...(r.token ? { authorization: `Bearer ${r.token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body } : {}),
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  const etag = res.headers.etag;
  return { status: res.statusCode, text: await res.body.text(), ...(typeof etag === 'string' ? { etag } : {}) };
}

/** GET or PUT the document; throws an Error with the remote's status and a line of its answer. */
export async function remoteCall(egress: Egress, r: SyncRemote, method: 'GET' | 'PUT', body?: string): Promise<{ status: number; text: string; etag?: string }> {
  const res = r.kind === 's3' ? await s3Request(egress, r, method, body) : await httpRequest(egress, r, method, body);
  if (res.status === 404 && method === 'GET') return res;
  if (res.status < 200 || res.status > 299) throw new Error(`${describeRemote(r)} answered ${res.status}: ${res.text.slice(0, 200)}`);
  return res;
}
