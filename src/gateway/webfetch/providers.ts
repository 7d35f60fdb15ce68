/**
 * The four web-fetch providers behind one shape. The hosted ones (Firecrawl's /v1/scrape, Jina
 * Reader, Tavily's /extract) are called at their configured base URL through the egress layer; the
 * built-in one fetches the page itself under ctl's SSRF policy for user URLs and turns its HTML into
 * readable markdown (html-page.ts: Readability over a linkedom document, then Turndown; loaded with the
 * first HTML page, as the three weigh ~30 MB of memory).
 */
import type { Egress } from '../../egress/index.js';
import { fetchUserUrl, UrlRefusedError, type UserUrlResponse } from '../../egress/user-url.js';
import { ApiFailure, callJsonApi, readBounded, retryAfterMs } from '../providers/api-call.js';
import type { HostedFetchConfig, HostedFetchProvider, WebFetchConfig } from './config.js';

export type PageFormat = 'markdown' | 'text' | 'html';

export interface FetchedPage {
  url: string;
  title: string | null;
  content: string;
  format: PageFormat;
}

/** The built-in fetcher refused the address (ctl's SSRF policy), as opposed to the page's own answer. */
export class RefusedUrlFailure extends ApiFailure {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One call to a hosted provider's JSON API (bearer key). */
function hostedCall(egress: Egress, c: HostedFetchConfig, method: 'GET' | 'POST', url: string, body: unknown, extra: Record<string, string> = {}): Promise<unknown> {
  return callJsonApi(egress, { method, url, headers: { authorization: `Bearer ${c.apiKey}`, ...extra }, ...(body !== undefined ? { body } : {}), timeoutMs: c.timeoutMs, what: 'the web fetch provider' });
}

const bad = (what: string) => new ApiFailure(502, `${what} answered an unexpected shape`);

async function firecrawl(egress: Egress, c: HostedFetchConfig, url: string, format: PageFormat): Promise<FetchedPage> {
  const j = await hostedCall(egress, c, 'POST', `${c.baseUrl}/v1/scrape`, { url, formats: [format === 'html' ? 'html' : 'markdown'] });
  const data = isObject(j) && isObject(j.data) ? j.data : undefined;
  const content = data ? (format === 'html' ? data.html : data.markdown) : undefined;
  if (!data || typeof content !== 'string') throw bad('Firecrawl');
  const meta = isObject(data.metadata) ? data.metadata : {};
  return { url: typeof meta.sourceURL === 'string' ? meta.sourceURL : url, title: typeof meta.title === 'string' ? meta.title : null, content, format: format === 'html' ? 'html' : 'markdown' };
}

async function jina(egress: Egress, c: HostedFetchConfig, url: string, format: PageFormat): Promise<FetchedPage> {
  const j = await hostedCall(egress, c, 'GET', `${c.baseUrl}/${url}`, undefined, { 'x-return-format': format });
  const data = isObject(j) && isObject(j.data) ? j.data : undefined;
  if (!data || typeof data.content !== 'string') throw bad('Jina Reader');
  return { url: typeof data.url === 'string' ? data.url : url, title: typeof data.title === 'string' ? data.title : null, content: data.content, format };
}

async function tavily(egress: Egress, c: HostedFetchConfig, url: string, format: PageFormat): Promise<FetchedPage> {
  const j = await hostedCall(egress, c, 'POST', `${c.baseUrl}/extract`, { urls: [url], format: format === 'text' ? 'text' : 'markdown' });
  const r = isObject(j) && Array.isArray(j.results) ? j.results.find(isObject) : undefined;
  if (!r || typeof r.raw_content !== 'string') {
    const failed = isObject(j) && Array.isArray(j.failed_results) ? j.failed_results.find(isObject) : undefined;
    if (failed) throw new ApiFailure(422, `Tavily could not extract the page: ${String(failed.error ?? 'failed')}`);
    throw bad('Tavily');
  }
  return { url: typeof r.url === 'string' ? r.url : url, title: null, content: r.raw_content, format: format === 'text' ? 'text' : 'markdown' };
}

async function builtin(egress: Egress, cfg: WebFetchConfig['builtin'], url: string, format: PageFormat): Promise<FetchedPage> {
  let res: UserUrlResponse;
  try {
    res = await fetchUserUrl(egress, url, { allowHttp: true, maxRedirects: 5, timeoutMs: cfg.timeoutMs, signal: AbortSignal.timeout(cfg.timeoutMs), headers: { accept: 'text/html,text/plain;q=0.9,*/*;q=0.5', 'user-agent': 'ctl-web-fetch/1' } });
  } catch (e) {
    // The SSRF policy's text: a refusal says why and how to allow it, an unreachable URL only that.
    if (e instanceof UrlRefusedError) throw new RefusedUrlFailure(400, e.message);
    throw new ApiFailure(0, `the page could not be fetched: ${(e as Error).message}`);
  }
  try {
    if (res.status < 200 || res.status >= 300) throw new ApiFailure(res.status, `the page answered HTTP ${res.status}`, retryAfterMs(res.headers['retry-after'], Date.now()));
    const len = Number(res.headers['content-length']);
    if (Number.isFinite(len) && len > cfg.maxBytes) throw new ApiFailure(413, `the page is larger than ${cfg.maxBytes} bytes`);
    const type = String(res.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const text = await readBounded(res.body, cfg.maxBytes);
    if (type === 'text/html' || type === 'application/xhtml+xml' || (type === '' && /^\s*<(!doctype html|html)/i.test(text))) return (await import('./html-page.js')).htmlToPage(text, res.url, format);
    if (type.startsWith('text/') || type === 'application/json' || type === 'application/xml') return { url: res.url, title: null, content: text, format: 'text' };
    throw new ApiFailure(415, `the page is ${type || 'of an unknown type'}, not text or HTML`);
  } finally {
    res.body.on('error', () => undefined);
    res.body.destroy();
  }
}

export function fetchWith(id: HostedFetchProvider | 'builtin', cfg: WebFetchConfig, egress: Egress, url: string, format: PageFormat): Promise<FetchedPage> {
  if (id === 'builtin') return builtin(egress, cfg.builtin, url, format);
  const c = cfg.hosted[id];
  if (!c) throw new ApiFailure(400, `web fetch provider ${id} is not configured`);
  return id === 'firecrawl' ? firecrawl(egress, c, url, format) : id === 'jina' ? jina(egress, c, url, format) : tavily(egress, c, url, format);
}
