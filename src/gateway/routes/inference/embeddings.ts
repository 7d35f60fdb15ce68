/**
 * Embeddings: POST /v1/embeddings and /v1/providers/{provider}/embeddings route through the same
 * resolution and attempt loop as chat (combos, fallback, usage, telemetry headers); GET /v1/embeddings
 * lists embedding models. Targets that cannot embed the request's input (not an embedding model,
 * structured items the model does not declare) are left out; when none is left the answer is 400.
 */
import { setOperationHeaders } from './operation-run.js';
import type { RequestContext } from '../../../http/context.js';
import { sendJson } from '../../../http/respond.js';
import type { Route, Router } from '../../../http/router.js';
import { costFor, recordRequest, upstreamOptions } from '../../completion.js';
import type { CanonicalEmbeddingsRequest } from '../../canonical.js';
import { assertEmbeddingSupport, parseEmbeddingsRequest, renderEmbeddingsResponse } from '../../embeddings.js';
import { callEmbeddings, modelCapabilities, modelSpec } from '../../providers/index.js';
import type { Resolution } from '../../routing/resolve.js';
import type { GatewayServices } from '../../services.js';
import { fly, type Pipeline } from '../../pipeline/stage.js';
import { concurrencyStage, listenStage, routeStage } from '../../pipeline/stages.js';
import { guardBodyStage, operationAttemptsStage, operationLimitsStage, OperationFlight, recordFailure, targetsStage } from '../../pipeline/operation.js';
import { renderModelList } from '../../translate/index.js';
import { readInferenceBody } from './completion-route.js';
import { modelEntries } from './models.js';

/** The type the operator declared for a model, if they did. */
function declaredType(conn: Parameters<typeof modelSpec>[0], modelId: string): string | undefined {
  const spec = modelSpec(conn, modelId) as { type?: string; typeDeclared?: boolean } | undefined;
  return spec?.typeDeclared ? spec.type : undefined;
}

type EmbeddingsFlight = OperationFlight<CanonicalEmbeddingsRequest, Awaited<ReturnType<typeof callEmbeddings>>>;

/** Whether a target can embed the request's input (else assertEmbeddingSupport throws the 400). */
function assertTarget(req: CanonicalEmbeddingsRequest, t: Resolution['targets'][number]): void {
  assertEmbeddingSupport(req, modelCapabilities(t.provider.conn, t.modelId), t.ref, declaredType(t.provider.conn, t.modelId));
}

/** The embeddings stages: parsed, its input guarded, routed to the targets that can embed it. */
export function embeddingsPipeline(svc: GatewayServices): Pipeline<EmbeddingsFlight> {
  return {
    stages: [
      {
        name: 'parse',
        run: (f) =>
          readInferenceBody(f.ctx).then((body) => {
            const sent = parseEmbeddingsRequest(body);
            f.begin(sent, sent.model, 'embeddings', false, svc.clock.now());
            return 'next' as const;
          }),
      },
      guardBodyStage(svc, (f: EmbeddingsFlight) => ({ input: f.body.input }), (f, guarded) => (f.body = { ...f.body, input: guarded.input as CanonicalEmbeddingsRequest['input'] })),
      listenStage(),
      routeStage(svc, (f: EmbeddingsFlight) => f.model),
      targetsStage((f, resolution) => {
        const capable = resolution.targets.filter((t) => {
          try {
            assertTarget(f.body, t);
            return true;
          } catch {
            return false;
          }
        });
        if (capable.length === 0) assertTarget(f.body, resolution.targets[0]!); // throws the 400
        return capable;
      }),
      operationLimitsStage(svc),
      concurrencyStage(svc),
      operationAttemptsStage(svc, (f, s, signal) => callEmbeddings(s.provider.conn, { id: s.account.id, apiKey: s.account.apiKey }, { ...f.body, model: s.modelId }, upstreamOptions(svc, s.provider.config.id, s.account.id, signal))),
      {
        name: 'respond',
        run(f) {
          const { ctx, resolution, startedAt, sessionId } = f;
          const run = f.run!;
          const usage = { inputTokens: run.value.usage.inputTokens, outputTokens: 0 };
          setOperationHeaders(ctx, svc, { resolution: resolution!, subject: run.subject, failedAttempts: run.failedAttempts, startedAt, ...(sessionId !== undefined ? { sessionId } : {}), tokensIn: usage.inputTokens, cost: costFor(svc, run.subject, usage) });
          sendJson(ctx.res, 200, renderEmbeddingsResponse(run.value, f.body, run.subject.ref));
          recordRequest(svc, { input: f.info, resolution, subject: run.subject, status: 200, usage, attempts: run.attempts, failedAttempts: run.failedAttempts, startedAt });
          return 'answered';
        },
      },
    ],
    fail: recordFailure(svc),
  };
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
  const pipeline = embeddingsPipeline(svc);
  k(r.post('/v1/embeddings', (ctx) => fly(pipeline, new OperationFlight(ctx))));
  k(r.post('/v1/providers/:provider/embeddings', (ctx) => fly(pipeline, new OperationFlight(ctx, scope(svc, ctx)))));
}
