/**
 * OpenAI's JSON inference operations beyond chat and embeddings: `POST /v1/moderations` (cost is
 * always 0), `POST /v1/rerank` (`model`, `query`, `documents`, `top_n`, `return_documents`;
 * Cohere/Jina/vLLM's shape, as LiteLLM serves it), `POST /v1/images/generations` (`GET` lists the
 * image models), `POST /v1/videos/generations` and `POST /v1/music/generations`. They route like chat (resolution, combos,
 * fallback, limits, usage log, telemetry headers); a target qualifies when the model's declared type
 * is the operation's (or no type is declared) and its provider kind serves the operation
 * (OpenAI-compatible); when none does, 400 names the model and the route. The upstream's JSON comes
 * back with `model` naming what the client asked for.
 */
import { setOperationHeaders } from './operation-run.js';
import type { RequestContext } from '../../../http/context.js';
import { badRequest } from '../../../http/errors.js';
import { sendJson } from '../../../http/respond.js';
import type { Route, Router } from '../../../http/router.js';
import type { MediaUsage } from '../../pricing.js';
import { costFor, recordRequest, upstreamOptions } from '../../completion.js';
import { callJsonOperation } from '../../providers/index.js';
import type { GatewayServices } from '../../services.js';
import { capableTargets } from './operation-targets.js';
import { fly, type Pipeline } from '../../pipeline/stage.js';
import { concurrencyStage, listenStage, routeStage } from '../../pipeline/stages.js';
import { guardBodyStage, operationAttemptsStage, operationLimitsStage, OperationFlight, recordFailure, targetsStage } from '../../pipeline/operation.js';
import { renderModelList } from '../../translate/index.js';
import { readInferenceBody } from './completion-route.js';
import { modelEntries } from './models.js';

type Obj = Record<string, unknown>;

interface Operation {
  endpoint: 'moderations' | 'rerank' | 'images' | 'videos' | 'music';
  route: string;
  /** Path under the provider's base URL. */
  path: string;
  type: 'moderation' | 'rerank' | 'image' | 'video' | 'music';
  /** Checks the body (400 on a bad one) and returns the model asked for. */
  validate(body: Obj): string;
  /** Input tokens the answer reports (usage log, cost). */
  tokensIn(answer: Obj): number;
  /** Media units the answer is charged for, beyond tokens (priced by the model's media prices). */
  media?(answer: Obj, body: Obj): MediaUsage;
  /** Whether the operation is free (moderations). */
  free?: boolean;
}

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest';

const MODERATIONS: Operation = {
  endpoint: 'moderations',
  route: '/v1/moderations',
  path: '/moderations',
  type: 'moderation',
  free: true,
  validate(body) {
    const input = body.input;
    const ok = typeof input === 'string' || (Array.isArray(input) && input.length > 0 && input.every((x) => typeof x === 'string' || isObject(x)));
    if (!ok) throw badRequest('body/input must be a string, an array of strings, or an array of input objects');
    if (body.model !== undefined && typeof body.model !== 'string') throw badRequest('body/model must be a string');
    // OpenAI's default when the client names none.
    return typeof body.model === 'string' && body.model !== '' ? body.model : DEFAULT_MODERATION_MODEL;
  },
  tokensIn: (a) => (isObject(a.usage) && typeof a.usage.prompt_tokens === 'number' ? a.usage.prompt_tokens : 0),
};

const RERANK: Operation = {
  endpoint: 'rerank',
  route: '/v1/rerank',
  path: '/rerank',
  type: 'rerank',
  validate(body) {
    if (typeof body.model !== 'string' || body.model === '') throw badRequest('body/model is required (a string)');
    if (typeof body.query !== 'string' || body.query === '') throw badRequest('body/query is required (a non-empty string)');
    const docs = body.documents;
    if (!Array.isArray(docs) || docs.length === 0 || !docs.every((d) => typeof d === 'string' || isObject(d))) {
      throw badRequest('body/documents must be a non-empty array of strings or objects');
    }
    if (docs.length > 10_000) throw badRequest('body/documents: at most 10000 documents');
    if (body.top_n !== undefined && !(Number.isInteger(body.top_n) && (body.top_n as number) > 0)) throw badRequest('body/top_n must be a positive integer');
    if (body.return_documents !== undefined && typeof body.return_documents !== 'boolean') throw badRequest('body/return_documents must be a boolean');
    return body.model;
  },
  tokensIn: (a) => {
    if (isObject(a.usage)) return Number(a.usage.prompt_tokens ?? a.usage.total_tokens ?? 0) || 0;
    if (isObject(a.meta) && isObject(a.meta.billed_units)) return Number(a.meta.billed_units.input_tokens ?? 0) || 0;
    return 0;
  },
  // Cohere bills search units (one per query and up to 100 documents) and reports them; otherwise count them so.
  media: (a, body) => {
    const billed = isObject(a.meta) && isObject(a.meta.billed_units) ? Number(a.meta.billed_units.search_units) : NaN;
    return { searchUnits: Number.isFinite(billed) && billed >= 0 ? billed : Math.ceil((body.documents as unknown[]).length / 100) };
  },
};

export const IMAGE_SIZES = /^(auto|\d{2,5}x\d{2,5})$/;

