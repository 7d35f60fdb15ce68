/**
 * The completion handler every chat-like route shares (/v1/chat/completions, /v1/messages,
 * /v1/responses, Gemini generateContent, Ollama /api/chat, provider-scoped and editor routes):
 * parse the client body, route it, and answer in the client's format, as JSON or as a stream that
 * flushes every event. A client that disconnects aborts the upstream call; what usage is known by
 * then is still recorded.
 *
 * The order of the checks before any upstream call is the stage list in `chatPipeline` (the stages
 * are in ../../pipeline/chat.ts): model resolution and the key's allow-list; the idempotency key (a
 * replay or a wait for the in-flight duplicate); the response cache (a hit); budgets and token
 * limits (429); the global concurrency gate (queue, then 429). Then the attempt loop, where
 * breakers, cool-downs, lock-outs, per-target token limits and per-provider concurrency decide which
 * targets are tried.
 */
import type { ServerResponse } from 'node:http';
import type { RequestContext } from '../../../http/context.js';
import { badRequest } from '../../../http/errors.js';
import { gatewayHttpError } from '../errors.js';
import { readJson } from '../../../http/body.js';
import { hasLongArray } from '../../../http/json-pieces.js';
import { ownTurn } from '../../../http/turns.js';
import type { CanonicalResponse, ClientFormat, Usage } from '../../canonical.js';
import { mergeUsage } from '../../canonical.js';
import { ResponseAssembler, type StoredAnswer } from '../../cache/answer.js';
import { ReasoningTap } from '../../cache/reasoning.js';
import { costFor, failRequest, recordRequest, type CompletionStarted, type RecordDeps } from '../../completion.js';
import type { GatewayServices } from '../../services.js';
import { ensureVersion, H, setPairs, telemetryPairs, versionPending, versionWritten, type Telemetry } from '../../telemetry.js';
import { ProgressTracker, wantsProgress } from './progress.js';
import { createStreamEncoder, parseRequest, renderResponse, streamContentType, type ParseOptions } from '../../translate/index.js';
import { estimateTokens } from '../../translate/tokens.js';
import { fly, type Pipeline, type Stage } from '../../pipeline/stage.js';
import { concurrencyStage, listenStage, routeStage } from '../../pipeline/stages.js';
import {
  answerGuardStage,
  answerPluginsStage,
  attemptsStage,
  cacheStage,
  ChatFlight,
  compressionStage,
  guardStage,
  idempotencyStage,
  injectStage,
  limitsStage,
  pluginsStage,
  policiesStage,
  settingsStage,
  skillsStage,
} from '../../pipeline/chat.js';

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

function storedAnswer(started: CompletionStarted, response: CanonicalResponse): StoredAnswer {
  return {
    response,
    provider: started.subject.provider.config.id,
    modelId: started.subject.modelId,
    ref: started.subject.ref,
    strategy: started.resolution.strategy,
    createdAt: started.startedAt,
  };
}

/** The client's body in the route's format, as a canonical request; the request-log input. */
function parseStage(svc: Pick<GatewayServices, 'clock'>): Stage<ChatFlight> {
  return {
    name: 'parse',
    run: (f) =>
      readInferenceBody(f.ctx).then(async (body) => {
        // Thousands of messages: every stage from here is its own turn of the loop (fly), and so is this one.
        if (hasLongArray(body)) {
          f.heavy = true;
          await ownTurn();
        }
        const route = f.route;
        const parsed = parseRequest(route.format, body, route.parse ?? {});
        f.body = body;
        f.request = parsed;
        f.startedAt = svc.clock.now();
        f.info = { endpoint: route.endpoint, requestId: f.ctx.requestId, principal: f.principal, stream: parsed.stream, model: parsed.model, sessionId: f.sessionId };
        return 'next' as const;
      }),
  };
}

type RespondDeps = RecordDeps & Pick<GatewayServices, 'version' | 'runtime' | 'cache' | 'compression' | 'log' | 'reasoningCache'>;

