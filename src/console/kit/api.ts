/** Talking to the daemon from a console page: same origin, JSON, errors as ApiError with the API's message. */

/** `<meta name="ctl-NAME">` written by the server's shell (src/http/console.ts). */
export function meta(name: string): string {
  return document.querySelector<HTMLMetaElement>(`meta[name="ctl-${name}"]`)?.content ?? '';
}

/** The console's path prefix ('' at the root). */
export const BASE = typeof document === 'undefined' ? '' : meta('base');

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The message of an error body: a JSON string, `{message}`/`{error}`, else the text. */
function messageOf(text: string, status: number): string {
  try {
    const j = JSON.parse(text) as unknown;
    if (typeof j === 'string') return j;
    if (j && typeof j === 'object') {
      const o = j as Record<string, unknown>;
      const m = o.message ?? o.error ?? (o.error as Record<string, unknown> | undefined)?.message;
      if (typeof m === 'string') return m;
      if (m && typeof m === 'object' && typeof (m as Record<string, unknown>).message === 'string') return (m as { message: string }).message;
    }
  } catch {
    /* not JSON */
  }
  return text.trim() || `HTTP ${status}`;
}

export interface ApiInit extends Omit<RequestInit, 'body'> {
  /** Sent as a JSON body. */
  json?: unknown;
}

/** Fetch `path` (absolute on this origin) and parse JSON; an empty body gives undefined. */
export async function api<T = unknown>(path: string, init: ApiInit = {}): Promise<T> {
  const { json, headers, ...rest } = init;
  const h = new Headers(headers);
  h.set('Accept', 'application/json');
  let body: string | undefined;
  if (json !== undefined) {
    h.set('Content-Type', 'application/json');
    body = JSON.stringify(json);
  }
  const res = await fetch(path, { ...rest, headers: h, body, credentials: 'same-origin' });
  const text = await res.text();
  if (!res.ok) throw new ApiError(res.status, messageOf(text, res.status));
  return (text ? JSON.parse(text) : undefined) as T;
}

/** A query string from pairs (repeated keys kept), with the leading `?` when not empty. */
export function qs(pairs: Array<[string, string | number | boolean | undefined]>): string {
  const p = new URLSearchParams();
  for (const [k, v] of pairs) if (v !== undefined) p.append(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}
