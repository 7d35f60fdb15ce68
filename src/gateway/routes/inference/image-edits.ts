/**
 * `POST /v1/images/edits` (and `/v1/providers/{provider}/images/edits`): OpenAI's multipart form
 * (`image`, or `image[]` for up to 16 images; optional `mask`; `prompt`, `model`, `n`, `size`,
 * `quality`, `response_format`, the rest passed on), routed like chat to OpenAI-compatible providers
 * with an `image` (or undeclared) model. Each file is spooled to disk as it arrives (50 MiB each,
 * 100 MiB together, as OpenAI's own limit per image), sent on from disk and removed before the
 * answer. Images are PNG, WebP or JPEG (by name or content type); the mask a PNG. The answer is the
 * upstream's JSON with `model` naming what answered; each image returned is charged `per_image`.
 */
import { extname } from 'node:path';
import type { RequestContext } from '../../../http/context.js';
import { badRequest } from '../../../http/errors.js';
import type { SpooledFile } from '../../../http/multipart-spool.js';
import type { Route, Router } from '../../../http/router.js';
import type { GatewayServices } from '../../services.js';
import { formOperationPipeline, serveFormOperation, type FormOperation } from './form-operation.js';
import { IMAGE_SIZES } from './json-operations.js';

const MAX_IMAGES = 16;
const IMAGE_TYPES: Record<string, string> = { png: 'image/png', webp: 'image/webp', jpg: 'image/jpeg', jpeg: 'image/jpeg' };

function imageFormat(f: SpooledFile): string | undefined {
  const ext = extname(f.filename).slice(1).toLowerCase();
  if (IMAGE_TYPES[ext]) return ext === 'jpeg' ? 'jpg' : ext;
  return Object.entries(IMAGE_TYPES).find(([, mime]) => mime === f.mimeType)?.[0];
}

const isImage = (f: SpooledFile) => f.field === 'image' || f.field === 'image[]';

const IMAGE_EDITS: FormOperation = {
  endpoint: 'images',
  route: '/v1/images/edits',
  path: '/images/edits',
  type: 'image',
  endpointName: 'image edits',
  spool: () => ({ fileFields: ['image', 'image[]', 'mask'], maxFiles: MAX_IMAGES + 1, maxBytes: 50 * 1024 * 1024, maxTotalBytes: 100 * 1024 * 1024, what: 'image' }),
  validate(form) {
    const f = form.fields;
    const images = form.files.filter(isImage);
    const masks = form.files.filter((x) => x.field === 'mask');
    if (images.length === 0) throw badRequest('image is required (a file field, or image[] for several)');
    if (images.length > MAX_IMAGES) throw badRequest(`at most ${MAX_IMAGES} images`);
    if (masks.length > 1) throw badRequest('send one mask');
    for (const img of images) if (!imageFormat(img)) throw badRequest(`unsupported image format "${img.filename}": send PNG, WebP or JPEG`);
    if (masks[0] && imageFormat(masks[0]) !== 'png') throw badRequest('mask must be a PNG');
    if (!f.prompt) throw badRequest('prompt is required (a form field)');
    if (f.prompt.length > 32_000) throw badRequest('prompt: at most 32000 characters');
    if (f.n !== undefined && !/^([1-9]|10)$/.test(f.n)) throw badRequest('n must be an integer from 1 to 10');
    if (f.size !== undefined && !IMAGE_SIZES.test(f.size)) throw badRequest('size must be WIDTHxHEIGHT (e.g. 1024x1024) or auto');
    if (f.response_format !== undefined && f.response_format !== 'url' && f.response_format !== 'b64_json') throw badRequest('response_format must be url or b64_json');
  },
  usage(answer, form) {
    let a: { data?: unknown; usage?: { input_tokens?: unknown; prompt_tokens?: unknown } } = {};
    try {
      a = JSON.parse(answer.text) as typeof a;
    } catch {
      // not JSON: nothing reported
    }
    const f = form.fields;
    const count = Array.isArray(a?.data) ? a.data.length : Number(f.n ?? 1);
    return {
      tokensIn: Number(a?.usage?.input_tokens ?? a?.usage?.prompt_tokens ?? 0) || 0,
      media: { images: { count, ...(f.size ? { size: f.size } : {}), ...(f.quality ? { quality: f.quality } : {}) } },
    };
  },
  answer(text, contentType, ref) {
    if (!/json/.test(contentType)) return text;
    try {
      const a = JSON.parse(text) as Record<string, unknown>;
      return typeof a === 'object' && a !== null && 'model' in a ? JSON.stringify({ ...a, model: ref }) : text;
    } catch {
      return text;
    }
  },
};

export function imageEditRoutes(r: Router, svc: GatewayServices, k: (route: Route) => Route, scope: (svc: GatewayServices, ctx: RequestContext) => string): void {
  const pipeline = formOperationPipeline(svc, IMAGE_EDITS);
  k(r.post('/v1/images/edits', (ctx) => serveFormOperation(ctx, pipeline)));
  k(r.post('/v1/providers/:provider/images/edits', (ctx) => serveFormOperation(ctx, pipeline, scope(svc, ctx))));
}
