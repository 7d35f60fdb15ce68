/**
 * `POST /v1/audio/transcriptions` (and `/v1/providers/{provider}/audio/transcriptions`): OpenAI's
 * multipart upload (`file`, `model`, `language`, `prompt`, `response_format` json/text/srt/vtt/
 * verbose_json, `temperature`, `timestamp_granularities[]`), routed like chat to OpenAI-compatible
 * providers with a `transcription` (or undeclared) model. The file is spooled to a temp file as it
 * arrives (ctl.yaml `gateway.max_audio_bytes`, 25 MiB by default as OpenAI's; never held in memory), sent to the upstream from disk (so a
 * fallback can send it again), and removed afterwards. Formats: mp3, mp4, mpeg, mpga, m4a, wav, webm,
 * flac, ogg (by name or content type); another is a 400. The answer is the upstream's, with its
 * content type.
 */
import { openAsBlob } from 'node:fs';
import { rm } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { RequestContext } from '../../../http/context.js';
import { badRequest } from '../../../http/errors.js';
import { spoolUpload } from '../../../http/multipart-spool.js';
import { sendText } from '../../../http/respond.js';
import type { Route, Router } from '../../../http/router.js';
import { RequestAbort } from '../../abort.js';
import type { Principal } from '../../auth.js';
import { attemptDeps, costFor, failRequest, recordRequest, resolveFor } from '../../completion.js';
import { checkLimits } from '../../limits/index.js';
import { newUpstreamForm } from '../../providers/http.js';
import { callFormOperation, modelSpec, providerAdapter } from '../../providers/index.js';
import { runAttempts } from '../../routing/attempts.js';
import type { Resolution } from '../../routing/resolve.js';
import { orderTargets } from '../../routing/strategies.js';
import type { GatewayServices } from '../../services.js';
import { withArticle } from './models.js';
import { sessionIdOf, setTelemetryHeaders } from '../../telemetry.js';

export const MAX_AUDIO_BYTES = 25 * 1024 * 1024;
const EXTENSIONS = new Set(['mp3', 'mp4', 'mpeg', 'mpga', 'm4a', 'wav', 'webm', 'flac', 'ogg', 'oga']);
const MIME_FORMATS: Record<string, string> = {
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
  'audio/mp4': 'm4a',
  'audio/x-m4a': 'm4a',
  'audio/m4a': 'm4a',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/webm': 'webm',
  'video/webm': 'webm',
  'audio/flac': 'flac',
  'audio/x-flac': 'flac',
  'audio/ogg': 'ogg',
  'video/mp4': 'mp4',
};
const RESPONSE_FORMATS = new Set(['json', 'text', 'srt', 'verbose_json', 'vtt']);

function qualifies(t: Resolution['targets'][number]): boolean {
  if (!providerAdapter(t.provider.conn.kind).formOperation) return false;
  const spec = modelSpec(t.provider.conn, t.modelId) as { type?: string; typeDeclared?: boolean } | undefined;
  return !spec?.typeDeclared || spec.type === 'transcription';
}

