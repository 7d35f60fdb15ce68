/**
 * Token counting for `/v1/messages/count_tokens` and prompt estimates (gpt-tokenizer, o200k_base).
 * The tokenizer's tables are a few MB, so they are loaded on first use, not at start-up.
 * Counts are estimates for non-OpenAI models: each provider has its own tokenizer.
 */
import { textOf, type CanonicalRequest } from '../canonical.js';

export type CountFn = (text: string) => number;
let counter: Promise<CountFn> | undefined;

/** gpt-tokenizer's o200k counter, loaded on first use (also for compression's savings). */
export function loadCounter(): Promise<CountFn> {
  counter ??= import('gpt-tokenizer/encoding/o200k_base').then((m) => (text: string) => m.countTokens(text));
  return counter;
}

/** Text is counted in pieces of at most this many characters, cut at whitespace. */
const PIECE = 2048;
/**
 * The longest run without whitespace counted in one piece: the tokenizer's byte-pair merging grows
 * faster than linearly with a word's length (200,000 letters without a space took minutes), so a
 * longer run is counted 256 characters at a time.
 */
const WORD_MAX = 256;
/** Texts past this are counted exactly up to it and extrapolated for the rest. */
const COUNT_EXACT_MAX = 1_000_000;
/** The loop is given back after this much counting. */
const SLICE_MS = 4;

/** The end of the piece that starts at i. */
function pieceEnd(text: string, i: number): number {
  const end = Math.min(text.length, i + PIECE);
  let lastSpace = -1;
  let run = 0;
  for (let j = i; j < end; j++) {
    const c = text.charCodeAt(j);
    if (c === 32 || c === 10 || c === 9 || c === 13) {
      lastSpace = j;
      run = 0;
    } else if (++run > WORD_MAX) return j;
  }
  return end < text.length && lastSpace > i ? lastSpace : end;
}

/**
 * Tokens in `text`, counted piece by piece and giving the event loop back every few milliseconds,
 * so a huge text never holds it. Exact for texts up to PIECE characters (whole pieces are the same
 * words the tokenizer would see); past COUNT_EXACT_MAX characters the rest is extrapolated.
 */
export async function countText(count: CountFn, text: string): Promise<number> {
  if (text.length <= PIECE) return count(text);
  const limit = Math.min(text.length, COUNT_EXACT_MAX);
  let tokens = 0;
  let i = 0;
  let sliceStart = performance.now();
  while (i < limit) {
    const end = pieceEnd(text, i);
    tokens += count(text.slice(i, end));
    i = end;
    if (performance.now() - sliceStart > SLICE_MS) {
      await new Promise((r) => setImmediate(r));
      sliceStart = performance.now();
    }
  }
  return i >= text.length ? tokens : Math.ceil((tokens * text.length) / i);
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
  const count = await loadCounter();
  const { text, messages, images } = promptText(req);
  return (await countText(count, text)) + messages * PER_MESSAGE + images * PER_IMAGE + 3;
}

/** Cheap synchronous estimate (about 4 characters a token) where loading the tokenizer is not worth it. */
export function estimateTokens(req: CanonicalRequest): number {
  const { text, messages, images } = promptText(req);
  return Math.ceil(text.length / 4) + messages * PER_MESSAGE + images * PER_IMAGE + 3;
}
