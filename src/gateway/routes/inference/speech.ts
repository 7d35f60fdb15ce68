/**
 * `POST /v1/audio/speech` (and `/v1/providers/{provider}/audio/speech`): OpenAI's text-to-speech
 * body (`model`, `input` up to 4,096 characters, `voice`, `response_format`, `speed`, `instructions`)
 * routed like chat to OpenAI-compatible providers with a `speech` (or undeclared) model. The audio
 * comes back as it arrives, with the upstream's content type: never held whole in memory. Fallback
 * happens before the first byte; usage records the input characters, and the cost is the model's
 * `per_character` (and `per_request`) price.
 */
import { setOperationHeaders } from './operation-run.js';
import { pipeline } from 'node:stream/promises';
import type { RequestContext } from '../../../http/context.js';
import { badRequest } from '../../../http/errors.js';
import type { Route, Router } from '../../../http/router.js';
import { costFor, recordRequest, upstreamOptions, type RecordDeps } from '../../completion.js';
import { callStreamOperation } from '../../providers/index.js';
import type { StreamOperationAnswer } from '../../providers/types.js';
import type { GatewayServices } from '../../services.js';
import { capableTargets } from './operation-targets.js';
import { fly, type Pipeline } from '../../pipeline/stage.js';
import { concurrencyStage, listenStage, routeStage } from '../../pipeline/stages.js';
import { operationAttemptsStage, operationLimitsStage, OperationFlight, recordFailure, targetsStage } from '../../pipeline/operation.js';
import { readInferenceBody } from './completion-route.js';

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const FORMATS = new Set(['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm']);
const MAX_INPUT = 4096;

function validate(body: Obj): string {
  if (typeof body.model !== 'string' || body.model === '') throw badRequest('body/model is required (a string)');
  if (typeof body.input !== 'string' || body.input === '') throw badRequest('body/input is required (a non-empty string)');
  if (body.input.length > MAX_INPUT) throw badRequest(`body/input: at most ${MAX_INPUT} characters`);
  if (!(typeof body.voice === 'string' && body.voice !== '') && !isObject(body.voice)) throw badRequest('body/voice is required (a voice name)');
  if (body.response_format !== undefined && !FORMATS.has(String(body.response_format))) throw badRequest(`body/response_format must be one of ${[...FORMATS].join(', ')}`);
  if (body.speed !== undefined && !(typeof body.speed === 'number' && body.speed >= 0.25 && body.speed <= 4)) throw badRequest('body/speed must be a number from 0.25 to 4');
  return body.model;
}

type SpeechFlight = OperationFlight<Obj, StreamOperationAnswer>;

const NEED = { fn: 'streamOperation', path: '/audio/speech', route: '/v1/audio/speech', endpoint: 'speech', type: 'speech' } as const;

/** The speech stages: the body checked, routed to the targets that speak, the audio piped to the client. */
export function speechPipeline(svc: GatewayServices): Pipeline<SpeechFlight> {
  return {
    stages: [
      {
        name: 'parse',
        run: (f) =>
          readInferenceBody(f.ctx).then((raw) => {
            if (!isObject(raw)) throw badRequest('body must be a JSON object');
            f.begin(raw, validate(raw), 'speech', true, svc.clock.now());
            return 'next' as const;
          }),
      },
      listenStage(),
      routeStage(svc, (f: SpeechFlight) => f.model),
      targetsStage((f, resolution) => capableTargets(resolution, NEED, f.body)),
      operationLimitsStage(svc),
      concurrencyStage(svc),
      operationAttemptsStage(svc, (f, s, signal) =>
        callStreamOperation(s.provider.conn, { id: s.account.id, apiKey: s.account.apiKey }, '/audio/speech', { ...f.body, model: s.modelId }, upstreamOptions(svc, s.provider.config.id, s.account.id, signal)),
      ),
      { name: 'respond', run: (f) => respond(svc, f) },
    ],
    fail: recordFailure(svc),
  };
}

/** The audio as it arrives, with the upstream's content type; the request is recorded once it is over. */
async function respond(svc: RecordDeps, f: SpeechFlight): Promise<'answered'> {
  const { ctx, resolution, startedAt, sessionId } = f;
  const run = f.run!;
  const usage = { inputTokens: (f.body.input as string).length, outputTokens: 0 };
  // Characters are not tokens: only the media prices apply.
  const cost = costFor(svc, run.subject, { inputTokens: 0, outputTokens: 0 }, { characters: usage.inputTokens, requests: 1 });
  setOperationHeaders(ctx, svc, { resolution: resolution!, subject: run.subject, failedAttempts: run.failedAttempts, startedAt, ...(sessionId !== undefined ? { sessionId } : {}), tokensIn: usage.inputTokens, cost: cost });
  const upstream = run.value;
  ctx.res.statusCode = 200;
  ctx.res.setHeader('Content-Type', upstream.headers['content-type'] || 'audio/mpeg');
  if (upstream.headers['content-length']) ctx.res.setHeader('Content-Length', upstream.headers['content-length']);
  let status = 200;
  let error: string | undefined;
  try {
    await pipeline(upstream.body, ctx.res);
  } catch (e) {
    // The client left, or the upstream broke off mid-stream: the answer is cut short.
    status = ctx.res.writableFinished ? 200 : 499;
    error = (e as Error).message;
  }
  recordRequest(svc, { input: f.info, resolution, subject: run.subject, status, ...(error ? { error } : {}), usage, cost, attempts: run.attempts, failedAttempts: run.failedAttempts, startedAt, ...(status === 499 ? { clientAborted: true } : {}) });
  return 'answered';
}

export function speechRoutes(r: Router, svc: GatewayServices, k: (route: Route) => Route, scope: (svc: GatewayServices, ctx: RequestContext) => string): void {
  const speech = speechPipeline(svc);
  k(r.post('/v1/audio/speech', (ctx) => fly(speech, new OperationFlight(ctx))));
  k(r.post('/v1/providers/:provider/audio/speech', (ctx) => fly(speech, new OperationFlight(ctx, scope(svc, ctx)))));
}
