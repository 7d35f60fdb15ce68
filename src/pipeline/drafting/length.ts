/**
 * Post length as X counts it (twitter-text v3 rules, simplified): every http(s) link counts 23,
 * characters in the Latin and common punctuation ranges count 1, everything else (CJK, emoji) 2.
 * Over-counting a rare emoji sequence is safe; under-counting would make X refuse the post.
 */
const URL = /https?:\/\/[^\s<>"]+/gi;
const LINK_WEIGHT = 23;
const LIGHT_RANGES: [number, number][] = [
  [0, 4351],
  [8192, 8205],
  [8208, 8223],
  [8242, 8247],
];

export function weightedLength(text: string): number {
  const normalised = text.normalize('NFC');
  let links = 0;
  const withoutLinks = normalised.replace(URL, () => {
    links++;
    return '';
  });
  let n = links * LINK_WEIGHT;
  for (const ch of withoutLinks) {
    const cp = ch.codePointAt(0)!;
    n += LIGHT_RANGES.some(([a, b]) => cp >= a && cp <= b) ? 1 : 2;
  }
  return n;
}

/**
 * Split a long text into parts that each fit `max`, at paragraph, sentence or word boundaries,
 * never inside a link. Returns null when one word alone does not fit.
 */
export function splitIntoParts(text: string, max: number): string[] | null {
  const words = text.trim().split(/\s+/).filter(Boolean);
  const parts: string[] = [];
  let current = '';
  for (const w of words) {
    if (weightedLength(w) > max) return null;
    const candidate = current ? `${current} ${w}` : w;
    if (weightedLength(candidate) <= max) {
      current = candidate;
      continue;
    }
    // Prefer to end the part after the last sentence end when it is not too early.
    const cut = lastSentenceEnd(current);
    if (cut > current.length / 2) {
      parts.push(current.slice(0, cut).trim());
      current = `${current.slice(cut).trim()} ${w}`.trim();
      if (weightedLength(current) > max) {
        parts.push(current.slice(0, current.length - w.length).trim());
        current = w;
      }
    } else {
      parts.push(current);
      current = w;
    }
  }
  if (current) parts.push(current);
  return parts.filter(Boolean);
}

function lastSentenceEnd(text: string): number {
  let best = -1;
  const re = /[.!?…](?=\s|$)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text))) best = m.index + 1;
  return best;
}
