/**
 * A multipart inference operation (transcriptions, image edits): the upload is spooled to temp files
 * as it arrives (never held in memory), checked, routed like chat (resolution, combos, fallback,
 * limits, usage log, telemetry headers) to a provider kind with a form endpoint and a model of the
 * operation's type (or undeclared), sent on from disk (each attempt reads the files again, so a
 * fallback can resend them), and removed before the answer goes out.
 */
import { setOperationHeaders } from './operation-run.js';
import { openAsBlob } from 'node:fs';
import { join } from 'node:path';
import type { RequestContext } from '../../../http/context.js';
import { badRequest } from '../../../http/errors.js';
import { removeSpooled, spoolForm, type FormSpoolOptions, type SpooledForm } from '../../../http/multipart-spool.js';
import { sendText } from '../../../http/respond.js';
import { costFor, recordRequest, upstreamOptions } from '../../completion.js';
import type { MediaUsage } from '../../pricing.js';
import { newUpstreamForm } from '../../providers/http.js';
import { callFormOperation } from '../../providers/index.js';
import type { GatewayServices } from '../../services.js';
import { fly, type Pipeline, type Verdict } from '../../pipeline/stage.js';
import { concurrencyStage, listenStage, routeStage } from '../../pipeline/stages.js';
import { operationAttemptsStage, operationLimitsStage, OperationFlight, recordFailure, targetsStage } from '../../pipeline/operation.js';
import { capableTargets } from './operation-targets.js';

export interface FormOperation {
  endpoint: string;
  route: string;
  /** Path under the provider's base URL. */
  path: string;
  type: string;
  /** Words for the 400 when a provider kind has no such endpoint ("has no transcription endpoint"). */
  endpointName: string;
  spool(svc: GatewayServices): Omit<FormSpoolOptions, 'dir'>;
  /** Checks the spooled form (400 on a bad one). */
  validate(form: SpooledForm): void;
  /** Input tokens and media units the answer is charged for. */
  usage(answer: { text: string; contentType: string }, form: SpooledForm): { tokensIn: number; media: MediaUsage };
  /** The answer as the client gets it (`ref` is the `<provider>/<model>` that answered). */
  answer?(text: string, contentType: string, ref: string): string;
}

type FormFlight = OperationFlight<SpooledForm, Awaited<ReturnType<typeof callFormOperation>>>;

/**
 * A form operation's stages: the upload spooled (its files removed on every exit), checked, routed to
 * the targets with a form endpoint of its type, sent from disk, answered as text.
 */
export function formOperationPipeline(svc: GatewayServices, op: FormOperation): Pipeline<FormFlight> {
  const need = { fn: 'formOperation', path: op.path, route: op.route, endpoint: op.endpointName, type: op.type } as const;
  return {
    stages: [
      {
        name: 'parse',
        run: (f) =>
          spoolForm(f.ctx, { dir: join(svc.uploadsDir(), 'tmp'), ...op.spool(svc) }).then((form) => {
            f.undo.push(() => removeSpooled(form.files));
            f.begin(form, form.fields.model ?? '', op.endpoint, false, svc.clock.now());
            return 'next' as const;
          }),
      },
      listenStage(),
      {
        name: 'validate',
        run(f) {
          if (!f.model) throw badRequest('model is required (a form field)');
          op.validate(f.body);
          return 'next';
        },
      },
      routeStage(svc, (f: FormFlight) => f.model),
      targetsStage((f, resolution) => capableTargets(resolution, need, f.body.fields)),
      operationLimitsStage(svc),
      concurrencyStage(svc),
      operationAttemptsStage(svc, async (f, s, signal) => {
        // A fresh form each attempt: the file parts are read from disk again.
        const form = f.body;
        const upstream = newUpstreamForm();
        for (const [k, v] of Object.entries(form.fields)) upstream.append(k, k === 'model' ? s.modelId : v);
        for (const [k, vs] of Object.entries(form.lists)) for (const v of vs) upstream.append(`${k}[]`, v);
        for (const f of form.files) upstream.append(f.field, await openAsBlob(f.path, { type: f.mimeType }), f.filename);
        return await callFormOperation(s.provider.conn, { id: s.account.id, apiKey: s.account.apiKey }, op.path, upstream, upstreamOptions(svc, s.provider.config.id, s.account.id, signal));
      }),
      {
        name: 'respond',
        async run(f): Promise<Verdict> {
          const { ctx, resolution, startedAt, sessionId } = f;
          const form = f.body;
          const run = f.run!;
          // Removed before answering: once the client has its answer, nothing of the upload is left.
          await removeSpooled(form.files);
          const { tokensIn, media } = op.usage(run.value, form);
          const usage = { inputTokens: tokensIn, outputTokens: 0 };
          const cost = costFor(svc, run.subject, usage, media);
          setOperationHeaders(ctx, svc, { resolution: resolution!, subject: run.subject, failedAttempts: run.failedAttempts, startedAt, ...(sessionId !== undefined ? { sessionId } : {}), tokensIn, cost });
          const text = op.answer ? op.answer(run.value.text, run.value.contentType, run.subject.ref) : run.value.text;
          sendText(ctx.res, 200, text, run.value.contentType);
          recordRequest(svc, { input: f.info, resolution, subject: run.subject, status: 200, usage, cost, attempts: run.attempts, failedAttempts: run.failedAttempts, startedAt });
          return 'answered';
        },
      },
    ],
    fail: recordFailure(svc),
  };
}

/** Serve one form operation through its pipeline (built once by the routes with `formOperationPipeline`). */
export function serveFormOperation(ctx: RequestContext, pipeline: Pipeline<FormFlight>, providerScope?: string): Promise<void> {
  return fly(pipeline, new OperationFlight(ctx, providerScope));
}
