/**
 * The upstream HTTP call through the egress dispatcher (the only way out), with timeouts, abort, and
 * every failure turned into an UpstreamError. Streams use undici's `request` (a Readable body);
 * whole answers use `dispatch` with a handler that collects the bytes (`upstreamBuffered`).
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

/** A multipart body (undici's FormData: file parts may be file-backed blobs, read as sent). */
export type UpstreamForm = import('undici').FormData;

/** A new multipart body. */
export function newUpstreamForm(): UpstreamForm {
  return new (undici().FormData)();
}

export interface UpstreamRequestInit {
  method?: 'GET' | 'POST';
  headers: Record<string, string>;
  /** A string, or a multipart form (undici encodes it, streaming file-backed parts). */
  body?: string | UpstreamForm;
  egress: Egress;
  /** The dispatcher of the connection's assigned outbound proxy; none: the egress layer's own. */
  dispatcher?: Dispatcher;
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
    const res = await (init.dispatcher ?? init.egress.dispatcher).request({
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

/** A whole answer: status, headers and the body as text. */
export interface UpstreamBufferedResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  /** The body; '' for a non-2xx answer whose body could not be read whole (too large, cut off). */
  readonly text: string;
}

/** The headers are parsed when first asked for: a success usually never needs them. */
class BufferedAnswer implements UpstreamBufferedResponse {
  private parsed: Record<string, string> | undefined;

  constructor(
    readonly status: number,
    private readonly raw: Buffer[],
    readonly text: string,
  ) {}

  get headers(): Record<string, string> {
    return (this.parsed ??= rawHeaders(this.raw));
  }
}

/** Max bytes read from a non-2xx body: only its message is wanted. */
export const MAX_ERROR_BODY_BYTES = 256 * 1024;

/**
 * undici's raw header list (name, value, name, value: Buffers) → lower-case names, repeats joined.
 * undici's own name lookup gives the common names as constants, without a string per name.
 */
function rawHeaders(raw: Buffer[]): Record<string, string> {
  const nameOf = undici().util.headerNameToString;
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = nameOf(raw[i]!);
    if (name === '__proto__') continue;
    const value = raw[i + 1]!.toString('latin1');
    const prev = out[name];
    out[name] = prev === undefined ? value : `${prev}, ${value}`;
  }
  return out;
}

type Settle = (r: UpstreamBufferedResponse | UpstreamError, ok: boolean) => void;

/**
 * undici's dispatch handler for a whole answer: what `request()` plus reading its body did (abort,
 * 1xx skipped, bounded body, errors named by the phase they happen in), without the Readable, its
 * events and the async resource around it. Undici's own timeouts (headers, body) end up in onError.
 */
class BufferedCall implements Dispatcher.DispatchHandler {
  private abortCall: ((err: Error) => void) | undefined;
  /** Why the caller aborted, kept until the request is connected (as `request()` does). */
  private reason: Error | undefined;
  private status = 0;
  /** The answer's raw headers, once they are in (undici keeps these buffers as they are). */
  private raw: Buffer[] | undefined;
  private chunks: Buffer[] = [];
  private size = 0;
  private limit = 0;
  private settled = false;
  private readonly onAbort = (): void => {
    this.reason = abortReason(this.signal!);
    this.abortCall?.(this.reason);
  };

  constructor(
    private readonly signal: AbortLike | undefined,
    private readonly what: string,
    private readonly maxBytes: number,
    private readonly settle: Settle,
  ) {
    if (!signal) return;
    if (signal.aborted) this.reason = abortReason(signal);
    else signal.addEventListener('abort', this.onAbort, { once: true });
  }

  onConnect(abort: (err?: Error) => void): void {
    if (this.reason) abort(this.reason);
    else this.abortCall = abort;
  }

  onHeaders(status: number, raw: Buffer[]): boolean {
    if (status < 200) return true; // informational: the answer is still to come
    this.status = status;
    this.raw = raw;
    this.limit = status > 299 ? MAX_ERROR_BODY_BYTES : this.maxBytes;
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.size += chunk.length;
    if (this.size <= this.limit) {
      this.chunks.push(chunk);
      return true;
    }
    // Too large: stop reading (the connection is dropped). An error answer still counts, without its text.
    if (this.status > 299) this.finish(new BufferedAnswer(this.status, this.raw!, ''), true);
    else this.finish(new UpstreamError('garbage', `upstream body larger than ${this.limit} bytes`, { headers: rawHeaders(this.raw!) }), false);
    this.abortCall?.(new Error('upstream body too large'));
    return false;
  }

