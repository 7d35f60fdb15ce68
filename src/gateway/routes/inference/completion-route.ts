/**
 * The completion handler every chat-like route shares (/v1/chat/completions, /v1/messages,
 * /v1/responses, Gemini generateContent, Ollama /api/chat, provider-scoped and editor routes):
 * parse the client body, route it, and answer in the client's format, as JSON or as a stream that
 * flushes every event. A client that disconnects aborts the upstream call; what usage is known by
 * then is still recorded.
 */
import type { ServerResponse } from 'node:http';
import type { RequestContext } from '../../../http/context.js';
import { badRequest, toHttpError } from '../../../http/errors.js';
import { readJson } from '../../../http/body.js';
import { sendJson } from '../../../http/respond.js';
import type { ClientFormat, Usage } from '../../canonical.js';
import { mergeUsage } from '../../canonical.js';
import type { Principal } from '../../auth.js';
import { costFor, failRequest, recordRequest, resolveFor, startCompletion, type CompletionStarted } from '../../completion.js';
import type { Resolution } from '../../routing/resolve.js';
import type { GatewayServices } from '../../services.js';
import { sessionIdOf, setTelemetryHeaders } from '../../telemetry.js';
import { createStreamEncoder, parseRequest, renderResponse, streamContentType, type ParseOptions } from '../../translate/index.js';
import { estimateTokens } from '../../translate/tokens.js';

/** Inference bodies may carry inline images. */
export const INFERENCE_BODY_LIMIT = 32 << 20;

export interface CompletionRoute {
  format: ClientFormat;
  /** Request-log endpoint name. */
  endpoint: string;
  /** What the URL says (Gemini: model and streaming come from the path). */
  parse?: ParseOptions;
  /** Provider-scoped routes. */
  providerScope?: string;
}

export async function readInferenceBody(ctx: RequestContext): Promise<unknown> {
  const body = await readJson(ctx, { limit: INFERENCE_BODY_LIMIT });
  if (body === undefined) throw badRequest('request body is empty; send a JSON object', { code: 'invalid_request' });
  return body;
}

/** Write frames and wait for the socket to drain when its buffer is full (slow clients). */
function writeFrames(res: ServerResponse, frames: string[]): Promise<void> | undefined {
  if (frames.length === 0 || res.destroyed) return undefined;
  const text = frames.length === 1 ? frames[0]! : frames.join('');
  if (res.write(text)) return undefined;
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Model id shown to the client: the `<provider>/<model>` that answered. */
function shownModel(started: CompletionStarted): string {
  return started.subject.ref;
}

export async function serveCompletion(ctx: RequestContext, svc: GatewayServices, route: CompletionRoute): Promise<void> {
  const principal = ctx.state.principal as Principal;
  const body = await readInferenceBody(ctx);
  const canonical = parseRequest(route.format, body, route.parse ?? {});
  const sessionId = sessionIdOf(ctx.req);
  const startedAt = svc.clock.now();
  const info = {
    endpoint: route.endpoint,
    requestId: ctx.requestId,
    principal,
    stream: canonical.stream,
    model: canonical.model,
    ...(sessionId !== undefined ? { sessionId } : {}),
  };

  const abort = new AbortController();
  const onClose = () => {
    if (!ctx.res.writableFinished) abort.abort();
  };
  ctx.res.once('close', onClose);

  let resolution: Resolution | undefined;
  let started: CompletionStarted;
  try {
    resolution = resolveFor(svc, canonical.model, principal, route.providerScope);
    started = await startCompletion(
      svc,
      { canonical, principal, endpoint: route.endpoint, requestId: ctx.requestId, signal: abort.signal, ...(sessionId !== undefined ? { sessionId } : {}) },
      resolution,
    );
  } catch (e) {
    throw failRequest(svc, ctx.res, e, { input: info, ...(resolution ? { resolution } : {}), startedAt });
  }

  const { result, subject } = started;
  const base = {
    decision: { strategy: started.resolution.strategy, provider: subject.provider.config.id, latencyMs: started.latencyMs },
    requestId: ctx.requestId,
    ...(sessionId !== undefined ? { sessionId } : {}),
    provider: subject.provider.config.id,
    model: subject.modelId,
    fallbackAttempts: started.failedAttempts,
  };

  if (!result.stream) {
    ctx.res.off('close', onClose);
    const usage = result.response.usage;
    const cost = costFor(svc, subject, usage);
    setTelemetryHeaders(ctx.res, {
      ...base,
      usage: { tokensIn: usage.inputTokens, tokensOut: usage.outputTokens, cost, latencyMs: svc.clock.now() - startedAt, cacheHit: false },
    });
    const out = renderResponse(route.format, result.response, { model: shownModel(started) });
    sendJson(ctx.res, 200, out);
    recordRequest(svc, {
      input: info,
      resolution: started.resolution,
      subject,
      status: 200,
      usage,
      attempts: started.attempts,
      failedAttempts: started.failedAttempts,
      startedAt,
      ttfbMs: started.latencyMs,
    });
    return;
  }

  // Streaming: commit headers now (the provider layer already saw the first useful event).
  const res = ctx.res;
  res.statusCode = 200;
  res.setHeader('Content-Type', streamContentType(route.format));
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('X-Accel-Buffering', 'no');
  setTelemetryHeaders(res, base);
  // The first useful event is already here: the headers go out with its frames in one write.
  const encoder = createStreamEncoder(route.format, {
    model: shownModel(started),
    ...(canonical.includeUsage !== undefined ? { includeUsage: canonical.includeUsage } : {}),
    estimatedInputTokens: estimateTokens(canonical),
  });
  const onAbort = () => result.cancel();
  abort.signal.addEventListener('abort', onAbort, { once: true });
  let streamError: string | undefined;
  try {
    for await (const chunk of result.chunks) {
      const wait = writeFrames(res, encoder.chunk(chunk));
      if (!res.headersSent) res.flushHeaders(); // an encoder that held its first frames back
      if (wait) await wait;
      if (abort.signal.aborted) break;
    }
    if (!abort.signal.aborted) await writeFrames(res, encoder.end());
  } catch (e) {
    if (!abort.signal.aborted) {
      const err = toHttpError(e);
      streamError = `stream failed after it started: ${err.message}`;
      svc.log.warn({ requestId: ctx.requestId, provider: subject.provider.config.id, model: subject.modelId, err: err.message }, 'gateway: upstream stream broke');
      await writeFrames(res, encoder.error(err.message, err.status >= 400 ? err.status : 502));
    }
  } finally {
    abort.signal.removeEventListener('abort', onAbort);
    ctx.res.off('close', onClose);
    if (!res.writableEnded) res.end();
  }
  const outcome = await result.outcome;
  const usage: Usage = mergeUsage({ ...encoder.usage() }, outcome.usage);
  const aborted = abort.signal.aborted;
  recordRequest(svc, {
    input: info,
    resolution: started.resolution,
    subject,
    status: aborted ? 499 : streamError || outcome.error ? 502 : 200,
    ...(aborted ? { error: 'client closed the stream' } : streamError || outcome.error ? { error: streamError ?? outcome.error!.message } : {}),
    usage,
    attempts: started.attempts,
    failedAttempts: started.failedAttempts,
    startedAt,
    ttfbMs: started.latencyMs,
    clientAborted: aborted,
  });
}
