/**
 * The shared middle of every non-chat inference route: limits checked, a global concurrency slot
 * taken, and the attempts run over the capable targets in the strategy's order (fallback, retries,
 * breakers). The slot is released here when the attempts fail, else by the caller once answered.
 */
import type { RequestContext } from '../../../http/context.js';
import { RequestAbort, type AbortLike } from '../../abort.js';
import type { Principal } from '../../auth.js';
import { attemptDeps } from '../../completion.js';
import { checkLimits } from '../../limits/index.js';
import { runAttempts, type AttemptSuccess } from '../../routing/attempts.js';
import type { AttemptSubject } from '../../routing/policy.js';
import type { Resolution } from '../../routing/resolve.js';
import { orderTargets } from '../../routing/strategies.js';
import type { GatewayServices } from '../../services.js';
import { setTelemetryHeaders } from '../../telemetry.js';

export interface OperationRequest {
  resolution: Resolution;
  /** The targets that can serve it (operation-targets.ts). */
  capable: Resolution['targets'];
  principal: Principal;
  requestId: string;
  sessionId?: string;
  abort: RequestAbort;
}

export async function attemptOperation<T>(
  svc: GatewayServices,
  o: OperationRequest,
  call: (s: AttemptSubject, signal: AbortLike) => Promise<T>,
): Promise<{ run: AttemptSuccess<T>; release: () => void }> {
  const settings = svc.state.catalog.settings;
  await checkLimits(svc, o.principal, o.resolution, { requestId: o.requestId, usd: 0, tokens: 0 });
  const release = svc.concurrency.tryGlobal() ?? (await svc.concurrency.acquireGlobal(o.abort));
  try {
    const run = await runAttempts(
      {
        resolution: o.resolution,
        ordered: orderTargets(o.resolution.strategy, o.resolution.combo, o.capable, svc.strategy),
        request: { requestId: o.requestId, ...(o.sessionId ? { sessionId: o.sessionId } : {}), ...(o.principal.key ? { apiKeyId: o.principal.key.id, accountId: o.principal.key.accountId } : {}) },
        maxAttempts: o.resolution.combo?.maxAttempts ?? settings.maxAttempts,
        retryWaitMaxMs: settings.retryWaitMaxMs,
        signal: o.abort,
      },
      attemptDeps(svc),
      call,
    );
    return { run, release };
  } catch (e) {
    release();
    throw e;
  }
}

/** An abort that fires when the client leaves before the answer is complete; `detach` once answered. */
export function abortOnClose(ctx: RequestContext): { abort: RequestAbort; detach(): void } {
  const abort = new RequestAbort();
  const onClose = () => {
    if (!ctx.res.writableFinished) abort.abort();
  };
  // `on`, not `once` ('close' comes once): see readBody in src/http/body.ts for why per request.
  ctx.res.on('close', onClose);
  return { abort, detach: () => ctx.res.off('close', onClose) };
}

/** The seed's telemetry and cost headers of an operation that succeeded. */
export function setOperationHeaders(
  ctx: RequestContext,
  svc: GatewayServices,
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