const IMAGES: Operation = {
  endpoint: 'images',
  route: '/v1/images/generations',
  path: '/images/generations',
  type: 'image',
  validate(body) {
    if (typeof body.model !== 'string' || body.model === '') throw badRequest('body/model is required (a string)');
    if (typeof body.prompt !== 'string' || body.prompt === '') throw badRequest('body/prompt is required (a non-empty string)');
    if (body.prompt.length > 32_000) throw badRequest('body/prompt: at most 32000 characters');
    if (body.n !== undefined && !(Number.isInteger(body.n) && (body.n as number) >= 1 && (body.n as number) <= 10)) throw badRequest('body/n must be an integer from 1 to 10');
    if (body.size !== undefined && (typeof body.size !== 'string' || !IMAGE_SIZES.test(body.size))) throw badRequest('body/size must be WIDTHxHEIGHT (e.g. 1024x1024) or auto');
    if (body.response_format !== undefined && body.response_format !== 'url' && body.response_format !== 'b64_json') throw badRequest('body/response_format must be url or b64_json');
    return body.model;
  },
  tokensIn: (a) => (isObject(a.usage) ? Number(a.usage.input_tokens ?? a.usage.prompt_tokens ?? 0) || 0 : 0),
  // Each image returned, priced by the size and quality asked for.
  media: (a, body) => ({
    images: {
      count: Array.isArray(a.data) ? a.data.length : typeof body.n === 'number' ? body.n : 1,
      ...(typeof body.size === 'string' ? { size: body.size } : {}),
      ...(typeof body.quality === 'string' ? { quality: body.quality } : {}),
    },
  }),
};

/** Video and music generation (OmniRoute's routes): `model` and `prompt`; the rest goes to the upstream as is. */
function generation(endpoint: 'videos' | 'music', type: 'video' | 'music'): Operation {
  return {
    endpoint,
    route: `/v1/${endpoint}/generations`,
    path: `/${endpoint}/generations`,
    type,
    validate(body) {
      if (typeof body.model !== 'string' || body.model === '') throw badRequest('body/model is required (a string)');
      if (typeof body.prompt !== 'string' || body.prompt === '') throw badRequest('body/prompt is required (a non-empty string)');
      return body.model;
    },
    tokensIn: (a) => (isObject(a.usage) ? Number(a.usage.input_tokens ?? a.usage.prompt_tokens ?? 0) || 0 : 0),
    // One request, plus the seconds of media the answer (or else the request) names.
    media: (a, body) => {
      const seconds = [a.duration, a.seconds, body.duration, body.seconds].find((x): x is number => typeof x === 'number' && Number.isFinite(x) && x > 0);
      return { requests: 1, ...(seconds !== undefined ? { seconds } : {}) };
    },
  };
}

type OperationFlightOf = OperationFlight<Obj, unknown>;

/** An operation's stages: its body checked and guarded, routed to the targets that serve it, answered as JSON. */
export function jsonOperationPipeline(svc: GatewayServices, op: Operation): Pipeline<OperationFlightOf> {
  const need = { fn: 'jsonOperation', path: op.path, route: op.route, endpoint: op.endpoint, type: op.type } as const;
  return {
    stages: [
      {
        name: 'parse',
        run: (f) =>
          readInferenceBody(f.ctx).then((sent) => {
            if (!isObject(sent)) throw badRequest('body must be a JSON object');
            f.begin(sent, op.validate(sent), op.endpoint, false, svc.clock.now());
            return 'next' as const;
          }),
      },
      guardBodyStage(svc, (f: OperationFlightOf) => f.body, (f, guarded) => (f.body = guarded)),
      listenStage(),
      routeStage(svc, (f: OperationFlightOf) => f.model),
      targetsStage((f, resolution) => capableTargets(resolution, need, f.body)),
      operationLimitsStage(svc),
      concurrencyStage(svc),
      operationAttemptsStage(svc, (f, s, signal) =>
        callJsonOperation(s.provider.conn, { id: s.account.id, apiKey: s.account.apiKey }, op.path, { ...f.body, model: s.modelId }, upstreamOptions(svc, s.provider.config.id, s.account.id, signal)),
      ),
      {
        name: 'respond',
        run(f) {
          const { ctx, resolution, startedAt, sessionId } = f;
          const run = f.run!;
          const answer = isObject(run.value) ? run.value : { result: run.value };
          const usage = { inputTokens: op.tokensIn(answer), outputTokens: 0 };
          const cost = op.free ? 0 : costFor(svc, run.subject, usage, op.media?.(answer, f.body));
          setOperationHeaders(ctx, svc, { resolution: resolution!, subject: run.subject, failedAttempts: run.failedAttempts, startedAt, ...(sessionId !== undefined ? { sessionId } : {}), tokensIn: usage.inputTokens, cost: cost });
          sendJson(ctx.res, 200, 'model' in answer ? { ...answer, model: run.subject.ref } : answer);
          recordRequest(svc, { input: f.info, resolution, subject: run.subject, status: 200, usage, cost, attempts: run.attempts, failedAttempts: run.failedAttempts, startedAt });
          return 'answered';
        },
      },
    ],
    fail: recordFailure(svc),
  };
}

export function jsonOperationRoutes(
  r: Router,
  svc: GatewayServices,
  k: (route: Route) => Route,
  scope: (svc: GatewayServices, ctx: RequestContext) => string,
): void {
  for (const op of [MODERATIONS, RERANK, IMAGES, generation('videos', 'video'), generation('music', 'music')]) {
    const pipeline = jsonOperationPipeline(svc, op);
    k(r.post(op.route, (ctx) => fly(pipeline, new OperationFlight(ctx))));
    k(r.post(`/v1/providers/:provider${op.route.slice(3)}`, (ctx) => fly(pipeline, new OperationFlight(ctx, scope(svc, ctx)))));
  }
  // The image models, as GET /v1/embeddings lists embedding models.
  k(
    r.get('/v1/images/generations', (ctx) => {
      sendJson(ctx.res, 200, renderModelList('openai', modelEntries(svc.state.catalog).filter((e) => e.type === 'image')));
    }),
  );
}
