/** The request/response cycle every provider kind shares; kinds supply URL, headers, body and decoders. */
import { hasLongArray, stringifyInPieces } from '../../http/json-pieces.js';
import { ownTurn } from '../../http/turns.js';
import type { CanonicalChunk, CanonicalResponse } from '../canonical.js';
import { UpstreamError } from './errors.js';
import { httpError, httpErrorOf, linkedController, NOT_ABORTED, parseJsonAnswer, readText, upstreamBuffered, upstreamRequest, type UpstreamBufferedResponse, type UpstreamForm, type UpstreamHttpResponse } from './http.js';
import { estimateOutputTokens, startStream } from './stream.js';
import type { CallOptions, ProviderConnection, UpstreamResult } from './types.js';

export const DEFAULT_TIMEOUT_MS = 600_000;
export const DEFAULT_READINESS_MS = 30_000;

export interface ChatCall {
  conn: ProviderConnection;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  stream: boolean;
  opts: CallOptions;
  /** Estimated prompt tokens, used only when the upstream reports no usage. */
  estimatePrompt?: () => number;
  decodeResponse(json: unknown, res: UpstreamBufferedResponse): CanonicalResponse;
  decodeStream(res: UpstreamHttpResponse): AsyncGenerator<CanonicalChunk>;
}

/** A non-streaming answer with nothing in it is a failure (combos fall back on it). */
export function assertNotEmpty(r: CanonicalResponse, res: { readonly headers: Record<string, string> }): CanonicalResponse {
  const hasText = r.content.some((p) => p.type !== 'text' || p.text !== '');
  if (!hasText && r.toolCalls.length === 0 && !r.reasoning) {
    throw new UpstreamError('empty-response', 'upstream answered 200 with no content', { headers: res.headers });
  }
  return r;
}

/** An upstream that reported no usage gets estimates instead of zeros (cost and Anthropic clients need numbers). */
export function fillMissingUsage(r: CanonicalResponse, estimatePrompt?: () => number): void {
  if (r.usage.outputTokens === 0) {
    let chars = (r.reasoning?.length ?? 0) + r.toolCalls.reduce((n, t) => n + t.name.length + t.arguments.length, 0);
    for (const p of r.content) if (p.type === 'text') chars += p.text.length;
    r.usage.outputTokens = estimateOutputTokens(chars);
  }
  if (r.usage.inputTokens === 0 && estimatePrompt) r.usage.inputTokens = estimatePrompt();
}

/** One chat call: a whole answer, or a stream once its first useful event is in. */
export function runChat(c: ChatCall): Promise<UpstreamResult> {
  // Not one async function for both: returning the JSON call's promise from one would cost extra ticks.
  return c.stream ? runStreamChat(c) : runJsonChat(c);
}

async function runStreamChat(c: ChatCall): Promise<UpstreamResult> {
  const now = c.opts.now ?? Date.now;
  const startedAt = now();
  // A stream has its own controller: readiness and idle timeouts and an early consumer stop abort it.
  const { controller, dispose } = linkedController(c.opts.signal);
  const timeout = c.conn.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let res: UpstreamHttpResponse;
  try {
    if (hasLongArray(c.body)) await ownTurn();
    let body = stringifyInPieces(c.body);
    if (typeof body !== 'string') body = await body;
    res = await upstreamRequest(c.url, {
      headers: { 'content-type': 'application/json', accept: 'text/event-stream, application/x-ndjson', ...c.headers },
      body,
      egress: c.opts.egress,
      dispatcher: c.opts.dispatcher,
      signal: controller.signal,
      headersTimeoutMs: timeout,
      bodyTimeoutMs: c.conn.streamIdleTimeoutMs ?? timeout,
    });
  } catch (err) {
    dispose();
    throw err;
  }
  if (res.status < 200 || res.status > 299) {
    const e = await httpError(res, controller.signal, now());
    dispose();
    throw e;
  }
  return startStream({
    res,
    controller,
    dispose,
    decode: c.decodeStream(res),
    readinessTimeoutMs: c.conn.readinessTimeoutMs ?? DEFAULT_READINESS_MS,
    idleTimeoutMs: c.conn.streamIdleTimeoutMs ?? timeout,
    now,
    startedAt,
    ...(c.estimatePrompt ? { estimatePrompt: c.estimatePrompt } : {}),
  });
}

/** The headers of a non-streaming chat call: JSON both ways, then the kind's (which win). */
export function jsonCallHeaders(headers: Record<string, string>): Record<string, string> {
  return { 'content-type': 'application/json', accept: 'application/json', ...headers };
}

