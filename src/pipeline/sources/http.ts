/**
 * Outbound GETs for sources and the social platform: always through egress, with a timeout,
 * a body size cap and one clear error message per failure.
 */
import type { Egress } from '../../egress/index.js';
import { fetchUserUrl, UrlRefusedError, type UserUrlResponse } from '../../egress/user-url.js';

export class FetchError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'FetchError';
  }
}

export interface FetchOptions {
  timeoutMs: number;
  maxBytes: number;
  /** Outer cancellation (the source's overall deadline). */
  signal?: AbortSignal;
  headers?: Record<string, string>;
  method?: string;
  body?: string | Uint8Array | FormData;
}

export interface FetchedText {
  status: number;
  headers: Headers;
  text: string;
}

/** Fetch `url` and read its body as text; non-2xx statuses are returned, not thrown. */
export async function fetchText(egress: Egress, url: string, opts: FetchOptions): Promise<FetchedText> {
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
  try {
    const res = await egress.fetch(url, {
      method: opts.method ?? 'GET',
      headers: { 'user-agent': 'ctl-pipeline', ...opts.headers },
      body: opts.body as never,
      signal,
      redirect: 'follow',
    });
    const declared = Number(res.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > opts.maxBytes) {
      await res.body?.cancel().catch(() => undefined);
      throw new FetchError(`response larger than ${opts.maxBytes} bytes`);
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    if (res.body) {
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > opts.maxBytes) {
          await reader.cancel().catch(() => undefined);
          throw new FetchError(`response larger than ${opts.maxBytes} bytes`);
        }
        chunks.push(value);
      }
    }
    return { status: res.status, headers: res.headers as unknown as Headers, text: Buffer.concat(chunks).toString('utf8') };
  } catch (e) {
    if (e instanceof FetchError) throw e;
    if (timeout.aborted) throw new FetchError(`timed out after ${opts.timeoutMs} ms`);
    if (opts.signal?.aborted) throw new FetchError('source deadline exceeded');
    throw new FetchError(describeNetworkError(e));
  }
}

/**
 * Fetch a URL a user gave (a feed source) under ctl's SSRF policy (src/egress/user-url.ts): public
 * or allow-listed destinations only, redirects checked again, one text for every refusal.
 */
export async function fetchUserText(egress: Egress, url: string, opts: FetchOptions): Promise<FetchedText> {
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
  let res: UserUrlResponse;
  try {
    res = await fetchUserUrl(egress, url, { allowHttp: true, headers: { 'user-agent': 'ctl-pipeline', ...opts.headers }, signal, timeoutMs: opts.timeoutMs });
  } catch (e) {
    if (e instanceof UrlRefusedError) throw new FetchError(e.message);
    if (timeout.aborted) throw new FetchError(`timed out after ${opts.timeoutMs} ms`);
    if (opts.signal?.aborted) throw new FetchError('source deadline exceeded');
    throw new FetchError(describeNetworkError(e));
  }
  res.body.on('error', () => undefined);
  try {
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > opts.maxBytes) throw new FetchError(`response larger than ${opts.maxBytes} bytes`);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of res.body) {
      size += (c as Buffer).length;
      if (size > opts.maxBytes) throw new FetchError(`response larger than ${opts.maxBytes} bytes`);
      chunks.push(c as Buffer);
    }
    const headers = new Headers();
    for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
    return { status: res.status, headers, text: Buffer.concat(chunks).toString('utf8') };
  } catch (e) {
    if (e instanceof FetchError) throw e;
    if (timeout.aborted) throw new FetchError(`timed out after ${opts.timeoutMs} ms`);
    if (opts.signal?.aborted) throw new FetchError('source deadline exceeded');
    throw new FetchError(describeNetworkError(e));
  } finally {
    res.body.destroy();
  }
}

/** Fetch and parse JSON from a 2xx answer; anything else is a FetchError. */
export async function fetchJson(egress: Egress, url: string, opts: FetchOptions): Promise<unknown> {
  const r = await fetchText(egress, url, { ...opts, headers: { accept: 'application/json', ...opts.headers } });
  if (r.status < 200 || r.status > 299) throw new FetchError(`HTTP ${r.status} from ${redact(url)}`, r.status);
  try {
    return JSON.parse(r.text);
  } catch {
    throw new FetchError(`invalid JSON from ${redact(url)}`);
  }
}

function describeNetworkError(e: unknown): string {
  const err = e as { message?: string; cause?: { code?: string; message?: string } };
  const cause = err.cause;
  if (cause?.code) return `${cause.code}${cause.message ? `: ${cause.message}` : ''}`;
  return cause?.message ?? err.message ?? String(e);
}

/** A URL without query and credentials, for error messages. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(bad url)';
  }
}
