/**
 * Stream plumbing shared by the provider kinds: raw body → SSE events (eventsource-parser) or NDJSON
 * lines, and the wrapper that turns a provider's canonical chunk generator into an UpstreamResult:
 * waits for the first useful chunk (stream readiness), enforces idle timeouts, tracks usage and the
 * stop reason, and aborts the upstream when the consumer stops.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { mergeUsage, emptyUsage, type CanonicalChunk, type StopReason } from '../canonical.js';
import { UpstreamError } from './errors.js';
import { classifyTransportError, type UpstreamHttpResponse } from './http.js';
import type { StreamOutcome, UpstreamResult } from './types.js';

/** Largest single SSE event / NDJSON line accepted (a garbage stream cannot grow memory without bound). */
const MAX_EVENT_CHARS = 8 * 1024 * 1024;

/** SSE events of a body. Throws UpstreamError('garbage') when the stream is not SSE at all. */
export async function* sseEvents(body: AsyncIterable<unknown>): AsyncGenerator<EventSourceMessage> {
  const queue: EventSourceMessage[] = [];
  let parseError: Error | undefined;
  const parser = createParser({
    onEvent: (e) => queue.push(e),
    onError: (e) => {
      if (e.type === 'max-buffer-size-exceeded') parseError = e;
    },
    maxBufferSize: MAX_EVENT_CHARS,
  });
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
    if (parseError) throw new UpstreamError('garbage', `upstream stream event too large (${parseError.message})`);
    while (queue.length > 0) yield queue.shift()!;
  }
  parser.feed(decoder.decode());
  // A final event without its blank line still counts (some servers omit it).
  parser.reset({ consume: true });
  while (queue.length > 0) yield queue.shift()!;
}

/** NDJSON lines of a body (empty lines skipped). */
export async function* ndjsonLines(body: AsyncIterable<unknown>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of body) {
    buf += decoder.decode(chunk as Buffer, { stream: true });
    let nl = buf.indexOf('\n');
    while (nl >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line) yield line;
      nl = buf.indexOf('\n');
    }
    if (buf.length > MAX_EVENT_CHARS) throw new UpstreamError('garbage', 'upstream NDJSON line too large');
  }
  buf += decoder.decode();
  if (buf.trim()) yield buf.trim();
}

