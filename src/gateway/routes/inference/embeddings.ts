/**
 * Embeddings: POST /v1/embeddings and /v1/providers/{provider}/embeddings route through the same
 * resolution and attempt loop as chat (combos, fallback, usage, telemetry headers); GET /v1/embeddings
 * lists embedding models. Targets that cannot embed the request's input (not an embedding model,
 * structured items the model does not declare) are left out; when none is left the answer is 400.
 */
import { abortOnClose, attemptOperation, setOperationHeaders } from './operation-run.js';
import type { RequestContext } from '../../../http/context.js';
import { sendJson } from '../../../http/respond.js';
import type { Route, Router } from '../../../http/router.js';
import type { Principal } from '../../auth.js';
import { costFor, failRequest, recordRequest, resolveFor, upstreamOptions, type FinishInfo } from '../../completion.js';
import { guardJson } from './guard.js';
import { assertEmbeddingSupport, parseEmbeddingsRequest, renderEmbeddingsResponse } from '../../embeddings.js';
import { callEmbeddings, modelCapabilities, modelSpec } from '../../providers/index.js';
import type { Resolution } from '../../routing/resolve.js';
import type { GatewayServices } from '../../services.js';
import { sessionIdOf } from '../../telemetry.js';
import { renderModelList } from '../../translate/index.js';
import { readInferenceBody } from './completion-route.js';
import { modelEntries } from './models.js';

/** The type the operator declared for a model, if they did. */
function declaredType(conn: Parameters<typeof modelSpec>[0], modelId: string): string | undefined {
  const spec = modelSpec(conn, modelId) as { type?: string; typeDeclared?: boolean } | undefined;
  return spec?.typeDeclared ? spec.type : undefined;
}

async function serveEmbeddings(ctx: RequestContext, svc: GatewayServices, providerScope?: string): Promise<void> {
  const principal = ctx.state.principal as Principal;
  const sent = parseEmbeddingsRequest(await readInferenceBody(ctx));
  const sessionId = sessionIdOf(ctx.req);
  const startedAt = svc.clock.now();
  const info: FinishInfo['input'] = { endpoint: 'embeddings', requestId: ctx.requestId, principal, stream: false, model: sent.model, ...(sessionId !== undefined ? { sessionId } : {}) };
  const req = { ...sent, input: (await guardJson(svc, ctx, { input: sent.input }, info, startedAt)).input as typeof sent.input };
  const { abort, detach } = abortOnClose(ctx);
  let resolution: Resolution | undefined;
  let release: (() => void) | undefined;
  try {
    resolution = resolveFor(svc, req.model, principal, providerScope);
    const capable = resolution.targets.filter((t) => {
      try {
        assertEmbeddingSupport(req, modelCapabilities(t.provider.conn, t.modelId), t.ref, declaredType(t.provider.conn, t.modelId));
        return true;
      } catch {
        return false;
      }
    });
    if (capable.length === 0) {
      const t = resolution.targets[0]!;
      assertEmbeddingSupport(req, modelCapabilities(t.provider.conn, t.modelId), t.ref, declaredType(t.provider.conn, t.modelId)); // throws the 400
    }
    const request = { resolution, capable, principal, requestId: ctx.requestId, ...(sessionId ? { sessionId } : {}), abort };
    const attempted = await attemptOperation(svc, request, (s, signal) => callEmbeddings(s.provider.conn, { id: s.account.id, apiKey: s.account.apiKey }, { ...req, model: s.modelId }, upstreamOptions(svc, s.provider.config.id, s.account.id, signal)));
    release = attempted.release;
    const run = attempted.run;
    run.release();
    release();
    release = undefined;
    detach();
    const usage = { inputTokens: run.value.usage.inputTokens, outputTokens: 0 };
    setOperationHeaders(ctx, svc, { resolution, subject: run.subject, failedAttempts: run.failedAttempts, startedAt, ...(sessionId !== undefined ? { sessionId } : {}), tokensIn: usage.inputTokens, cost: costFor(svc, run.subject, usage) });
    sendJson(ctx.res, 200, renderEmbeddingsResponse(run.value, req, run.subject.ref));
    recordRequest(svc, { input: info, resolution, subject: run.subject, status: 200, usage, attempts: run.attempts, failedAttempts: run.failedAttempts, startedAt });
  } catch (e) {
    release?.();
    throw failRequest(svc, ctx.res, e, { input: info, ...(resolution ? { resolution } : {}), startedAt });
  }
}

export function embeddingRoutes(
  r: Router,
  svc: GatewayServices,
  k: (route: Route) => Route,
  scope: (svc: GatewayServices, ctx: RequestContext) => string,
): void {
  k(
    r.get('/v1/embeddings', (ctx) => {
      const entries = modelEntries(svc.state.catalog).filter((e) => e.type === 'embedding');
      sendJson(ctx.res, 200, renderModelList('openai', entries));
    }),
  );
  k(r.post('/v1/embeddings', (ctx) => serveEmbeddings(ctx, svc)));
  k(r.post('/v1/providers/:provider/embeddings', (ctx) => serveEmbeddings(ctx, svc, scope(svc, ctx))));
}
