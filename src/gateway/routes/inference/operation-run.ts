/**
 * The telemetry and cost headers of a non-chat operation that succeeded (its stages are in
 * ../../pipeline/operation.ts).
 */
import type { RequestContext } from '../../../http/context.js';
import type { AttemptSubject } from '../../routing/policy.js';
import type { Resolution } from '../../routing/resolve.js';
import type { GatewayServices } from '../../services.js';
import { setTelemetryHeaders } from '../../telemetry.js';

/** The seed's telemetry and cost headers of an operation that succeeded. */
export function setOperationHeaders(
  ctx: RequestContext,
  svc: Pick<GatewayServices, 'clock'>,
  o: { resolution: Resolution; subject: AttemptSubject; failedAttempts: number; startedAt: number; sessionId?: string; tokensIn: number; cost: number },
): void {
  const latencyMs = svc.clock.now() - o.startedAt;
  setTelemetryHeaders(ctx.res, {
    decision: { strategy: o.resolution.strategy, provider: o.subject.provider.config.id, latencyMs },
    requestId: ctx.requestId,
    ...(o.sessionId !== undefined ? { sessionId: o.sessionId } : {}),
    provider: o.subject.provider.config.id,
    model: o.subject.modelId,
    fallbackAttempts: o.failedAttempts,
    usage: { tokensIn: o.tokensIn, tokensOut: 0, cost: o.cost, latencyMs, cacheHit: false },
  });
}