  onComplete(): void {
    const c = this.chunks;
    const text = c.length === 0 ? '' : c.length === 1 ? c[0]!.toString('utf8') : Buffer.concat(c, this.size).toString('utf8');
    this.finish(new BufferedAnswer(this.status, this.raw!, text), true);
  }

  onError(err: Error): void {
    if (this.settled) return;
    // An error answer whose body broke off still counts (its status is what matters).
    if (this.raw && this.status > 299) this.finish(new BufferedAnswer(this.status, this.raw, ''), true);
    else this.finish(classifyTransportError(err, this.signal ?? NOT_ABORTED, this.raw ? 'upstream body' : this.what), false);
  }

  private finish(r: UpstreamBufferedResponse | UpstreamError, ok: boolean): void {
    if (this.settled) return;
    this.settled = true;
    this.chunks = [];
    this.signal?.removeEventListener('abort', this.onAbort);
    this.settle(r, ok);
  }
}

function abortReason(signal: AbortLike): Error {
  return (signal.reason as Error | undefined) ?? new (undici().errors.RequestAbortedError)();
}

/**
 * One upstream call whose whole answer is wanted (non-streaming chat, embeddings, model lists): resolves
 * with any status once the body is in (a non-2xx body bounded to MAX_ERROR_BODY_BYTES), rejects with
 * an UpstreamError (connection, timeout, abort, or a 2xx body larger than `maxBytes`).
 */
export function upstreamBuffered(url: string, init: UpstreamRequestInit, maxBytes = MAX_BODY_BYTES): Promise<UpstreamBufferedResponse> {
  const target = targetOf(url);
  return new Promise((resolve, reject) => {
    const handler = new BufferedCall(init.signal, target.what, maxBytes, (r, ok) => (ok ? resolve(r as UpstreamBufferedResponse) : reject(r)));
    try {
      (init.dispatcher ?? init.egress.dispatcher).dispatch(
        {
          origin: target.origin,
          path: target.path,
          method: init.method ?? 'POST',
          headers: init.headers,
          body: init.body,
          headersTimeout: init.headersTimeoutMs,
          bodyTimeout: init.bodyTimeoutMs,
        },
        handler,
      );
    } catch (err) {
      handler.onError(err as Error);
    }
  });
}

/** Parse a whole JSON answer or fail with `garbage`. */
export function parseJsonAnswer(res: UpstreamBufferedResponse): unknown {
  try {
    return JSON.parse(res.text) as unknown;
  } catch {
    // What the body was, never the body itself: an upstream's page is not echoed to the caller.
    throw new UpstreamError('garbage', `upstream answered ${res.status} with a body that is not JSON (${res.headers['content-type'] || 'no content type'}, ${Buffer.byteLength(res.text)} bytes)`, {
      status: 502,
      headers: res.headers,
    });
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
        // destroy() without an error still emits one (undici's AbortError): keep it from going uncaught.
        body.on('error', () => undefined);
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
    text = await readText(res, signal, MAX_ERROR_BODY_BYTES);
  } catch {
    // the status is what matters; a broken error body is not worth another error
  }
  return httpErrorOf(res.status, res.headers, text, now);
}

/** The UpstreamError of a non-2xx answer whose body (possibly '') is known. */
export function httpErrorOf(status: number, headers: Record<string, string>, text: string, now: number): UpstreamError {
  const res = { status, headers };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const info = errorInfo(parsed);
  // The provider's own error message when it sent one as JSON; a page that is not JSON is kept for
  // the classification rules (upstreamMessage) but not put in the message callers see.
  const message = info.message ?? (snippet(text) || `HTTP ${res.status}`);
  return new UpstreamError('http', `upstream returned ${res.status}: ${info.message ?? `HTTP ${res.status}`}`, {
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
