/**
 * What compression never touches: fenced code blocks, inline code, URLs, file paths and JSON
 * objects are cut out (replaced by placeholders no rule can match) before the rules run, and put
 * back byte for byte afterwards.
 */

const OPEN = '\u0000';
const CLOSE = '\u0001';

/** Fenced code, inline code, URLs, paths (two segments or more, or ~/, ./, C:\). */
const PROTECTED = /```[\s\S]*?(?:```|$)|~~~[\s\S]*?(?:~~~|$)|`[^`\n]{1,2000}`|\bhttps?:\/\/[^\s<>"')\]]+|(?:~|\.{1,2})?\/(?:[\w.@+-]+\/)+[\w.@+-]*|\b[A-Za-z]:\\(?:[\w .-]+\\)*[\w .-]*/g;

export interface Protected {
  text: string;
  pieces: string[];
}

/** A balanced JSON object or array starting at `i` (up to 100,000 characters), or -1. */
function jsonEnd(text: string, i: number): number {
  const open = text[i]!;
  const close = open === '{' ? '}' : ']';
  let depth = 0;
  let inString = false;
  for (let j = i; j < text.length && j - i < 100_000; j++) {
    const c = text[j]!;
    if (inString) {
      if (c === '\\') j++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === open) depth++;
    else if (c === close && --depth === 0) return j + 1;
  }
  return -1;
}

export function protect(text: string): Protected {
  const pieces: string[] = [];
  const hold = (s: string) => `${OPEN}${pieces.push(s) - 1}${CLOSE}`;
  let out = text.replace(PROTECTED, hold);
  // JSON: a { or [ whose balanced span parses.
  if (out.includes('{') || out.includes('[')) {
    let result = '';
    let i = 0;
    while (i < out.length) {
      const c = out[i]!;
      if ((c === '{' || c === '[') && out.indexOf('"', i) !== -1) {
        const end = jsonEnd(out, i);
        if (end > i + 1) {
          const span = out.slice(i, end);
          if (!span.includes(OPEN) && /"\s*:/.test(span) ) {
            try {
              JSON.parse(span);
              result += hold(span);
              i = end;
              continue;
            } catch {
              // not JSON: text
            }
          }
        }
      }
      result += c;
      i++;
    }
    out = result;
  }
  return { text: out, pieces };
}

export function restore(p: Protected): string {
  if (p.pieces.length === 0) return p.text;
  return p.text.replace(/\u0000(\d+)\u0001/g, (_, n: string) => p.pieces[Number(n)]!);
}
