/**
 * The completion handler every chat-like route shares (/v1/chat/completions, /v1/messages,
 * /v1/responses, Gemini generateContent, Ollama /api/chat, provider-scoped and editor routes):
 * parse the client body, route it, and answer in the client's format, as JSON or as a stream that
 * flushes every event. A client that disconnects aborts the upstream call; what usage is known by
 * then is still recorded.
 *
 * Order of the checks before any upstream call: model resolution and the key's allow-list; the
 * idempotency key (a replay or a wait for the in-flight duplicate); the response cache (a hit);
 * budgets and token limits (429); the global concurrency gate (queue, then 429). Then the attempt
 * loop, where breakers, cool-downs, lock-outs, per-target token limits and per-provider concurrency
 * decide which targets are tried.
 */
import type { ServerResponse } from 'node:http';
import type { RequestContext } from '../../../http/context.js';
import { badRequest, toHttpError } from '../../../http/errors.js';
import { readJson } from '../../../http/body.js';
import { HttpError } from '../../../http/errors.js';
import type { CanonicalRequest, CanonicalResponse, ClientFormat, Usage } from '../../canonical.js';
import { mergeUsage } from '../../canonical.js';
import type { Principal } from '../../auth.js';
import { ResponseAssembler, type StoredAnswer } from '../../cache/answer.js';
import { ReasoningTap } from '../../cache/reasoning.js';
import { idempotencyKeyOf } from '../../cache/idempotency.js';
import { isDeterministic, requestSignature } from '../../cache/signature.js';
import { costFor, failRequest, recordRequest, resolveFor, startCompletion, type CompletionStarted, type FinishInfo } from '../../completion.js';
import { estimateUse } from '../../limits/estimate.js';
import { checkLimits, type LimitCheck } from '../../limits/index.js';
import type { Resolution } from '../../routing/resolve.js';
import type { GatewayServices } from '../../services.js';
import { ensureVersion, H, sessionIdOf, setPairs, telemetryPairs, versionPending, versionWritten, type Telemetry } from '../../telemetry.js';
import { serveStored } from './stored-answer.js';
import { ProgressTracker, wantsProgress } from './progress.js';
import { injectContext, runSkillRounds } from './context-injection.js';
import { guardAnswer } from '../../guardrails/engine.js';
import { hasCacheMarkers } from '../../compression/plan.js';
import type { Compressed } from '../../compression/service.js';
import { guardChat } from './guard.js';
import { applyGeneral } from '../../ops/request-settings.js';
import { createStreamEncoder, parseRequest, renderResponse, streamContentType, type ParseOptions } from '../../translate/index.js';
import { estimateTokens } from '../../translate/tokens.js';
import { RequestAbort, type AbortLike } from '../../abort.js';

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

/** Whether the response cache may serve or keep this request's answer. */
function cacheable(svc: GatewayServices, ctx: RequestContext, canonical: CanonicalRequest): boolean {
  const s = svc.runtime.cache.value;
  if (!s.enabled) return false;
  if (String(ctx.req.headers['x-gateway-no-cache'] ?? '').toLowerCase() === 'true') return false;
  return s.mode === 'all' || isDeterministic(canonical);
}

/** Wait for an in-flight duplicate to settle, or for the client to leave. */
function waitOrAbort(p: Promise<void>, signal: AbortLike): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    void p.then(done);
  });
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

