/**
 * The shared middle of every non-chat inference route: limits checked, a global concurrency slot
 * taken, and the attempts run over the capable targets in the strategy's order (fallback, retries,
 * breakers). The slot is released here when the attempts fail, else by the caller once answered.
 */
import type { AbortLike, RequestAbort } from '../../abort.js';
import type { Principal } from '../../auth.js';
import { attemptDeps } from '../../completion.js';
import { checkLimits } from '../../limits/index.js';
import { runAttempts, type AttemptSuccess } from '../../routing/attempts.js';
import type { AttemptSubject } from '../../routing/policy.js';
import type { Resolution } from '../../routing/resolve.js';
import { orderTargets } from '../../routing/strategies.js';
import type { GatewayServices } from '../../services.js';

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
  checkLimits(svc, o.principal, o.resolution);
  const release = svc.concurrency.tryGlobal() ?? (await svc.concurrency.acquireGlobal(o.abort));
  try {
    const run = await runAttempts(
      {
        resolution: o.resolution,
        ordered: orderTargets(o.resolution.strategy, o.resolution.combo?.name, o.capable, svc.strategy),
        request: { requestId: o.requestId, ...(o.sessionId ? { sessionId: o.sessionId } : {}), ...(o.principal.key ? { apiKeyId: o.principal.key.id } : {}) },
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
