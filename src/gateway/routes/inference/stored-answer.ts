/**
 * Serving a stored answer (a response-cache hit or an idempotent replay) without any upstream call:
 * rendered in the route's client format, as JSON or, when the request asked for a stream, as the
 * stream the client expects. A cache hit reports `X-Gateway-Cache: HIT`, cost 0.0000000000 and what
 * it saved in `X-Gateway-Cost-Saved`; a replay reports `X-Gateway-Idempotent: true` and cost 0 (the
 * first request already paid).
 */
import type { RequestContext } from '../../../http/context.js';
import { sendJson } from '../../../http/respond.js';
import { answerChunks, type StoredAnswer } from '../../cache/answer.js';
import type { CanonicalRequest } from '../../canonical.js';
import { recordRequest, type FinishInfo, type RecordDeps } from '../../completion.js';
import { costOf } from '../../pricing.js';
import type { Resolution } from '../../routing/resolve.js';
import type { GatewayServices } from '../../services.js';
import { ensureVersion, H, setTelemetryHeaders } from '../../telemetry.js';
import { createStreamEncoder, renderResponse, streamContentType } from '../../translate/index.js';
import { estimateTokens } from '../../translate/tokens.js';
import type { CompletionRoute } from './completion-route.js';

export function answerCost(svc: Pick<GatewayServices, 'state'>, a: StoredAnswer): number {
  return costOf(a.response.usage, svc.state.catalog.pricing.lookup(a.provider, a.modelId));
}

export function serveStored(
  ctx: RequestContext,
  svc: RecordDeps & Pick<GatewayServices, 'version'>,
  route: CompletionRoute,
  canonical: CanonicalRequest,
  answer: StoredAnswer,
  how: 'hit' | 'replay',
  info: FinishInfo['input'],
  resolution: Resolution,
  startedAt: number,
): void {
  const res = ctx.res;
  ensureVersion(ctx, svc.version);
  const usage = answer.response.usage;
  const saved = answerCost(svc, answer);
  const latencyMs = svc.clock.now() - startedAt;
  setTelemetryHeaders(res, {
    decision: { strategy: resolution.strategy, provider: answer.provider, latencyMs },
    requestId: info.requestId,
    ...(info.sessionId !== undefined ? { sessionId: info.sessionId } : {}),
    provider: answer.provider,
    model: answer.modelId,
    fallbackAttempts: 0,
    usage: { tokensIn: usage.inputTokens, tokensOut: usage.outputTokens, cost: 0, latencyMs, cacheHit: how === 'hit' },
  });
  if (how === 'hit') {
    res.setHeader(H.cache, 'HIT');
    res.setHeader(H.costSaved, saved.toFixed(10));
  } else res.setHeader(H.idempotent, 'true');

  if (!canonical.stream) {
    sendJson(res, 200, renderResponse(route.format, answer.response, { model: answer.ref }));
  } else {
    res.statusCode = 200;
    res.setHeader('Content-Type', streamContentType(route.format));
    res.setHeader('Cache-Control', 'no-cache');
    const encoder = createStreamEncoder(route.format, {
      model: answer.ref,
      ...(canonical.includeUsage !== undefined ? { includeUsage: canonical.includeUsage } : {}),
      estimatedInputTokens: estimateTokens(canonical),
    });
    const frames: string[] = [];
    for (const c of answerChunks(answer.response)) frames.push(...encoder.chunk(c));
    frames.push(...encoder.end());
    res.end(frames.join(''));
  }
  recordRequest(svc, {
    input: info,
    resolution,
    served: { provider: answer.provider, modelId: answer.modelId },
    status: 200,
    usage,
    attempts: [],
    failedAttempts: 0,
    startedAt,
    ttfbMs: latencyMs,
    cache: how,
    costSaved: saved,
  });
}