export async function serveCompletion(ctx: RequestContext, svc: GatewayServices, route: CompletionRoute): Promise<void> {
  const principal = ctx.state.principal as Principal;
  const body = await readInferenceBody(ctx);
  const sessionId = sessionIdOf(ctx.req);
  const parsed = parseRequest(route.format, body, route.parse ?? {});
  const startedAt = svc.clock.now();
  const info: FinishInfo['input'] = {
    endpoint: route.endpoint,
    requestId: ctx.requestId,
    principal,
    stream: parsed.stream,
    model: parsed.model,
    sessionId,
  };
  const injecting = injectContext(svc, ctx.req.headers, applyGeneral(svc.runtime.general.value, await guardChat(svc, ctx, parsed, info, startedAt)), principal, sessionId);
  const injected = injecting instanceof Promise ? await injecting : injecting;
  let canonical = injected.request;
  // Active plugins' request hooks (sandboxed; a failing plugin is deactivated, a block is a 400).
  if (svc.plugins.activeCount > 0) canonical = (await svc.plugins.onRequest(canonical)).request;

  const abort = new RequestAbort();
  const onClose = () => {
    if (!ctx.res.writableFinished) abort.abort();
  };
  // on, not once: every path takes it off again (once would wrap it in one more closure per request).
  ctx.res.on('close', onClose);

  let resolution: Resolution | undefined;
  let started: CompletionStarted;
  /** Set while this request holds an idempotency key: every path must complete it. */
  let ticket: { complete(a: StoredAnswer | undefined): void } | undefined;
  let releaseGlobal: (() => void) | undefined;
  let signature: string | undefined;
  let limits: LimitCheck;
  let compressed: Compressed | undefined;
  try {
    resolution = resolveFor(svc, canonical.model, principal, route.providerScope);
    const ceiling = svc.policies.maxTokens(principal.key?.id, canonical.maxTokens);
    if (ceiling !== canonical.maxTokens) canonical.maxTokens = ceiling;
    const ns = principal.key?.id ?? '-';
    const idemKey = idempotencyKeyOf(ctx.req.headers);
    if (idemKey !== undefined) {
      const fingerprint = `${requestSignature(canonical, ns)}|${route.format}|${canonical.stream ? 's' : 'j'}`;
      for (;;) {
        const claim = svc.idempotency.shared ? await svc.idempotency.claimAcross(`${ns}\u0000${idemKey}`, fingerprint) : svc.idempotency.claim(`${ns}\u0000${idemKey}`, fingerprint);
        if (claim.kind === 'conflict') {
          throw new HttpError(409, `idempotency key ${JSON.stringify(idemKey)} was used for a different request within ${svc.idempotency.windowMs} ms`, {
            code: 'idempotency_key_reused',
          });
        }
        if (claim.kind === 'replay') {
          ctx.res.off('close', onClose);
          serveStored(ctx, svc, route, canonical, claim.answer, 'replay', info, resolution, startedAt);
          return;
        }
        if (claim.kind === 'wait') {
          await waitOrAbort(claim.settled, abort);
          if (abort.aborted) throw new HttpError(499, 'client closed the request', { code: 'client_closed_request' });
          continue;
        }
        ticket = claim;
        break;
      }
    }
    if (cacheable(svc, ctx, canonical)) {
      signature = requestSignature(canonical, ns);
      const hit = svc.cache.sharedTier ? await svc.cache.lookupAcross(signature) : svc.cache.lookup(signature);
      if (hit) {
        ticket?.complete(hit);
        ticket = undefined;
        ctx.res.off('close', onClose);
        serveStored(ctx, svc, route, canonical, hit, 'hit', info, resolution, startedAt);
        return;
      }
    }
    limits = await checkLimits(
      svc,
      principal,
      resolution,
      principal.key && (svc.budgets.size > 0 || svc.tokenLimits.size > 0) ? { requestId: ctx.requestId, ...estimateUse(svc.state.catalog.pricing, resolution, canonical) } : undefined,
    );
    releaseGlobal = svc.concurrency.tryGlobal() ?? (await svc.concurrency.acquireGlobal(abort));
    const header = ctx.req.headers['x-gateway-compression'];
    compressed = svc.compression.compress(canonical, { header: typeof header === 'string' ? header : undefined, routingCombo: resolution.combo?.name, cacheMarkers: () => hasCacheMarkers(body) });
    const input = { canonical: compressed.request, principal, endpoint: route.endpoint, requestId: ctx.requestId, signal: abort, sessionId };
    started = await startCompletion(svc, input, resolution);
    if (injected.skills.size > 0) started = await runSkillRounds(svc, started, input, resolution, injected.skills);
    if (!started.result.stream && svc.plugins.activeCount > 0) await svc.plugins.onResponse(canonical.model, started.result.response);
    if (!started.result.stream) {
      // The answer's text through the output guardrails (secrets and PII), before it is cached or sent.
      const out = await guardAnswer(svc.state.fileConfig.guardrails, ctx.req.headers, started.result.response.content);
      if (out.hits.length > 0) {
        started.result.response.content = out.content;
        info.guardrails = [...(info.guardrails ?? []), ...out.hits];
      }
    }
  } catch (e) {
    ticket?.complete(undefined);
    releaseGlobal?.();
    ensureVersion(ctx, svc.version);
    throw failRequest(svc, ctx.res, e, { input: info, ...(resolution ? { resolution } : {}), startedAt });
  }

  try {
    // A JSON answer is written synchronously; only a stream has something to wait for.
    const streaming = respond(ctx, svc, route, { canonical, started, info, startedAt, signature, ticket, limits, abort, onClose, releaseGlobal, principal, compression: compressed.header });
    if (streaming) await streaming;
    svc.compression.record(ctx.requestId, canonical, compressed);
  } finally {
    // Every path has settled the idempotency key by now; this only guards against an unexpected throw
    // leaving duplicates waiting (complete() is idempotent).
    ticket?.complete(undefined);
  }
}

