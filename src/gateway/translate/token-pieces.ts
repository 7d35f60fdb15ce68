/**
 * Counting a long text's tokens piece by piece (the token-count thread's work, token-worker.ts):
 * pieces of at most PIECE characters cut at whitespace, so the count is exact for ordinary text,
 * and runs without whitespace cut every WORD_MAX characters, so it stays bounded.
 */

export type CountFn = (text: string) => number;

/** Text is counted in pieces of at most this many characters, cut at whitespace. */
export const PIECE = 2048;
/**
 * The longest run without whitespace counted in one piece: the tokenizer's byte-pair merging grows
 * faster than linearly with a word's length (200,000 letters without a space took minutes), so a
 * longer run is counted 256 characters at a time.
 */
const WORD_MAX = 256;
/** Texts past this are counted exactly up to it and extrapolated for the rest. */
export const COUNT_EXACT_MAX = 1_000_000;

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
 * The part of a text the count reads: past COUNT_EXACT_MAX characters only the piece that crosses
 * it is read further (the rest is extrapolated from the length), so only this much needs copying to
 * the thread.
 */
export function countedPart(text: string): string {
  return text.length <= COUNT_EXACT_MAX + PIECE ? text : text.slice(0, COUNT_EXACT_MAX + PIECE);
}

/**
 * Tokens in a text of `length` characters whose first characters are `text` (countedPart of it):
 * exact for texts up to PIECE characters (whole pieces are the same words the tokenizer would see);
 * past COUNT_EXACT_MAX characters the rest is extrapolated.
 */
export function countInPieces(count: CountFn, text: string, length = text.length): number {
  if (length <= PIECE) return count(text);
  const limit = Math.min(length, COUNT_EXACT_MAX);
  let tokens = 0;
  let i = 0;
  while (i < limit) {
    const end = pieceEnd(text, i);
    tokens += count(text.slice(i, end));
    i = end;
  }
  return i >= length ? tokens : Math.ceil((tokens * length) / i);
}
