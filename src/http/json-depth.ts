/**
 * How deep a JSON text nests, found by one pass over its characters (no parse, no recursion), so a
 * body nested thousands of levels deep is refused before any recursive code (validation, copying,
 * case conversion) can overflow the stack on it.
 */

/** Deepest nesting every API accepts in a request body (documented in the README). */
export const MAX_JSON_DEPTH = 256;

/** True when `text` nests arrays/objects deeper than `max` levels. Strings are skipped. */
export function jsonDeeperThan(text: string, max: number): boolean {
  return indexPastDepth(text, max) !== -1;
}

/**
 * The index of the `[` or `{` that opens level `max + 1`, or -1. A text with at most `max` of
 * those characters in all (strings included) cannot nest deeper: counting them with `indexOf`
 * visits only the brackets, so the usual body is cleared without the character-by-character walk
 * (for a batch of 100 alerts, 23 KB, ~300 steps instead of 23,000: the walk was 12% of the
 * instructions of a cold alert manager's first burst of POSTs).
 */
export function indexPastDepth(text: string, max: number): number {
  if (atMostOpeners(text, max)) return -1;
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string: up to the next quote that is not escaped.
      for (i++; i < n; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c) i++;
        else if (s === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return i;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return -1;
}

/** True when `text` has at most `max` `{` and `[` characters together. */
function atMostOpeners(text: string, max: number): boolean {
  let n = 0;
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++n > max) return false;
  for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++n > max) return false;
  return true;
}
