/**
 * Token counting for `/v1/messages/count_tokens` and prompt estimates (gpt-tokenizer, o200k_base).
 * The tokenizer's tables are a few MB: they are loaded on first use, on the token-count thread.
 * Counts are estimates for non-OpenAI models: each provider has its own tokenizer.
 */
import { textOf, type CanonicalRequest } from '../canonical.js';
import { countOnLane } from './token-lane.js';

/**
 * Tokens in `text`, counted on the token-count thread (the tokenizer loads and counts there, never
 * on the event loop every API shares). Exact for texts up to a piece (2048 characters) and for
 * ordinary prose; past a million characters the rest is extrapolated (token-pieces.ts).
 */
export function countText(text: string): Promise<number> {
  return countOnLane(text);
}

/** Per-message and per-image overheads, roughly what the chat formats add around content. */
const PER_MESSAGE = 4;
const PER_IMAGE = 85;

/** Everything in a request that is sent to the model as prompt, flattened to text. */
export function promptText(req: CanonicalRequest): { text: string; messages: number; images: number } {
  let text = req.system ?? '';
  let images = 0;
  for (const m of req.messages) {
    text += '\n' + textOf(m.content);
    for (const p of m.content) if (p.type === 'image') images++;
    if (m.role === 'assistant') {
      if (m.reasoning) text += '\n' + m.reasoning;
      for (const c of m.toolCalls ?? []) text += `\n${c.name}(${c.arguments})`;
    }
  }
  for (const t of req.tools ?? []) text += `\n${t.name}: ${t.description ?? ''} ${JSON.stringify(t.parameters)}`;
  return { text, messages: req.messages.length + (req.system ? 1 : 0), images };
}

/** Estimated prompt tokens of a request. */
export async function countTokens(req: CanonicalRequest): Promise<number> {
  const { text, messages, images } = promptText(req);
  return (await countText(text)) + messages * PER_MESSAGE + images * PER_IMAGE + 3;
}

/** Cheap synchronous estimate (about 4 characters a token) where loading the tokenizer is not worth it. */
export function estimateTokens(req: CanonicalRequest): number {
  const { text, messages, images } = promptText(req);
  return Math.ceil(text.length / 4) + messages * PER_MESSAGE + images * PER_IMAGE + 3;
}
