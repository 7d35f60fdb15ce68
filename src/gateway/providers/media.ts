/**
 * Server-side fetch of user-supplied media URLs (embedding items, chat images for providers that need
 * inline data). SSRF policy: https only (unless the operator allows http), every DNS answer must be a
 * public address, the connection is pinned to the checked address (through the egress policy, so the
 * address map and loopback-only mode still apply), redirects are re-checked, and time and decoded
 * size are bounded. Providers never receive the original URL.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Agent } from 'undici';
import { lazyRequire } from '../../http/lazy.js';
import { badRequest, HttpError } from '../../http/errors.js';
import type { Egress } from '../../egress/index.js';
import { isPublicAddress } from '../../egress/public-address.js';
import { toAbortSignal, type AbortLike } from '../abort.js';

const undici = lazyRequire<typeof import('undici')>('undici');

export interface MediaPolicy {
  /** Allow plain http URLs (default false: public HTTPS only). */
  allowHttp?: boolean;
  /** Decoded bytes allowed for one item (default 8 MiB). */
  maxBytes?: number;
  /** Whole fetch time limit in ms (default 10 s). */
  timeoutMs?: number;
  /** Redirects followed, each re-checked (default 3). */
  maxRedirects?: number;
}

export const MEDIA_ITEM_MAX_BYTES = 8 * 1024 * 1024;

async function checkedAddress(host: string): Promise<string> {
  const h = host.replace(/^\[(.*)\]$/, '$1');
  if (isIP(h)) {
    if (!isPublicAddress(h)) throw badRequest(`media URL host ${host} is not a public address`);
    return h;
  }
  let addrs: { address: string }[];
  try {
    addrs = await lookup(h, { all: true });
  } catch {
    throw badRequest(`media URL host ${host} does not resolve`);
  }
  if (addrs.length === 0) throw badRequest(`media URL host ${host} does not resolve`);
  const bad = addrs.find((a) => !isPublicAddress(a.address));
  if (bad) throw badRequest(`media URL host ${host} resolves to a non-public address`);
  return addrs[0]!.address;
}

/** An agent that connects to `ip` (through egress: address map, loopback-only) whatever the URL says. */
function pinnedAgent(egress: Egress, ip: string, servername: string | undefined, timeoutMs: number): Agent {
  const tls = undici().buildConnector({ timeout: timeoutMs });
  return new (undici().Agent)({
    connections: 1,
    connect: (options, callback) => {
      const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
      egress.resolve(ip, port).then(
        (t) => tls({ ...options, hostname: t.host, port: String(t.port), servername }, callback),
        (err: Error) => callback(err, null),
      );
    },
  });
}

export interface FetchedMedia {
  data: Buffer;
  mediaType: string;
}

/** Fetch a media URL under the SSRF policy; client-facing failures are HttpError 400. */
export async function fetchMedia(url: string, egress: Egress, policy: MediaPolicy = {}, signal?: AbortLike): Promise<FetchedMedia> {
  const maxBytes = policy.maxBytes ?? MEDIA_ITEM_MAX_BYTES;
  const timeoutMs = policy.timeoutMs ?? 10_000;
  const deadline = AbortSignal.timeout(timeoutMs);
  const sig = signal ? AbortSignal.any([toAbortSignal(signal), deadline]) : deadline;
  let current = url;
  for (let hop = 0; hop <= (policy.maxRedirects ?? 3); hop++) {
    let u: URL;
    try {
      u = new URL(current);
    } catch {
      throw badRequest(`media URL ${JSON.stringify(current)} is not a valid URL`);
    }
    if (u.protocol !== 'https:' && !(policy.allowHttp && u.protocol === 'http:')) throw badRequest('media URLs must be public https URLs');
    if (u.username || u.password) throw badRequest('media URLs must not carry credentials');
    const ip = await checkedAddress(u.hostname);
    const agent = pinnedAgent(egress, ip, isIP(u.hostname.replace(/^\[(.*)\]$/, '$1')) ? undefined : u.hostname, timeoutMs);
    try {
      const res = await undici().request(u, { method: 'GET', dispatcher: agent, signal: sig, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
      if (res.statusCode >= 300 && res.statusCode < 400 && res.headers.location) {
        await res.body.dump();
        current = new URL(String(res.headers.location), u).toString();
        continue;
      }
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw badRequest(`media URL answered HTTP ${res.statusCode}`);
      }
      const len = Number(res.headers['content-length']);
      if (Number.isFinite(len) && len > maxBytes) {
        res.body.destroy();
        throw badRequest(`media at URL is larger than ${maxBytes} bytes`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const c of res.body) {
        size += (c as Buffer).length;
        if (size > maxBytes) {
          res.body.destroy();
          throw badRequest(`media at URL is larger than ${maxBytes} bytes`);
        }
        chunks.push(c as Buffer);
      }
      const ct = String(res.headers['content-type'] ?? '').split(';')[0]!.trim();
      return { data: Buffer.concat(chunks), mediaType: ct || 'application/octet-stream' };
    } catch (err) {
      if (err instanceof HttpError) throw err;
      throw badRequest(`media URL could not be fetched: ${(err as Error).message}`);
    } finally {
      void agent.close();
    }
  }
  throw badRequest('media URL redirected too many times');
}
