/**
 * RSS 2.0, RSS 1.0 (RDF) and Atom feeds, parsed with fast-xml-parser. Entities are decoded by us
 * (the parser's entity processing is off), so DOCTYPE entity tricks cannot expand.
 */
import type { XMLParser } from 'fast-xml-parser';
import { lazyRequire } from '../../http/lazy.js';
import type { Egress } from '../../egress/index.js';
import type { Source } from '../data/sources.js';
import { FetchError, fetchUserText, redact } from './http.js';
import { decodeEntities, stripHtml } from './text.js';
import { normaliseUrl, type ResearchItem } from './types.js';

export interface FeedOptions {
  maxItems: number;
  timeoutMs: number;
  maxBytes: number;
}

const fxp = lazyRequire<typeof import('fast-xml-parser')>('fast-xml-parser');
let parserInstance: XMLParser | undefined;
const parser = () => (parserInstance ??= new (fxp().XMLParser)({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  processEntities: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  isArray: (name) => name === 'item' || name === 'entry' || name === 'link',
}));

export async function fetchFeed(egress: Egress, source: Source, o: FeedOptions, signal: AbortSignal): Promise<ResearchItem[]> {
  const r = await fetchUserText(egress, source.url, {
    timeoutMs: o.timeoutMs,
    maxBytes: o.maxBytes,
    signal,
    headers: { accept: 'application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5' },
  });
  if (r.status < 200 || r.status > 299) throw new FetchError(`HTTP ${r.status} from ${redact(source.url)}`, r.status);
  return parseFeed(r.text, source).slice(0, o.maxItems);
}

/** Parse a feed document; throws FetchError when it is not well-formed RSS or Atom. */
export function parseFeed(xml: string, source: Pick<Source, 'id' | 'name' | 'category'>): ResearchItem[] {
  const text = xml.replace(/^\uFEFF/, '').trim();
  if (!text.startsWith('<')) throw new FetchError('not an RSS or Atom feed (the body is not XML)');
  const valid = fxp().XMLValidator.validate(text);
  if (valid !== true) throw new FetchError(`not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`);
  const doc = parser().parse(text) as Record<string, unknown>;
  const rss = obj(doc.rss);
  const rdf = obj(doc['rdf:RDF']);
  const atom = obj(doc.feed);
  let entries: Record<string, unknown>[];
  let kind: 'rss' | 'atom';
  if (rss) {
    entries = arr(obj(rss.channel)?.item);
    kind = 'rss';
  } else if (rdf) {
    entries = arr(rdf.item);
    kind = 'rss';
  } else if (atom) {
    entries = arr(atom.entry);
    kind = 'atom';
  } else {
    throw new FetchError('not an RSS or Atom feed (no <rss>, <rdf:RDF> or <feed> root)');
  }
  const out: ResearchItem[] = [];
  for (const e of entries) {
    const item = kind === 'rss' ? fromRss(e, source) : fromAtom(e, source);
    if (item) out.push(item);
  }
  return out;
}

function fromRss(e: Record<string, unknown>, source: Pick<Source, 'id' | 'name' | 'category'>): ResearchItem | null {
  const title = textOf(e.title);
  const link = arr(e.link).map(textOf).find((l) => l !== '') ?? '';
  const guid = textOf(e.guid);
  const date = textOf(e.pubDate) || textOf(e['dc:date']) || textOf(e.published) || textOf(e.updated);
  const summary = textOf(e.description) || textOf(e['content:encoded']);
  return build(title, link || (isUrl(guid) ? guid : ''), guid, date, summary, source);
}

function fromAtom(e: Record<string, unknown>, source: Pick<Source, 'id' | 'name' | 'category'>): ResearchItem | null {
  const title = textOf(e.title);
  const links = arr(e.link);
  const alternate = links.find((l) => !l['@_rel'] || l['@_rel'] === 'alternate') ?? links[0];
  const link = alternate ? String(alternate['@_href'] ?? '') : '';
  const id = textOf(e.id);
  const date = textOf(e.published) || textOf(e.updated);
  const summary = textOf(e.summary) || textOf(e.content);
  return build(title, link, id, date, summary, source);
}

function build(
  title: string,
  link: string,
  guid: string,
  date: string,
  summary: string,
  source: Pick<Source, 'id' | 'name' | 'category'>,
): ResearchItem | null {
  const cleanTitle = stripHtml(decodeEntities(title)).slice(0, 500);
  if (!cleanTitle) return null;
  link = decodeEntities(link);
  const norm = link ? normaliseUrl(link) : null;
  const keys: string[] = [];
  if (norm) keys.push(norm);
  guid = decodeEntities(guid);
  if (guid) keys.push(`guid:${guid.slice(0, 300)}`);
  if (keys.length === 0) keys.push(`title:${source.id}:${cleanTitle.toLowerCase()}`);
  const t = date ? Date.parse(date) : NaN;
  return {
    keys,
    title: cleanTitle,
    url: norm ? link : null,
    score: 0,
    comments: 0,
    publishedAt: Number.isFinite(t) ? t : null,
    summary: stripHtml(decodeEntities(summary)).slice(0, 500),
    sourceId: source.id,
    sourceName: source.name,
    category: source.category,
  };
}

function obj(v: unknown): Record<string, unknown> | null {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

function arr(v: unknown): Record<string, unknown>[] {
  const list = Array.isArray(v) ? v : v === undefined || v === null ? [] : [v];
  return list.map((x) => (typeof x === 'object' && x !== null ? (x as Record<string, unknown>) : { '#text': x }));
}

/** Text content of an element that may be a string, a number or `{#text, @_attr}`. */
function textOf(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v).trim();
  if (Array.isArray(v)) return textOf(v[0]);
  if (typeof v === 'object') return textOf((v as Record<string, unknown>)['#text']);
  return '';
}

function isUrl(s: string): boolean {
  return /^https?:\/\//i.test(s);
}
