/**
 * Structured embedding items → provider wire shapes (seed rule 2: canonical items are never forwarded
 * unchanged). Remote media is fetched server-side under the SSRF policy and sent inline, so providers
 * never receive the original URL.
 */
import { GatewayError } from '../errors.js';
import type { EmbeddingItem, MediaSource } from '../canonical.js';
import { fetchMedia } from './media.js';
import type { CallOptions } from './types.js';

export interface InlineMedia {
  mediaType: string;
  data: string;
}

export async function inlineMedia(src: MediaSource, opts: CallOptions): Promise<InlineMedia> {
  if (src.type === 'base64') return { mediaType: src.mediaType, data: src.data };
  const m = await fetchMedia(src.url, opts.egress, opts.media, opts.signal);
  return { mediaType: m.mediaType, data: m.data.toString('base64') };
}

/** Seed limit: 16 MiB of decoded media per request, fetched or inline. */
export const REQUEST_MEDIA_BUDGET = 16 * 1024 * 1024;

function budget(): (m: InlineMedia) => InlineMedia {
  let total = 0;
  return (m) => {
    total += Math.floor((m.data.length * 3) / 4);
    if (total > REQUEST_MEDIA_BUDGET) throw new GatewayError('invalid', `embedding media decodes to more than ${REQUEST_MEDIA_BUDGET} bytes (16 MiB per request)`);
    return m;
  };
}

/** OpenAI-compatible multimodal family: one modality-keyed object per item, data URIs for media. */
export async function encodeEmbeddingItemsModalityKeyed(items: EmbeddingItem[], opts: CallOptions): Promise<Record<string, string>[]> {
  const out: Record<string, string>[] = [];
  const count = budget();
  for (const it of items) {
    if (it.type === 'text') out.push({ text: it.text });
    else {
      const m = count(await inlineMedia(it.source, opts));
      out.push({ [it.type]: `data:${m.mediaType};base64,${m.data}` });
    }
  }
  return out;
}

/** Gemini family: one native embed request whose content has one part per item. */
export async function encodeEmbeddingItemsAsParts(items: EmbeddingItem[], opts: CallOptions): Promise<Record<string, unknown>[]> {
  const parts: Record<string, unknown>[] = [];
  const count = budget();
  for (const it of items) {
    if (it.type === 'text') parts.push({ text: it.text });
    else {
      const m = count(await inlineMedia(it.source, opts));
      parts.push({ inlineData: { mimeType: m.mediaType, data: m.data } });
    }
  }
  return parts;
}
