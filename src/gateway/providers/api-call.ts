/**
 * One call to a third-party JSON API (web fetch and search providers) through the egress layer:
 * the parsed answer, or an ApiFailure carrying the HTTP status (0 when nothing answered), the
 * provider's own message and its Retry-After.
 */
import type { Egress } from '../../egress/index.js';
import { upstreamRequest } from './http.js';

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** Retry-After in ms (seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfterMs(v: string | string[] | undefined, now: number): number | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  if (!s) return undefined;
  if (/^\d+$/.test(s.trim())) return Number(s.trim()) * 1000;
  const t = Date.parse(s);
  return Number.isFinite(t) ? Math.max(0, t - now) : undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A body read whole, at most `max` bytes (413 beyond). */
export async function readBounded(body: AsyncIterable<unknown> & { destroy?(): void }, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of body) {
    size += (c as Buffer).length;
    if (size > max) {
      body.destroy?.();
      throw new ApiFailure(413, `the answer is larger than ${max} bytes`);
    }
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export interface ApiCall {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  timeoutMs: number;
  maxBytes?: number;
  /** The provider's name for messages. */
  what: string;
}

export async function callJsonApi(egress: Egress, c: ApiCall): Promise<unknown> {
  let res;
  try {
    res = await upstreamRequest(c.url, {
      method: c.method,
      headers: { accept: 'application/json', ...(c.body !== undefined ? { 'content-type': 'application/json' } : {}), ...c.headers },
      ...(c.body !== undefined ? { body: JSON.stringify(c.body) } : {}),
      egress,
      headersTimeoutMs: c.timeoutMs,
      bodyTimeoutMs: c.timeoutMs,
    });
  } catch (e) {
    throw new ApiFailure(0, `${c.what}: ${(e as Error).message}`);
  }
  const text = await readBounded(res.body, c.maxBytes ?? 32 * 1024 * 1024).catch((e: unknown) => {
    throw e instanceof ApiFailure ? e : new ApiFailure(0, `${c.what}: the answer broke off (${(e as Error).message})`);
  });
  if (res.status < 200 || res.status >= 300) {
    let message = text.slice(0, 300);
    try {
      const j = JSON.parse(text) as Record<string, unknown>;
      const m = j.error ?? j.message ?? j.detail;
      if (typeof m === 'string') message = m;
      else if (isObject(m) && typeof m.message === 'string') message = m.message;
    } catch {
      // not JSON: the text itself
    }
    throw new ApiFailure(res.status, message || `${c.what} answered HTTP ${res.status}`, retryAfterMs(res.headers['retry-after'], Date.now()));
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiFailure(502, `${c.what} answered something that is not JSON`);
  }
}