/** The answer in the client's format: JSON, or a stream flushed event by event. It records itself. */
function respondStage(svc: RespondDeps): Stage<ChatFlight> {
  return {
    name: 'respond',
    run(f) {
      f.recording = false;
      // A JSON answer is written synchronously; only a stream has something to wait for.
      const streaming = respond(f.ctx, svc, f);
      if (!streaming) {
        svc.compression.record(f.ctx.requestId, f.request, f.compressed!);
        return 'answered';
      }
      return streaming.then(() => {
        svc.compression.record(f.ctx.requestId, f.request, f.compressed!);
        return 'answered' as const;
      });
    },
  };
}

/**
 * The chat request path, in order. A replay or a cache hit spends no budget and takes no
 * concurrency slot; breakers, cool-downs, lock-outs, per-target token limits and per-provider
 * concurrency act inside 'attempts', where they decide which targets are tried.
 */
export function chatPipeline(svc: GatewayServices): Pipeline<ChatFlight> {
  return {
    stages: [
      parseStage(svc),
      guardStage(svc),
      settingsStage(svc),
      injectStage(svc),
      pluginsStage(svc),
      listenStage(),
      routeStage(svc, (f: ChatFlight) => f.request.model),
      policiesStage(svc),
      idempotencyStage(svc),
      cacheStage(svc),
      limitsStage(svc),
      concurrencyStage(svc),
      compressionStage(svc),
      attemptsStage(svc),
      skillsStage(svc),
      answerPluginsStage(svc),
      answerGuardStage(svc),
      respondStage(svc),
    ],
    fail(f, e) {
      ensureVersion(f.ctx, svc.version);
      return failRequest(svc, f.ctx.res, e, { input: f.info, ...(f.resolution ? { resolution: f.resolution } : {}), startedAt: f.startedAt });
    },
  };
}

/** Serve one chat request through `pipeline` (built once by the routes with `chatPipeline`). */
export function serveCompletion(ctx: RequestContext, pipeline: Pipeline<ChatFlight>, route: CompletionRoute): Promise<void> {
  return fly(pipeline, new ChatFlight(ctx, route));
}

/** Answer from the upstream result: JSON (written before this returns), or a stream flushed event by event (the promise). */
function respond(ctx: RequestContext, svc: RespondDeps, f: ChatFlight): Promise<void> | undefined {
  const { request: canonical, info, startedAt, signature, ticket, limits, principal, route } = f;
  const started = f.started!;
  const { result, subject } = started;
  const res = ctx.res;
  // Cache and limit headers, then the telemetry: gathered as name, value pairs in their order on the wire.
  const headers: (string | number)[] = [];
  if (versionPending(ctx)) headers.push(H.version, svc.version);
  if (svc.runtime.cache.value.enabled) headers.push(H.cache, 'MISS');
  if (limits.budgetWarning !== undefined) headers.push(H.budgetWarning, limits.budgetWarning);
  if (limits.tokensLeft !== undefined) headers.push(H.tokenLimitRemaining, String(limits.tokensLeft));
  headers.push(H.compression, f.compressed!.header);
  const telemetry: Telemetry = {
    decision: { strategy: started.resolution.strategy, provider: subject.provider.config.id, latencyMs: started.latencyMs },
    requestId: ctx.requestId,
    sessionId: info.sessionId,
    provider: subject.provider.config.id,
    model: subject.modelId,
    fallbackAttempts: started.failedAttempts,
  };

  if (!result.stream) {
    const usage = result.response.usage;
    const cost = costFor(svc, subject, usage);
    telemetry.usage = { tokensIn: usage.inputTokens, tokensOut: usage.outputTokens, cost, latencyMs: svc.clock.now() - startedAt, cacheHit: false };
    telemetryPairs(telemetry, headers);
    const text = JSON.stringify(renderResponse(route.format, result.response, { model: shownModel(started) }));
    headers.push('Content-Length', Buffer.byteLength(text), 'Content-Type', 'application/json');
    // What sendJson does, without its copies: one writeHead and one end, sent in one write.
    versionWritten(ctx);
    res.writeHead(200, headers);
    res.end(text);
    if (signature !== undefined || ticket) {
      const answer = storedAnswer(started, result.response);
      if (signature !== undefined) svc.cache.put(signature, principal.key?.id ?? '-', canonical.model, answer);
      f.kept = answer;
    }
    recordRequest(svc, {
      input: info,
      resolution: started.resolution,
      subject,
      status: 200,
      usage,
      cost,
      attempts: started.attempts,
      failedAttempts: started.failedAttempts,
      startedAt,
      ttfbMs: started.latencyMs,
      cache: signature !== undefined ? 'miss' : undefined,
    });
    return undefined;
  }
  return respondStream(ctx, svc, f, headers, telemetry);
}

