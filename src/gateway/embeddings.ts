/**
 * `POST /v1/embeddings` bodies (seed: Embeddings request): input as a string, a token list, an array of
 * either, or an array of structured items ({type: text|image|audio|video|document}); `dimensions`,
 * `encoding_format`. Limits: at most 32 structured items, inline base64 at most 8 MiB decoded per item
 * and 16 MiB per request, remote media only as https URLs (fetched server-side by the provider layer).
 * Structured input needs a model that declares its embedding modalities.
 */
import { badRequest } from '../http/errors.js';
import type {
  CanonicalEmbeddingsRequest,
  CanonicalEmbeddingsResponse,
  EmbeddingInput,
  EmbeddingItem,
  EmbeddingModality,
  MediaSource,
} from './canonical.js';
import type { ModelCapabilities } from './providers/types.js';

export const MAX_EMBEDDING_ITEMS = 32;
export const MAX_ITEM_BYTES = 8 * 1024 * 1024;
export const MAX_REQUEST_MEDIA_BYTES = 16 * 1024 * 1024;
/** Bound on plain inputs (OpenAI allows 2048 per request). */
export const MAX_PLAIN_INPUTS = 2048;

const MODALITIES = new Set<EmbeddingModality>(['text', 'image', 'audio', 'video', 'document']);
const KNOWN = new Set(['model', 'input', 'dimensions', 'encoding_format']);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Decoded size of base64 text (whitespace ignored), or -1 when it is not base64. */
export function base64DecodedSize(data: string): number {
  const s = data.replace(/\s+/g, '');
  if (s.length % 4 === 1 || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(s)) return -1;
  const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  return Math.floor((s.length * 3) / 4) - pad;
}

function isTokenList(v: unknown): v is number[] {
  return Array.isArray(v) && v.length > 0 && v.every((t) => typeof t === 'number' && Number.isInteger(t) && t >= 0);
}

function parseSource(v: unknown, path: string): { source: MediaSource; bytes: number } {
  if (!isObject(v)) throw badRequest(`${path} must be an object ({type: url, url} or {type: base64, data, media_type})`);
  if (v.type === 'url') {
    if (typeof v.url !== 'string') throw badRequest(`${path}/url must be a string`);
    let u: URL;
    try {
      u = new URL(v.url);
    } catch {
      throw badRequest(`${path}/url is not a valid URL`);
    }
    if (u.protocol !== 'https:') throw badRequest(`${path}/url must be a public https URL`);
    return { source: { type: 'url', url: v.url }, bytes: 0 };
  }
  if (v.type === 'base64') {
    if (typeof v.data !== 'string' || v.data === '') throw badRequest(`${path}/data must be a non-empty base64 string`);
    const mediaType = v.media_type ?? v.mediaType;
    if (typeof mediaType !== 'string' || !/^[\w.+-]+\/[\w.+-]+$/.test(mediaType)) throw badRequest(`${path}/media_type must be a MIME type`);
    const bytes = base64DecodedSize(v.data);
    if (bytes < 0) throw badRequest(`${path}/data is not valid base64`);
    if (bytes > MAX_ITEM_BYTES) throw badRequest(`${path}/data decodes to ${bytes} bytes; the limit is ${MAX_ITEM_BYTES} (8 MiB) per item`);
    return { source: { type: 'base64', data: v.data.replace(/\s+/g, ''), mediaType }, bytes };
  }
  throw badRequest(`${path}/type must be "url" or "base64"`);
}

function parseItems(values: unknown[]): EmbeddingInput {
  if (values.length > MAX_EMBEDDING_ITEMS) throw badRequest(`body/input has ${values.length} structured items; at most ${MAX_EMBEDDING_ITEMS} are allowed`);
  let total = 0;
  const items: EmbeddingItem[] = values.map((it, i) => {
    const path = `body/input/${i}`;
    if (!isObject(it)) throw badRequest(`${path} must be a structured item object (mixing strings and items is not allowed)`);
    const type = it.type;
    if (typeof type !== 'string' || !MODALITIES.has(type as EmbeddingModality)) throw badRequest(`${path}/type must be one of text, image, audio, video, document`);
    if (type === 'text') {
      if (typeof it.text !== 'string') throw badRequest(`${path}/text must be a string`);
      return { type: 'text', text: it.text };
    }
    const { source, bytes } = parseSource(it.source, `${path}/source`);
    total += bytes;
    if (total > MAX_REQUEST_MEDIA_BYTES) throw badRequest(`inline media in body/input decodes to more than ${MAX_REQUEST_MEDIA_BYTES} bytes (16 MiB per request)`);
    return { type: type as Exclude<EmbeddingModality, 'text'>, source };
  });
  return { kind: 'items', values: items };
}

