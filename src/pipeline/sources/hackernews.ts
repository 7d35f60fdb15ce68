/**
 * Hacker News through its Firebase API: one request for a story list, one per item (bounded
 * concurrency, each with its own timeout). Failing items are skipped; the source fails only when
 * the list fails or every item does.
 */
import type { Egress } from '../../egress/index.js';
import type { Source } from '../data/sources.js';
import { FetchError, fetchJson } from './http.js';
import { stripHtml } from './text.js';
import { normaliseUrl, type ResearchItem } from './types.js';

export interface HackerNewsOptions {
  apiBaseUrl: string;
  maxItems: number;
  timeoutMs: number;
  maxBytes: number;
  concurrency?: number;
}

const LIST_FILE = /^(.*)\/(top|new|best|ask|show|job)stories\.json$/;
const SITE_PATHS: Record<string, string> = { best: 'best', newest: 'new', new: 'new', ask: 'ask', show: 'show', jobs: 'job', front: 'top', news: 'top' };

/**
 * Where to read a source's list. A source URL that is itself an API list (`…/v0/beststories.json`)
 * is used as is; a site URL (`https://news.ycombinator.com/best`) picks the list by its path on the
 * configured API base; anything else reads the top stories.
 */
export function hackerNewsEndpoints(sourceUrl: string, apiBaseUrl: string): { listUrl: string; itemBase: string } {
  const direct = LIST_FILE.exec(sourceUrl.trim());
  if (direct) return { listUrl: sourceUrl.trim(), itemBase: direct[1]! };
  let list = 'top';
  try {
    const first = new URL(sourceUrl).pathname.split('/').filter(Boolean)[0];
    if (first && SITE_PATHS[first]) list = SITE_PATHS[first]!;
  } catch {
    /* empty or non-URL: top stories */
  }
  return { listUrl: `${apiBaseUrl}/${list}stories.json`, itemBase: apiBaseUrl };
}

interface HnItem {
  id?: unknown;
  type?: unknown;
  title?: unknown;
  url?: unknown;
  score?: unknown;
  descendants?: unknown;
  time?: unknown;
  text?: unknown;
  deleted?: unknown;
  dead?: unknown;
}

export async function fetchHackerNews(egress: Egress, source: Source, o: HackerNewsOptions, signal: AbortSignal): Promise<ResearchItem[]> {
  const { listUrl, itemBase } = hackerNewsEndpoints(source.url, o.apiBaseUrl);
  const req = { timeoutMs: o.timeoutMs, maxBytes: o.maxBytes, signal };
  const list = await fetchJson(egress, listUrl, req);
  if (!Array.isArray(list)) throw new FetchError('unexpected answer from the Hacker News API: expected an array of story ids');
  const ids = list.filter((x): x is number => Number.isSafeInteger(x) && x > 0).slice(0, o.maxItems);
  if (ids.length === 0) return [];

  const items: ResearchItem[] = [];
  const errors: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < ids.length && !signal.aborted) {
      const id = ids[next++]!;
      try {
        const raw = (await fetchJson(egress, `${itemBase}/item/${id}.json`, req)) as HnItem | null;
        const item = raw && typeof raw === 'object' ? toItem(raw, source) : null;
        if (item) items.push(item);
      } catch (e) {
        errors.push((e as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.concurrency ?? 8, ids.length) }, worker));
  if (items.length === 0 && errors.length > 0) {
    throw new FetchError(`all ${errors.length} Hacker News item requests failed (first: ${errors[0]})`);
  }
  return items;
}

function toItem(raw: HnItem, source: Source): ResearchItem | null {
  if (raw.deleted === true || raw.dead === true) return null;
  if (raw.type !== 'story' && raw.type !== undefined) return null;
  if (typeof raw.title !== 'string' || raw.title.trim() === '' || !Number.isSafeInteger(raw.id)) return null;
  const url = typeof raw.url === 'string' && normaliseUrl(raw.url) ? raw.url : null;
  const keys = [`hn:${raw.id}`];
  const norm = url && normaliseUrl(url);
  if (norm) keys.push(norm);
  return {
    keys,
    title: raw.title.trim().slice(0, 500),
    url: url ?? `https://news.ycombinator.com/item?id=${raw.id}`,
    score: typeof raw.score === 'number' && raw.score > 0 ? raw.score : 0,
    comments: typeof raw.descendants === 'number' && raw.descendants > 0 ? raw.descendants : 0,
    publishedAt: typeof raw.time === 'number' ? raw.time * 1000 : null,
    summary: typeof raw.text === 'string' ? stripHtml(raw.text).slice(0, 500) : '',
    sourceId: source.id,
    sourceName: source.name,
    category: source.category,
  };
}
