/**
 * Server-side fetch of user-supplied media URLs (embedding items, chat images for providers that need
 * inline data), under ctl's one SSRF policy for user URLs (src/egress/user-url.ts): https only (unless
 * the operator allows http), public or allow-listed addresses, pinned, redirects re-checked, one text
 * for every refusal; time and decoded size are bounded here. Providers never receive the original URL.
 */
import { GatewayError } from '../errors.js';
import type { Egress } from '../../egress/index.js';
import { fetchUserUrl, UrlRefusedError, type UserUrlResponse } from '../../egress/user-url.js';
import { toAbortSignal, type AbortLike } from '../abort.js';

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

export interface FetchedMedia {
  data: Buffer;
  mediaType: string;
}

/** Fetch a media URL under the SSRF policy (src/egress/user-url.ts); client-facing failures are GatewayError 'invalid' (a 400). */
const invalid = (message: string, opts?: { code: string }) => new GatewayError('invalid', message, opts);

export async function fetchMedia(url: string, egress: Egress, policy: MediaPolicy = {}, signal?: AbortLike): Promise<FetchedMedia> {
  const maxBytes = policy.maxBytes ?? MEDIA_ITEM_MAX_BYTES;
  const timeoutMs = policy.timeoutMs ?? 10_000;
  const deadline = AbortSignal.timeout(timeoutMs);
  const sig = signal ? AbortSignal.any([toAbortSignal(signal), deadline]) : deadline;
  let res: UserUrlResponse;
  try {
    res = await fetchUserUrl(egress, url, { allowHttp: policy.allowHttp, maxRedirects: policy.maxRedirects ?? 3, signal: sig, timeoutMs });
  } catch (err) {
    // A policy refusal says why and how to allow it; an unreachable URL reads the same whatever the cause (user-url.ts).
    if (err instanceof UrlRefusedError) throw invalid(`media ${err.message}`, { code: 'media_url_refused' });
    throw invalid('media URL could not be fetched: timed out');
  }
  try {
    if (res.status !== 200) throw invalid(`media URL answered HTTP ${res.status}`);
    const len = Number(res.headers['content-length']);
    if (Number.isFinite(len) && len > maxBytes) throw invalid(`media at URL is larger than ${maxBytes} bytes`);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of res.body) {
      size += (c as Buffer).length;
      if (size > maxBytes) throw invalid(`media at URL is larger than ${maxBytes} bytes`);
      chunks.push(c as Buffer);
    }
    const ct = String(res.headers['content-type'] ?? '').split(';')[0]!.trim();
    return { data: Buffer.concat(chunks), mediaType: ct || 'application/octet-stream' };
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    throw invalid('media URL could not be fetched: the answer broke off');
  } finally {
    res.body.on('error', () => undefined); // destroying an unread body reports an abort
    res.body.destroy();
  }
}