/** The streaming answer: headers now (the provider layer already saw the first useful event), then every event as it comes. */
async function respondStream(ctx: RequestContext, svc: RespondDeps, f: ChatFlight, headers: (string | number)[], telemetry: Telemetry): Promise<void> {
  const { request: canonical, startedAt, signature, ticket, principal, info, route } = f;
  const started = f.started!;
  const abort = f.abort!;
  const { result, subject } = started;
  if (!result.stream) return;
  const res = ctx.res;
  res.statusCode = 200;
  versionWritten(ctx);
  setPairs(res, headers);
  const contentType = streamContentType(route.format);
  res.setHeader('Content-Type', contentType);
  const progress = wantsProgress(ctx.req.headers, contentType) ? new ProgressTracker(startedAt, () => svc.clock.now(), (f) => void writeFrames(res, [f])) : undefined;
  if (progress) res.setHeader(H.progress, 'enabled');
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('X-Accel-Buffering', 'no');
  setPairs(res, telemetryPairs(telemetry, []));
  // The first useful event is already here: the headers go out with its frames in one write.
  const encoder = createStreamEncoder(route.format, {
    model: shownModel(started),
    ...(canonical.includeUsage !== undefined ? { includeUsage: canonical.includeUsage } : {}),
    estimatedInputTokens: estimateTokens(canonical),
  });
  /** Collects the stream when its answer is to be kept (cache, idempotency). */
  const assembler = signature !== undefined || ticket ? new ResponseAssembler() : undefined;
  /** Reasoning of a turn that calls tools, for the reasoning cache (only requests that offer tools). */
  const tap = canonical.tools?.length ? new ReasoningTap() : undefined;
  const onAbort = () => result.cancel();
  abort.addEventListener('abort', onAbort, { once: true });
  let streamError: string | undefined;
  try {
    for await (const chunk of result.chunks) {
      assembler?.push(chunk);
      tap?.push(chunk);
      if (progress && (chunk.type === 'text' || chunk.type === 'reasoning' || chunk.type === 'tool_call')) progress.count();
      const wait = writeFrames(res, encoder.chunk(chunk));
      if (!res.headersSent) res.flushHeaders(); // an encoder that held its first frames back
      if (wait) await wait;
      if (abort.aborted) break;
    }
    if (!abort.aborted) await writeFrames(res, progress ? [progress.finish(), ...encoder.end()] : encoder.end());
  } catch (e) {
    if (!abort.aborted) {
      const err = gatewayHttpError(e);
      streamError = `stream failed after it started: ${err.message}`;
      svc.log.warn({ requestId: ctx.requestId, provider: subject.provider.config.id, model: subject.modelId, err: err.message }, 'gateway: upstream stream broke');
      await writeFrames(res, encoder.error(err.message, err.status >= 400 ? err.status : 502));
    }
  } finally {
    progress?.stop();
    abort.removeEventListener('abort', onAbort);
    if (!res.writableEnded) res.end();
  }
  const outcome = await result.outcome;
  const usage: Usage = mergeUsage({ ...encoder.usage() }, outcome.usage);
  const aborted = abort.aborted;
  const failed = aborted || streamError !== undefined || outcome.error !== undefined;
  let kept: StoredAnswer | undefined;
  if (assembler && !failed) {
    assembler.push({ type: 'usage', usage });
    const response = assembler.result(subject.modelId, Math.floor(started.startedAt / 1000));
    if (response) {
      kept = storedAnswer(started, response);
      if (signature !== undefined) svc.cache.put(signature, principal.key?.id ?? '-', canonical.model, kept);
    }
  }
  f.kept = kept;
  if (tap && !failed) tap.flush(svc.reasoningCache, subject.provider.config.id, subject.modelId);
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
    ...(signature !== undefined ? { cache: 'miss' as const } : {}),
  });
}
