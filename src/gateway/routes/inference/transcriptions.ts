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
import { extname } from 'node:path';
import type { RequestContext } from '../../../http/context.js';
import { badRequest } from '../../../http/errors.js';
import type { Route, Router } from '../../../http/router.js';
import type { GatewayServices } from '../../services.js';
import { formOperationPipeline, serveFormOperation, type FormOperation } from './form-operation.js';

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

const TRANSCRIPTIONS: FormOperation = {
  endpoint: 'transcriptions',
  route: '/v1/audio/transcriptions',
  path: '/audio/transcriptions',
  type: 'transcription',
  endpointName: 'transcription',
  spool: (svc) => ({ fileFields: ['file'], maxFiles: 1, maxBytes: svc.maxAudioBytes, what: 'audio file' }),
  validate(form) {
    const file = form.files[0];
    if (!file) throw badRequest('no audio file in the request: send it in a multipart field named "file"');
    const ext = extname(file.filename).slice(1).toLowerCase();
    if (!EXTENSIONS.has(ext) && MIME_FORMATS[file.mimeType] === undefined) {
      throw badRequest(`unsupported audio format "${ext || file.mimeType}": send mp3, mp4, mpeg, mpga, m4a, wav, webm, flac or ogg`);
    }
    const format = form.fields.response_format ?? 'json';
    if (!RESPONSE_FORMATS.has(format)) throw badRequest(`response_format must be one of ${[...RESPONSE_FORMATS].join(', ')}`);
  },
  usage(answer) {
    const { tokensIn, seconds } = transcriptionUsage(answer.text, answer.contentType);
    return { tokensIn, media: { requests: 1, ...(seconds !== undefined ? { seconds } : {}) } };
  },
};

export function transcriptionRoutes(r: Router, svc: GatewayServices, k: (route: Route) => Route, scope: (svc: GatewayServices, ctx: RequestContext) => string): void {
  const pipeline = formOperationPipeline(svc, TRANSCRIPTIONS);
  k(r.post('/v1/audio/transcriptions', (ctx) => serveFormOperation(ctx, pipeline)));
  k(r.post('/v1/providers/:provider/audio/transcriptions', (ctx) => serveFormOperation(ctx, pipeline, scope(svc, ctx))));
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
