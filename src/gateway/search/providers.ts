/**
 * One adapter per search kind, each turning `{query, maxResults, timeRange, searchType, safeSearch}`
 * into the provider's call and its answer into `{title, url, snippet, publishedAt?, score?}` rows:
 * SearXNG (`GET /search?format=json`), Brave (`GET /res/v1/web/search`, `/res/v1/news/search`),
 * Tavily (`POST /search`), Exa (`POST /search`) and Serper (`POST /search`, `/news`).
 */
import type { Egress } from '../../egress/index.js';
import { ApiFailure, callJsonApi } from '../providers/api-call.js';
import type { SearchKind, SearchProviderConfig } from './config.js';

export type TimeRange = 'day' | 'week' | 'month' | 'year';

export interface SearchQuery {
  query: string;
  maxResults: number;
  searchType: 'web' | 'news';
  timeRange?: TimeRange;
  safeSearch: boolean;
}

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
  published_at?: string;
  score?: number;
}

/** What each kind supports (GET /v1/search). */
export const CAPABILITIES: Record<SearchKind, { search_types: string[]; time_range: boolean; safe_search: boolean; max_results: number }> = {
  searxng: { search_types: ['web', 'news'], time_range: true, safe_search: true, max_results: 50 },
  brave: { search_types: ['web', 'news'], time_range: true, safe_search: true, max_results: 20 },
  tavily: { search_types: ['web', 'news'], time_range: true, safe_search: false, max_results: 20 },
  exa: { search_types: ['web', 'news'], time_range: true, safe_search: false, max_results: 50 },
  serper: { search_types: ['web', 'news'], time_range: true, safe_search: false, max_results: 50 },
};

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObject) : []);

function row(title: unknown, url: unknown, snippet: unknown, published?: unknown, score?: unknown): SearchResult | undefined {
  if (typeof url !== 'string' || url === '') return undefined;
  return {
    title: str(title),
    url,
    snippet: str(snippet),
    ...(typeof published === 'string' && published ? { published_at: published } : {}),
    ...(typeof score === 'number' && Number.isFinite(score) ? { score } : {}),
  };
}

const rows = (items: (SearchResult | undefined)[], max: number) => items.filter((r): r is SearchResult => r !== undefined).slice(0, max);

const SINCE_DAYS: Record<TimeRange, number> = { day: 1, week: 7, month: 31, year: 366 };

export async function runSearch(p: SearchProviderConfig, q: SearchQuery, egress: Egress, now: number): Promise<SearchResult[]> {
  const what = `search provider ${p.id}`;
  const call = (method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: unknown) => callJsonApi(egress, { method, url: `${p.baseUrl}${path}`, headers, ...(body !== undefined ? { body } : {}), timeoutMs: p.timeoutMs, maxBytes: 8 * 1024 * 1024, what });
  const key = p.apiKey ?? '';
  switch (p.kind) {
    case 'searxng': {
      const params = new URLSearchParams({ q: q.query, format: 'json', safesearch: q.safeSearch ? '1' : '0', ...(q.searchType === 'news' ? { categories: 'news' } : {}), ...(q.timeRange ? { time_range: q.timeRange } : {}) });
      const j = await call('GET', `/search?${params}`, key ? { authorization: `Bearer ${key}` } : {});
      return rows(list(isObject(j) ? j.results : undefined).map((r) => row(r.title, r.url, r.content, r.publishedDate, r.score)), q.maxResults);
    }
    case 'brave': {
      const freshness = q.timeRange ? { day: 'pd', week: 'pw', month: 'pm', year: 'py' }[q.timeRange] : undefined;
      const params = new URLSearchParams({ q: q.query, count: String(Math.min(q.maxResults, 20)), safesearch: q.safeSearch ? 'strict' : 'off', ...(freshness ? { freshness } : {}) });
      const j = await call('GET', `/res/v1/${q.searchType === 'news' ? 'news' : 'web'}/search?${params}`, { 'x-subscription-token': key });
      const items = q.searchType === 'news' ? list(isObject(j) ? j.results : undefined) : list(isObject(j) && isObject(j.web) ? j.web.results : undefined);
      return rows(items.map((r) => row(r.title, r.url, r.description, r.page_age ?? r.age)), q.maxResults);
    }
    case 'tavily': {
      const j = await call('POST', '/search', { authorization: `Bearer ${key}` }, { query: q.query, max_results: Math.min(q.maxResults, 20), topic: q.searchType === 'news' ? 'news' : 'general', ...(q.timeRange ? { time_range: q.timeRange } : {}) });
      return rows(list(isObject(j) ? j.results : undefined).map((r) => row(r.title, r.url, r.content, r.published_date, r.score)), q.maxResults);
    }
    case 'exa': {
      const since = q.timeRange ? new Date(now - SINCE_DAYS[q.timeRange] * 86_400_000).toISOString() : undefined;
      const j = await call('POST', '/search', { 'x-api-key': key }, { query: q.query, numResults: q.maxResults, ...(q.searchType === 'news' ? { category: 'news' } : {}), ...(since ? { startPublishedDate: since } : {}), contents: { text: { maxCharacters: 500 } } });
      return rows(list(isObject(j) ? j.results : undefined).map((r) => row(r.title, r.url, r.text ?? r.summary, r.publishedDate, r.score)), q.maxResults);
    }
    case 'serper': {
      const tbs = q.timeRange ? { day: 'qdr:d', week: 'qdr:w', month: 'qdr:m', year: 'qdr:y' }[q.timeRange] : undefined;
      const j = await call('POST', q.searchType === 'news' ? '/news' : '/search', { 'x-api-key': key }, { q: q.query, num: q.maxResults, ...(tbs ? { tbs } : {}) });
      const items = list(isObject(j) ? (q.searchType === 'news' ? j.news : j.organic) : undefined);
      return rows(items.map((r) => row(r.title, r.link, r.snippet, r.date)), q.maxResults);
    }
  }
  throw new ApiFailure(500, `unknown search kind ${String(p.kind)}`);
}