/** JSON.parse or UpstreamError('garbage'). */
export function parseEventJson(data: string, what: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(data);
  } catch {
    throw new UpstreamError('garbage', `${what}: stream event is not JSON: ${data.slice(0, 120)}`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new UpstreamError('garbage', `${what}: stream event is not a JSON object`);
  return v as Record<string, unknown>;
}

function isUseful(c: CanonicalChunk): boolean {
  return (c.type === 'text' && c.text !== '') || c.type === 'reasoning' || c.type === 'tool_call';
}

export interface StreamSetup {
  res: UpstreamHttpResponse;
  controller: AbortController;
  /** Detach from the caller's signal once done. */
  dispose(): void;
  /** The provider's decoder over the raw body. */
  decode: AsyncGenerator<CanonicalChunk>;
  readinessTimeoutMs: number;
  idleTimeoutMs: number;
  now: () => number;
  startedAt: number;
  /** Estimated prompt tokens, used only when the upstream reports none. */
  estimatePrompt?: () => number;
}

/** About four characters a token: the estimate used when an upstream reports no usage at all. */
export function estimateOutputTokens(chars: number): number {
  return chars > 0 ? Math.max(1, Math.ceil(chars / 4)) : 0;
}

/**
 * Wait for the first useful chunk, then hand out the rest. Rejects with UpstreamError when the stream
 * ends, breaks or times out before anything useful arrived (so the router can still fall back).
 */
export async function startStream(s: StreamSetup): Promise<UpstreamResult & { stream: true }> {
  const usage = emptyUsage();
  let stopReason: StopReason | undefined;
  let produced = false;
  let settled = false;
  let outputChars = 0;
  let sawInput = false;
  let sawOutput = false;
  /** Usage the upstream did not report, estimated (OpenAI-compatible servers that ignore include_usage). */
  const missingUsage = (): Partial<typeof usage> | undefined => {
    const est: Partial<typeof usage> = {};
    if (!sawOutput && outputChars > 0) est.outputTokens = estimateOutputTokens(outputChars);
    if (!sawInput && s.estimatePrompt) est.inputTokens = s.estimatePrompt();
    return Object.keys(est).length > 0 ? est : undefined;
  };
  let resolveOutcome!: (o: StreamOutcome) => void;
  const outcome = new Promise<StreamOutcome>((r) => (resolveOutcome = r));
  let timer: NodeJS.Timeout | undefined;

  const arm = (ms: number, what: string) => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => s.controller.abort(new UpstreamError('timeout', `${what} after ${ms} ms`)), ms);
    timer.unref?.();
  };
  const settle = (error?: UpstreamError) => {
    if (settled) return;
    settled = true;
    if (timer) clearTimeout(timer);
    s.dispose();
    if (error && !s.controller.signal.aborted) s.controller.abort(error);
    if (!s.res.body.destroyed) s.res.body.destroy();
    const est = missingUsage();
    if (est) {
      mergeUsage(usage, est);
      sawInput = sawOutput = true;
    }
    const o: StreamOutcome = { usage: { ...usage }, producedContent: produced };
    if (stopReason) o.stopReason = stopReason;
    if (error) o.error = error;
    resolveOutcome(o);
  };
  const track = (c: CanonicalChunk) => {
    if (c.type === 'usage' || c.type === 'start') {
      mergeUsage(usage, c.usage);
      if (c.usage?.inputTokens) sawInput = true;
      if (c.usage?.outputTokens && c.type === 'usage') sawOutput = true;
    } else if (c.type === 'finish') stopReason = c.stopReason;
    else if (c.type === 'text' || c.type === 'reasoning') outputChars += c.text.length;
    else if (c.type === 'tool_call') outputChars += (c.argumentsDelta?.length ?? 0) + (c.name?.length ?? 0);
    if (isUseful(c)) produced = true;
  };
  const next = async (): Promise<IteratorResult<CanonicalChunk>> => {
    try {
      const r = await s.decode.next();
      if (!r.done) track(r.value);
      return r;
    } catch (err) {
      const e = classifyTransportError(err, s.controller.signal, 'upstream stream');
      settle(e);
      throw e;
    }
  };

  // Readiness: buffer until the first useful chunk.
  const buffered: CanonicalChunk[] = [];
  arm(s.readinessTimeoutMs, 'upstream stream produced nothing useful');
  for (;;) {
    let r: IteratorResult<CanonicalChunk>;
    try {
      r = await next();
    } catch (err) {
      // Cut off before anything useful: that is an empty stream for the router (fallback still possible).
      if (err instanceof UpstreamError && err.kind === 'truncated') {
        throw new UpstreamError('empty-stream', `upstream stream ended before producing any content (${err.message})`, { headers: s.res.headers });
      }
      throw err;
    }
    if (r.done) {
      const e = new UpstreamError('empty-stream', 'upstream stream ended before producing any content', { headers: s.res.headers });
      settle(e);
      throw e;
    }
    buffered.push(r.value);
    if (isUseful(r.value)) break;
  }
  const firstChunkMs = s.now() - s.startedAt;
  arm(s.idleTimeoutMs, 'upstream stream idle');

  async function* chunks(): AsyncGenerator<CanonicalChunk> {
    try {
      while (buffered.length > 0) yield buffered.shift()!;
      for (;;) {
        const r = await next();
        if (r.done) break;
        arm(s.idleTimeoutMs, 'upstream stream idle');
        yield r.value;
      }
      const est = missingUsage();
      if (est) {
        mergeUsage(usage, est);
        sawInput = sawOutput = true;
        yield { type: 'usage', usage: est };
      }
      settle();
    } finally {
      // Consumer stopped early (client left) or an error was thrown: abort the upstream.
      if (!settled) settle(new UpstreamError('aborted', 'stream consumer stopped'));
    }
  }

  return {
    stream: true,
    status: s.res.status,
    headers: s.res.headers,
    chunks: chunks(),
    outcome,
    firstChunkMs,
    cancel: () => {
      if (!settled) settle(new UpstreamError('aborted', 'stream cancelled'));
    },
  };
}
