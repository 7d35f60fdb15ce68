/**
 * The upstream HTTP call: undici `request` through the egress dispatcher (the only way out), with
 * timeouts, abort, and every failure turned into an UpstreamError.
 */
import type { Dispatcher } from 'undici';
import { lazyRequire } from '../../http/lazy.js';
import { EgressRefusedError, type Egress } from '../../egress/index.js';
import { UpstreamError, retryAfterFromHeaders } from './errors.js';
import type { AbortLike } from '../abort.js';

// undici loads with the first upstream call, not at daemon start.
const undici = lazyRequire<typeof import('undici')>('undici');

export interface UpstreamHttpResponse {
  status: number;
  headers: Record<string, string>;
  body: Dispatcher.ResponseData['body'];
}

export interface UpstreamRequestInit {
  method?: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  egress: Egress;
  /** Aborts the call; none: it runs until its timeouts. */
  signal?: AbortLike;
  /** Time allowed for the response headers (ms). */
  headersTimeoutMs: number;
  /** Time allowed between body chunks (ms). */
  bodyTimeoutMs: number;
}

/** Max bytes read from a non-streaming upstream body (answers and error bodies). */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;

/** undici's header object (names already lower-cased) with repeated headers joined. */
function flatHeaders(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in h) {
    const v = h[k];
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** Where a URL goes, as undici's dispatchers take it; parsed once per distinct URL (it is per provider). */
interface RequestTarget {
  origin: string;
  path: string;
  /** `upstream <host>`, for error messages. */
  what: string;
}

const targets = new Map<string, RequestTarget>();

function targetOf(url: string): RequestTarget {
  let t = targets.get(url);
  if (t) return t;
  // The same split undici.request(url) makes: origin, then pathname with the query.
  const u = new URL(url);
  t = { origin: u.origin, path: u.search ? `${u.pathname}${u.search}` : u.pathname, what: `upstream ${u.host}` };
  if (targets.size >= 1000) targets.clear();
  targets.set(url, t);
  return t;
}

/** The signal of a call that has none: never aborts. */
export const NOT_ABORTED: AbortLike = { aborted: false, reason: undefined, addEventListener() {}, removeEventListener() {} };

/** Map a thrown error of the HTTP layer to an UpstreamError (timeouts, refusals, aborts). */
export function classifyTransportError(err: unknown, signal: AbortLike, what: string): UpstreamError {
  if (err instanceof UpstreamError) return err;
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    if (reason instanceof UpstreamError) return reason;
    return new UpstreamError('aborted', `${what}: request aborted`, { cause: err });
  }
  if (err instanceof EgressRefusedError) return new UpstreamError('connection', `${what}: ${err.message}`, { cause: err });
  if (err instanceof undici().errors.HeadersTimeoutError || err instanceof undici().errors.BodyTimeoutError || err instanceof undici().errors.ConnectTimeoutError) {
    return new UpstreamError('timeout', `${what}: ${err.message}`, { cause: err });
  }
  if (err instanceof TypeError || err instanceof SyntaxError || err instanceof RangeError) {
    // A decoder met a shape it did not expect.
    return new UpstreamError('garbage', `${what}: malformed upstream data (${err.message})`, { cause: err });
  }
  const msg = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: string } | null)?.code;
  return new UpstreamError('connection', `${what}: ${code ? `${code} ` : ''}${msg}`, { cause: err });
}

export async function upstreamRequest(url: string, init: UpstreamRequestInit): Promise<UpstreamHttpResponse> {
  const target = targetOf(url);
  try {
    // The dispatcher's own request(): undici.request(url) would parse the URL again on every call.
    const res = await init.egress.dispatcher.request({
      origin: target.origin,
      path: target.path,
      method: init.method ?? 'POST',
      headers: init.headers,
      body: init.body,
      // undici takes any object with aborted/reason/addEventListener/removeEventListener (AbortLike).
      signal: init.signal as AbortSignal | undefined,
      headersTimeout: init.headersTimeoutMs,
      bodyTimeout: init.bodyTimeoutMs,
    });
    return { status: res.statusCode, headers: flatHeaders(res.headers), body: res.body };
  } catch (err) {
    throw classifyTransportError(err, init.signal ?? NOT_ABORTED, target.what);
  }
}