/** A non-streaming call: nothing here aborts it on its own, so the caller's signal is used as it is. */
async function runJsonChat(c: ChatCall): Promise<UpstreamResult> {
  const now = c.opts.now ?? Date.now;
  const startedAt = now();
  const timeout = c.conn.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // A long chat's body is stringified a slice per turn of the loop, from a turn after its encoding; a usual one at once.
  if (hasLongArray(c.body)) await ownTurn();
  let body = stringifyInPieces(c.body);
  if (typeof body !== 'string') body = await body;
  const res = await upstreamBuffered(c.url, {
    headers: jsonCallHeaders(c.headers),
    body,
    egress: c.opts.egress,
    dispatcher: c.opts.dispatcher,
    signal: c.opts.signal,
    headersTimeoutMs: timeout,
    bodyTimeoutMs: c.conn.streamIdleTimeoutMs ?? timeout,
  });
  if (res.status < 200 || res.status > 299) throw httpErrorOf(res.status, res.headers, res.text, now());
  const json = parseJsonAnswer(res);
  let decoded: CanonicalResponse;
  try {
    decoded = c.decodeResponse(json, res);
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    throw new UpstreamError('garbage', `upstream answer has an unexpected shape: ${(err as Error).message}`, { headers: res.headers });
  }
  const response = assertNotEmpty(decoded, res);
  fillMissingUsage(response, c.estimatePrompt);
  return new JsonChatResult(res, response, now() - startedAt);
}

/** A whole chat answer. Its headers are parsed only if someone reads them (a getter on the class, not on each object). */
class JsonChatResult {
  readonly stream = false;
  readonly status: number;

  constructor(
    private readonly answer: UpstreamBufferedResponse,
    readonly response: CanonicalResponse,
    readonly latencyMs: number,
  ) {
    this.status = answer.status;
  }

  get headers(): Record<string, string> {
    return this.answer.headers;
  }
}

/** A whole JSON answer of a 2xx status; non-2xx → UpstreamError('http'). */
async function jsonCall(url: string, init: Parameters<typeof upstreamBuffered>[1], now: () => number): Promise<unknown> {
  const res = await upstreamBuffered(url, init);
  if (res.status < 200 || res.status > 299) throw httpErrorOf(res.status, res.headers, res.text, now());
  return parseJsonAnswer(res);
}

/** A GET returning JSON (model lists). */
export async function getJson(conn: ProviderConnection, url: string, headers: Record<string, string>, opts: CallOptions): Promise<unknown> {
  const timeout = Math.min(conn.timeoutMs ?? 30_000, 60_000);
  return jsonCall(
    url,
    { method: 'GET', headers: { accept: 'application/json', ...headers }, egress: opts.egress, dispatcher: opts.dispatcher, signal: opts.signal, headersTimeoutMs: timeout, bodyTimeoutMs: timeout },
    opts.now ?? Date.now,
  );
}

/** A POST returning JSON (embeddings). */
export async function postJson(
  conn: ProviderConnection,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  opts: CallOptions,
): Promise<unknown> {
  const timeout = conn.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return jsonCall(
    url,
    {
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body: JSON.stringify(body),
      egress: opts.egress,
      dispatcher: opts.dispatcher,
      signal: opts.signal,
      headersTimeoutMs: timeout,
      bodyTimeoutMs: timeout,
    },
    opts.now ?? Date.now,
  );
}

/**
 * POST a JSON body and hand back the answer as a stream once its headers arrived (audio, files):
 * nothing is buffered. A non-2xx answer is read (bounded) and thrown as UpstreamError, so the attempt
 * loop can fall back.
 */
export async function postJsonForStream(
  conn: ProviderConnection,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  opts: CallOptions,
): Promise<UpstreamHttpResponse> {
  const timeout = conn.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const res = await upstreamRequest(url, {
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    egress: opts.egress,
    dispatcher: opts.dispatcher,
    signal: opts.signal,
    headersTimeoutMs: timeout,
    bodyTimeoutMs: timeout,
  });
  if (res.status < 200 || res.status >= 300) throw await httpError(res, opts.signal ?? NOT_ABORTED, (opts.now ?? Date.now)());
  return res;
}

/**
 * POST a multipart form (an upload: its file part read from disk as it is sent) and return the
 * answer's content type and text (bounded). A non-2xx answer is thrown as UpstreamError.
 */
export async function postForm(conn: ProviderConnection, url: string, headers: Record<string, string>, form: UpstreamForm, opts: CallOptions): Promise<{ contentType: string; text: string }> {
  const timeout = conn.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const signal = opts.signal ?? NOT_ABORTED;
  const res = await upstreamRequest(url, { headers, body: form, egress: opts.egress, dispatcher: opts.dispatcher, signal: opts.signal, headersTimeoutMs: timeout, bodyTimeoutMs: timeout });
  if (res.status < 200 || res.status >= 300) throw await httpError(res, signal, (opts.now ?? Date.now)());
  return { contentType: res.headers['content-type'] ?? 'application/json', text: await readText(res, signal) };
}
