/** One candidate topic found by research. */
export interface ResearchItem {
  /** Stable keys for de-duplication across runs and sources (`hn:<id>`, the normalised URL, `guid:<id>`). */
  keys: string[];
  title: string;
  url: string | null;
  /** Source-side popularity (HN points); 0 when the source has none. */
  score: number;
  comments: number;
  /** Publication time, ms since the epoch; null when unknown. */
  publishedAt: number | null;
  summary: string;
  sourceId: number;
  sourceName: string;
  category: string;
}

/** Canonical form of a link for de-duplication: lower-case host, no fragment, no tracking parameters. */
export function normaliseUrl(raw: string): string | null {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  u.hash = '';
  for (const k of [...u.searchParams.keys()]) {
    if (/^(utm_|fbclid$|gclid$|ref$|ref_src$)/i.test(k)) u.searchParams.delete(k);
  }
  let text = `${u.host.toLowerCase().replace(/^www\./, '')}${u.pathname.replace(/\/+$/, '')}`;
  const q = u.searchParams.toString();
  if (q) text += `?${q}`;
  return text;
}