interface Responding {
  canonical: CanonicalRequest;
  started: CompletionStarted;
  info: FinishInfo['input'];
  startedAt: number;
  signature: string | undefined;
  ticket: { complete(a: StoredAnswer | undefined): void } | undefined;
  limits: LimitCheck;
  abort: RequestAbort;
  onClose: () => void;
  releaseGlobal: () => void;
  principal: Principal;
  /** `X-Gateway-Compression`: the plan applied and where it came from. */
  compression: string;
}

/** Answer from the upstream result: JSON (written before this returns), or a stream flushed event by event (the promise). */
function respond(ctx: RequestContext, svc: GatewayServices, route: CompletionRoute, r: Responding): Promise<void> | undefined {
  const { canonical, started, info, startedAt, signature, ticket, limits, onClose, releaseGlobal, principal } = r;
  const { result, subject } = started;
  const res = ctx.res;
  // Cache and limit headers, then the telemetry: gathered as name, value pairs in their order on the wire.
  const headers: (string | number)[] = [];
  if (versionPending(ctx)) headers.push(H.version, svc.version);
  if (svc.runtime.cache.value.enabled) headers.push(H.cache, 'MISS');
  if (limits.budgetWarning !== undefined) headers.push(H.budgetWarning, limits.budgetWarning);
  if (limits.tokensLeft !== undefined) headers.push(H.tokenLimitRemaining, String(limits.tokensLeft));
  headers.push(H.compression, r.compression);
  const telemetry: Telemetry = {
    decision: { strategy: started.resolution.strategy, provider: subject.provider.config.id, latencyMs: started.latencyMs },
    requestId: ctx.requestId,
    sessionId: info.sessionId,
    provider: subject.provider.config.id,
    model: subject.modelId,
    fallbackAttempts: started.failedAttempts,
  };

  if (!result.stream) {
    res.off('close', onClose);
    releaseGlobal();
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
      ticket?.complete(answer);
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
  return respondStream(ctx, svc, route, r, headers, telemetry);
}

/** The streaming answer: headers now (the provider layer already saw the first useful event), then every event as it comes. */
async function respondStream(
  ctx: RequestContext,
  svc: GatewayServices,
  route: CompletionRoute,
  r: Responding,
  headers: (string | number)[],
  telemetry: Telemetry,
): Promise<void> {
  const { canonical, started, startedAt, signature, ticket, abort, onClose, releaseGlobal, principal, info } = r;
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
      const err = toHttpError(e);
      streamError = `stream failed after it started: ${err.message}`;
      svc.log.warn({ requestId: ctx.requestId, provider: subject.provider.config.id, model: subject.modelId, err: err.message }, 'gateway: upstream stream broke');
      await writeFrames(res, encoder.error(err.message, err.status >= 400 ? err.status : 502));
    }
  } finally {
    progress?.stop();
    abort.removeEventListener('abort', onAbort);
    ctx.res.off('close', onClose);
    if (!res.writableEnded) res.end();
    releaseGlobal();
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
  ticket?.complete(kept);
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