/** Read a whole body as text, bounded. Plain 'data' events: cheaper than an async iterator per answer. */
export function readText(res: UpstreamHttpResponse, signal: AbortLike, limit = MAX_BODY_BYTES): Promise<string> {
  return new Promise((resolve, reject) => {
    const body = res.body;
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      body.off('close', onClose);
    };
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        cleanup();
        body.destroy();
        reject(new UpstreamError('garbage', `upstream body larger than ${limit} bytes`, { headers: res.headers }));
        return;
      }
      chunks.push(c);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    };
    const onError = (err: unknown) => {
      cleanup();
      reject(classifyTransportError(err, signal, 'upstream body'));
    };
    // Destroyed without an error (no 'end'): the body was cut off.
    const onClose = () => onError(Object.assign(new Error('upstream body closed before its end'), { code: 'UND_ERR_SOCKET' }));
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('error', onError);
    body.on('close', onClose);
  });
}

/** Parse a JSON body or fail with `garbage`. */
export async function readJson(res: UpstreamHttpResponse, signal: AbortLike): Promise<unknown> {
  const text = await readText(res, signal);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UpstreamError('garbage', `upstream answered ${res.status} with a body that is not JSON: ${snippet(text)}`, {
      status: 502,
      headers: res.headers,
    });
  }
}

export function snippet(text: string, max = 200): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
}

/**
 * Extract `message` and `code` from the error bodies providers send: OpenAI {error:{message,type,code}},
 * Anthropic {type:'error',error:{type,message}}, Gemini {error:{code,message,status}}, Ollama {error}.
 */
export function errorInfo(body: unknown): { message?: string; code?: string } {
  if (typeof body !== 'object' || body === null) return {};
  const b = body as Record<string, unknown>;
  const e = b.error;
  if (typeof e === 'string') return { message: e };
  if (typeof e === 'object' && e !== null) {
    const eo = e as Record<string, unknown>;
    const message = typeof eo.message === 'string' ? eo.message : undefined;
    const code = [eo.type, eo.status, eo.code].find((x) => typeof x === 'string') as string | undefined;
    return { message, code: code ?? (typeof eo.code === 'number' ? String(eo.code) : undefined) };
  }
  if (typeof b.message === 'string') return { message: b.message };
  if (typeof b.detail === 'string') return { message: b.detail };
  return {};
}

/** A non-2xx answer → UpstreamError('http') with the provider's message and Retry-After kept. */
export async function httpError(res: UpstreamHttpResponse, signal: AbortLike, now: number): Promise<UpstreamError> {
  let text = '';
  try {
    text = await readText(res, signal, 256 * 1024);
  } catch {
    // the status is what matters; a broken error body is not worth another error
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const info = errorInfo(parsed);
  const message = info.message ?? (snippet(text) || `HTTP ${res.status}`);
  return new UpstreamError('http', `upstream returned ${res.status}: ${message}`, {
    status: res.status,
    retryAfterMs: retryAfterFromHeaders(res.headers, now),
    upstreamMessage: message,
    upstreamCode: info.code,
    headers: res.headers,
  });
}

const joined = new Map<string, Map<string, string>>();

/**
 * Join a base URL and a path without doubling slashes. Remembered per base and path: a provider's
 * URL is then the same string on every call (no regex, no concatenation, its hash already known).
 */
export function joinUrl(base: string, path: string): string {
  let byPath = joined.get(base);
  const known = byPath?.get(path);
  if (known !== undefined) return known;
  const url = base.replace(/\/+$/, '') + (path.startsWith('/') ? path : `/${path}`);
  if (!byPath) {
    if (joined.size >= 1000) joined.clear();
    joined.set(base, (byPath = new Map()));
  }
  if (byPath.size < 100) byPath.set(path, url);
  return url;
}

/** An AbortController that follows the caller's signal; `dispose` detaches it. */
export function linkedController(parent?: AbortLike): { controller: AbortController; dispose(): void } {
  const controller = new AbortController();
  if (!parent) return { controller, dispose() {} };
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { controller, dispose() {} };
  }
  const onAbort = () => controller.abort(parent.reason);
  parent.addEventListener('abort', onAbort, { once: true });
  return { controller, dispose: () => parent.removeEventListener('abort', onAbort) };
}