function parseInput(v: unknown): EmbeddingInput {
  if (typeof v === 'string') return { kind: 'strings', values: [v], single: true };
  if (!Array.isArray(v)) throw badRequest('body/input must be a string, a token list, an array of strings or token lists, or an array of structured items');
  if (v.length === 0) throw badRequest('body/input must not be empty');
  if (isTokenList(v)) return { kind: 'tokens', values: [v], single: true };
  if (v.every((s) => typeof s === 'string')) {
    if (v.length > MAX_PLAIN_INPUTS) throw badRequest(`body/input has ${v.length} entries; at most ${MAX_PLAIN_INPUTS} are allowed`);
    return { kind: 'strings', values: v as string[], single: false };
  }
  if (v.every(isTokenList)) {
    if (v.length > MAX_PLAIN_INPUTS) throw badRequest(`body/input has ${v.length} entries; at most ${MAX_PLAIN_INPUTS} are allowed`);
    return { kind: 'tokens', values: v as number[][], single: false };
  }
  if (v.some(isObject)) return parseItems(v);
  throw badRequest('body/input must be a string, a token list, an array of strings or token lists, or an array of structured items');
}

/** Validate and parse an embeddings body. Throws HttpError 400 naming the problem. */
export function parseEmbeddingsRequest(body: unknown): CanonicalEmbeddingsRequest {
  if (!isObject(body)) throw badRequest('body must be a JSON object');
  if (typeof body.model !== 'string' || body.model.trim() === '') throw badRequest('body/model is required (a string)');
  if (body.input === undefined || body.input === null) throw badRequest('body/input is required');
  const req: CanonicalEmbeddingsRequest = { model: body.model, input: parseInput(body.input) };
  if (body.dimensions !== undefined && body.dimensions !== null) {
    if (typeof body.dimensions !== 'number' || !Number.isInteger(body.dimensions) || body.dimensions < 1) throw badRequest('body/dimensions must be a positive integer');
    req.dimensions = body.dimensions;
  }
  if (body.encoding_format !== undefined && body.encoding_format !== null) {
    if (body.encoding_format !== 'float' && body.encoding_format !== 'base64') throw badRequest('body/encoding_format must be "float" or "base64"');
    req.encodingFormat = body.encoding_format;
  }
  // Seed rule 4: extension fields of legacy string/token requests pass through unchanged.
  if (req.input.kind !== 'items') {
    for (const [k, v] of Object.entries(body)) if (!KNOWN.has(k)) (req.extra ??= {})[k] = v;
  }
  return req;
}

/**
 * Check the request against the model's capabilities: structured items only when the model declares
 * embedding modalities, and every item's modality among them. Plain strings and token lists (seed
 * rule 3) are refused only by a model declared as another type; a model without a declared type gets
 * them whatever its id suggests (the upstream decides). 400 otherwise.
 */
export function assertEmbeddingSupport(req: CanonicalEmbeddingsRequest, caps: ModelCapabilities, modelLabel = req.model, declaredType?: string): void {
  if (req.input.kind !== 'items') {
    if (!caps.embeddings && declaredType !== undefined) throw badRequest(`model ${modelLabel} is declared as ${/^[aeiou]/i.test(declaredType) ? 'an' : 'a'} ${declaredType} model, not an embedding model`);
    return;
  }
  if (!caps.embeddings) throw badRequest(`model ${modelLabel} is not an embedding model`);
  if (caps.embeddingModalities.length === 0) {
    throw badRequest(`model ${modelLabel} does not declare multimodal embedding support; structured input items are not accepted (send strings)`);
  }
  for (const [i, it] of req.input.values.entries()) {
    if (!caps.embeddingModalities.includes(it.type)) {
      throw badRequest(`body/input/${i}: model ${modelLabel} does not embed ${it.type} (supported: ${caps.embeddingModalities.join(', ')})`);
    }
  }
}

function toBase64(v: number[]): string {
  const f = new Float32Array(v);
  return Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString('base64');
}

/** OpenAI embeddings list. `model` is the id to show the client. */
export function renderEmbeddingsResponse(res: CanonicalEmbeddingsResponse, req: CanonicalEmbeddingsRequest, model = req.model): unknown {
  return {
    object: 'list',
    data: res.vectors.map((v, index) => ({ object: 'embedding', index, embedding: req.encodingFormat === 'base64' ? toBase64(v) : v })),
    model,
    usage: { prompt_tokens: res.usage.inputTokens, total_tokens: res.usage.inputTokens },
  };
}
