/**
 * Upstream failures, classified. The router (combos, fallback, cooldowns) reads `status`, `kind` and
 * `retryAfterMs`; `upstreamMessage` is the provider's own text (kept for the classification rules that
 * look at text, e.g. "rate limit", "context length").
 */
export type UpstreamErrorKind =
  /** TCP/TLS/DNS failure or refused by the egress policy. */
  | 'connection'
  /** No response headers / no first event / idle stream within the configured time. */
  | 'timeout'
  /** The upstream answered with a non-2xx status. */
  | 'http'
  /** 200 whose stream ended without any useful content. */
  | 'empty-stream'
  /** 200 non-streaming body without any content, tool call or reasoning. */
  | 'empty-response'
  /** The stream stopped before it finished (no finish reason / [DONE] / message_stop / done:true). */
  | 'truncated'
  /** The body or a stream event could not be parsed in the provider's format. */
  | 'garbage'
  /** The caller aborted (client disconnected). Not a provider failure. */
  | 'aborted'
  /** The provider kind cannot do this (e.g. embeddings on Anthropic). */
  | 'unsupported';

export class UpstreamError extends Error {
  readonly kind: UpstreamErrorKind;
  /** Upstream HTTP status for `http`; a synthetic one otherwise (502, 504, 499, 400). */
  readonly status: number;
  /** From Retry-After (seconds or HTTP date), retry-after-ms or x-ratelimit-reset*, when present. */
  readonly retryAfterMs?: number;
  /** The provider's error message, when it sent one. */
  readonly upstreamMessage?: string;
  /** The provider's error code/type string, when it sent one. */
  readonly upstreamCode?: string;
  /** Response headers of the failed call (lower-case names). */
  readonly headers?: Record<string, string>;

  constructor(
    kind: UpstreamErrorKind,
    message: string,
    opts: {
      status?: number;
      retryAfterMs?: number;
      upstreamMessage?: string;
      upstreamCode?: string;
      headers?: Record<string, string>;
      cause?: unknown;
    } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'UpstreamError';
    this.kind = kind;
    this.status = opts.status ?? defaultStatus(kind);
    this.retryAfterMs = opts.retryAfterMs;
    this.upstreamMessage = opts.upstreamMessage;
    this.upstreamCode = opts.upstreamCode;
    this.headers = opts.headers;
  }
}

function defaultStatus(kind: UpstreamErrorKind): number {
  switch (kind) {
    case 'timeout':
      return 504;
    case 'aborted':
      return 499;
    case 'unsupported':
      return 400;
    default:
      return 502;
  }
}

export function isUpstreamError(e: unknown): e is UpstreamError {
  return e instanceof UpstreamError;
}

/**
 * Milliseconds to wait according to the response headers: `retry-after-ms`, `Retry-After` (seconds or
 * an HTTP date), then `x-ratelimit-reset-requests`/`-tokens` style durations ("1s", "6m0s", "250ms").
 */
export function retryAfterFromHeaders(headers: Record<string, string>, nowMs: number = Date.now()): number | undefined {
  const ms = headers['retry-after-ms'];
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.round(Number(ms));
  const ra = headers['retry-after'];
  if (ra !== undefined) {
    const t = ra.trim();
    if (/^\d+(\.\d+)?$/.test(t)) return Math.round(Number(t) * 1000);
    const date = Date.parse(t);
    if (!Number.isNaN(date)) return Math.max(0, date - nowMs);
  }
  for (const name of ['x-ratelimit-reset-requests', 'x-ratelimit-reset-tokens', 'x-ratelimit-reset']) {
    const v = headers[name];
    if (v === undefined) continue;
    const d = parseDuration(v.trim(), nowMs);
    if (d !== undefined) return d;
  }
  return undefined;
}

function parseDuration(v: string, nowMs: number): number | undefined {
  if (/^\d+(\.\d+)?$/.test(v)) {
    const n = Number(v);
    // Epoch seconds or epoch ms (x-ratelimit-reset on some providers), else plain seconds.
    if (n > 1e12) return Math.max(0, n - nowMs);
    if (n > 1e9) return Math.max(0, n * 1000 - nowMs);
    return Math.round(n * 1000);
  }
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
  let total = 0;
  let matched = '';
  for (let m = re.exec(v); m; m = re.exec(v)) {
    const n = Number(m[1]);
    total += m[2] === 'ms' ? n : m[2] === 's' ? n * 1000 : m[2] === 'm' ? n * 60_000 : n * 3_600_000;
    matched += m[0];
  }
  return matched.length > 0 && matched.length === v.length ? Math.round(total) : undefined;
}