async function serveTranscription(ctx: RequestContext, svc: GatewayServices, providerScope?: string): Promise<void> {
  const principal = ctx.state.principal as Principal;
  const upload = await spoolUpload(ctx, { dir: join(svc.uploadsDir(), 'tmp'), fileField: 'file', maxBytes: svc.maxAudioBytes, what: 'audio file' });
  const startedAt = svc.clock.now();
  const sessionId = sessionIdOf(ctx.req);
  const info = { endpoint: 'transcriptions', requestId: ctx.requestId, principal, stream: false, model: upload.fields.model ?? '', ...(sessionId !== undefined ? { sessionId } : {}) };
  const abort = new RequestAbort();
  const onClose = () => {
    if (!ctx.res.writableFinished) abort.abort();
  };
  ctx.res.once('close', onClose);
  let resolution: Resolution | undefined;
  let release: (() => void) | undefined;
  try {
    const model = upload.fields.model;
    if (!model) throw badRequest('model is required (a form field)');
    const ext = extname(upload.filename).slice(1).toLowerCase();
    if (!EXTENSIONS.has(ext) && MIME_FORMATS[upload.mimeType] === undefined) {
      throw badRequest(`unsupported audio format "${ext || upload.mimeType}": send mp3, mp4, mpeg, mpga, m4a, wav, webm, flac or ogg`);
    }
    const format = upload.fields.response_format ?? 'json';
    if (!RESPONSE_FORMATS.has(format)) throw badRequest(`response_format must be one of ${[...RESPONSE_FORMATS].join(', ')}`);
    resolution = resolveFor(svc, model, principal, providerScope);
    const capable = resolution.targets.filter(qualifies);
    if (capable.length === 0) {
      const t = resolution.targets[0]!;
      const spec = modelSpec(t.provider.conn, t.modelId) as { type?: string } | undefined;
      throw badRequest(`model ${t.ref} cannot serve /v1/audio/transcriptions: ${providerAdapter(t.provider.conn.kind).formOperation ? `it is declared as ${withArticle(String(spec?.type))} model` : `provider kind ${t.provider.conn.kind} has no transcription endpoint`}`);
    }
    const settings = svc.state.catalog.settings;
    checkLimits(svc, principal, resolution);
    release = svc.concurrency.tryGlobal() ?? (await svc.concurrency.acquireGlobal(abort));
    const run = await runAttempts(
      {
        resolution,
        ordered: orderTargets(resolution.strategy, resolution.combo?.name, capable, svc.strategy),
        request: { requestId: ctx.requestId, ...(sessionId ? { sessionId } : {}), ...(principal.key ? { apiKeyId: principal.key.id } : {}) },
        maxAttempts: resolution.combo?.maxAttempts ?? settings.maxAttempts,
        retryWaitMaxMs: settings.retryWaitMaxMs,
        signal: abort,
      },
      attemptDeps(svc),
      async (s, signal) => {
        // A fresh form each attempt: the file part is read from disk again.
        const form = newUpstreamForm();
        for (const [k, v] of Object.entries(upload.fields)) form.append(k, k === 'model' ? s.modelId : v);
        for (const [k, vs] of Object.entries(upload.lists)) for (const v of vs) form.append(`${k}[]`, v);
        form.append('file', await openAsBlob(upload.path, { type: upload.mimeType }), upload.filename);
        return await callFormOperation(s.provider.conn, { id: s.account.id, apiKey: s.account.apiKey }, '/audio/transcriptions', form, { egress: svc.egress, signal, now: () => svc.clock.now() });
      },
    );
    run.release();
    release();
    release = undefined;
    ctx.res.off('close', onClose);
    // Removed before answering: once the client has its answer, nothing of the upload is left.
    await rm(upload.path, { force: true }).catch(() => undefined);
    const { tokensIn, seconds } = transcriptionUsage(run.value.text, run.value.contentType);
    const usage = { inputTokens: tokensIn, outputTokens: 0 };
    const cost = costFor(svc, run.subject, usage, { requests: 1, ...(seconds !== undefined ? { seconds } : {}) });
    setTelemetryHeaders(ctx.res, {
      decision: { strategy: resolution.strategy, provider: run.subject.provider.config.id, latencyMs: svc.clock.now() - startedAt },
      requestId: ctx.requestId,
      ...(sessionId !== undefined ? { sessionId } : {}),
      provider: run.subject.provider.config.id,
      model: run.subject.modelId,
      fallbackAttempts: run.failedAttempts,
      usage: { tokensIn, tokensOut: 0, cost, latencyMs: svc.clock.now() - startedAt, cacheHit: false },
    });
    sendText(ctx.res, 200, run.value.text, run.value.contentType);
    recordRequest(svc, { input: { ...info, model }, resolution, subject: run.subject, status: 200, usage, cost, attempts: run.attempts, failedAttempts: run.failedAttempts, startedAt });
  } catch (e) {
    release?.();
    throw failRequest(svc, ctx.res, e, { input: info, ...(resolution ? { resolution } : {}), startedAt });
  } finally {
    await rm(upload.path, { force: true }).catch(() => undefined);
  }
}

export function transcriptionRoutes(r: Router, svc: GatewayServices, k: (route: Route) => Route, scope: (svc: GatewayServices, ctx: RequestContext) => string): void {
  k(r.post('/v1/audio/transcriptions', (ctx) => serveTranscription(ctx, svc)));
  k(r.post('/v1/providers/:provider/audio/transcriptions', (ctx) => serveTranscription(ctx, svc, scope(svc, ctx))));
}

/**
 * What a transcription is charged for: input tokens (usage.input_tokens, token-priced models) and
 * the audio's seconds (verbose_json `duration`, or usage `{type: "duration", seconds}`; text, srt
 * and vtt answers name neither, so only `per_request` applies to them).
 */
export function transcriptionUsage(text: string, contentType: string): { tokensIn: number; seconds?: number } {
  if (!/json/.test(contentType)) return { tokensIn: 0 };
  let a: { duration?: unknown; usage?: { input_tokens?: unknown; type?: unknown; seconds?: unknown } };
  try {
    a = JSON.parse(text) as typeof a;
  } catch {
    return { tokensIn: 0 }; // not JSON after all: passed on as it is
  }
  if (typeof a !== 'object' || a === null) return { tokensIn: 0 };
  const tokensIn = Number(a.usage?.input_tokens ?? 0) || 0;
  const seconds = [a.duration, a.usage?.type === 'duration' ? a.usage.seconds : undefined].find((x): x is number => typeof x === 'number' && Number.isFinite(x) && x > 0);
  return { tokensIn, ...(seconds !== undefined ? { seconds } : {}) };
}
