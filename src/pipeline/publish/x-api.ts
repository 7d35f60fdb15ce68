/**
 * The social platform: X API v2 with a bearer (OAuth 2 user) token. Base URL and token are
 * configuration; every call goes through egress with a timeout.
 *   POST {base}/tweets              {text, reply?, media?} → 201 {data: {id, text}}
 *   POST {base}/media/upload        multipart `media`, `media_category` → {data: {id}}
 *   GET  {base}/tweets?ids=…&tweet.fields=public_metrics → {data: [{id, public_metrics}], errors?}
 */
import { randomBytes } from 'node:crypto';
import type { Egress } from '../../egress/index.js';
import { FetchError, fetchText } from '../sources/http.js';

export class XApiError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    /** Worth trying again later (rate limit, server error, network). */
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'XApiError';
  }
}

export interface PublicMetrics {
  impressions: number;
  likes: number;
  retweets: number;
  replies: number;
}

export interface XApiOptions {
  baseUrl: string;
  token: string;
  timeoutMs: number;
  maxBytes: number;
}

export class XApiClient {
  constructor(
    private readonly egress: Egress,
    private readonly o: XApiOptions,
  ) {}

  async postTweet(text: string, opts: { replyTo?: string; mediaIds?: string[] } = {}): Promise<string> {
    const body: Record<string, unknown> = { text };
    if (opts.replyTo) body.reply = { in_reply_to_tweet_id: opts.replyTo };
    if (opts.mediaIds?.length) body.media = { media_ids: opts.mediaIds };
    const r = await this.call('POST', '/tweets', JSON.stringify(body), 'application/json');
    const id = (r as { data?: { id?: unknown } }).data?.id;
    if (typeof id !== 'string' || id === '') throw new XApiError('X API answered without a tweet id', null, false);
    return id;
  }

  async uploadImage(data: Buffer, mimeType: string, filename: string): Promise<string> {
    const boundary = `----ctl${randomBytes(12).toString('hex')}`;
    const head = (name: string, extra = '') => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${extra}\r\n`;
    const body = Buffer.concat([
      Buffer.from(`${head('media_category')}\r\ntweet_image\r\n`),
      Buffer.from(`${head('media', `; filename="${filename.replace(/"/g, '')}"`)}Content-Type: ${mimeType}\r\n\r\n`),
      data,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const r = await this.call('POST', '/media/upload', body, `multipart/form-data; boundary=${boundary}`);
    const d = (r as { data?: { id?: unknown }; media_id_string?: unknown }).data;
    const id = d?.id ?? (r as { media_id_string?: unknown }).media_id_string;
    if (typeof id !== 'string' || id === '') throw new XApiError('X API media upload answered without a media id', null, false);
    return id;
  }

  /** Public metrics of up to 100 tweets per call; ids X does not know are left out of the map. */
  async metrics(ids: string[]): Promise<{ metrics: Map<string, PublicMetrics>; errors: { id: string; detail: string }[] }> {
    const metrics = new Map<string, PublicMetrics>();
    const errors: { id: string; detail: string }[] = [];
    for (let i = 0; i < ids.length; i += 100) {
      const chunk = ids.slice(i, i + 100);
      const q = new URLSearchParams({ ids: chunk.join(','), 'tweet.fields': 'public_metrics' });
      const r = (await this.call('GET', `/tweets?${q}`)) as {
        data?: { id?: unknown; public_metrics?: Record<string, unknown> }[];
        errors?: { resource_id?: unknown; value?: unknown; detail?: unknown; title?: unknown }[];
      };
      for (const t of Array.isArray(r.data) ? r.data : []) {
        if (typeof t?.id !== 'string' || !t.public_metrics) continue;
        const m = t.public_metrics;
        metrics.set(t.id, {
          impressions: count(m.impression_count),
          likes: count(m.like_count),
          retweets: count(m.retweet_count),
          replies: count(m.reply_count),
        });
      }
      for (const e of Array.isArray(r.errors) ? r.errors : []) {
        const id = String(e?.resource_id ?? e?.value ?? '');
        errors.push({ id, detail: String(e?.detail ?? e?.title ?? 'unknown error') });
      }
    }
    return { metrics, errors };
  }

  private async call(method: string, path: string, body?: string | Buffer, contentType?: string): Promise<unknown> {
    let r;
    try {
      r = await fetchText(this.egress, `${this.o.baseUrl}${path}`, {
        method,
        body: body as string | Uint8Array | undefined,
        timeoutMs: this.o.timeoutMs,
        maxBytes: this.o.maxBytes,
        headers: {
          authorization: `Bearer ${this.o.token}`,
          accept: 'application/json',
          ...(contentType ? { 'content-type': contentType } : {}),
        },
      });
    } catch (e) {
      throw new XApiError(`X API unreachable: ${(e as FetchError).message}`, null, true);
    }
    let parsed: unknown = undefined;
    try {
      parsed = r.text ? JSON.parse(r.text) : undefined;
    } catch {
      /* handled below */
    }
    if (r.status < 200 || r.status > 299) {
      const p = parsed as { detail?: unknown; title?: unknown; errors?: { message?: unknown }[] } | undefined;
      const why = p?.detail ?? p?.title ?? p?.errors?.[0]?.message ?? (r.text.slice(0, 200) || 'no details');
      const retry = r.status === 429 || r.status >= 500;
      const after = r.status === 429 ? r.headers.get('x-rate-limit-reset') : null;
      throw new XApiError(`X API ${method} ${path.split('?')[0]} answered HTTP ${r.status}: ${String(why)}${after ? ` (rate limit resets at ${after})` : ''}`, r.status, retry);
    }
    if (parsed === undefined) throw new XApiError(`X API ${method} ${path.split('?')[0]} answered with a body that is not JSON`, r.status, true);
    return parsed;
  }
}

function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0;
}
